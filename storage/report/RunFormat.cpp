// Terminal renderings of stored runs: the runs table, `show`, and `compare`.
#include "engine/config/ExperimentConfig.h"
#include "storage/report/RunComparison.h"
#include "storage/report/RunReport.h"
#include "storage/report/TextTable.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace hearth::report {
namespace {

using nlohmann::json;

std::string accuracy(const std::optional<double>& value) { return value ? formatFixed(*value, 4) : "-"; }

std::string tagList(const std::vector<std::string>& tags) {
    std::string out;
    for (const auto& tag : tags) out += (out.empty() ? "" : ", ") + tag;
    return out;
}

void flattenInto(const json& node, const std::string& prefix, std::map<std::string, std::string>& out) {
    if (node.is_object() && !node.empty()) {
        for (const auto& [key, value] : node.items()) {
            std::string dotted = prefix;
            if (!dotted.empty()) dotted += '.';
            dotted += key;
            flattenInto(value, dotted, out);
        }
        return;
    }
    out[prefix] = node.is_string() ? node.get<std::string>() : node.dump();
}

std::string keyValueLines(const std::map<std::string, std::string>& values) {
    size_t width = 0;
    for (const auto& [key, value] : values) width = std::max(width, key.size());
    std::string out;
    for (const auto& [key, value] : values) {
        out += "  ";
        out += key;
        out.append(width - key.size(), ' ');
        out += " = ";
        out += value;
        out += '\n';
    }
    return out;
}

// `show`'s Config section: the keys the run set away from a default experiment's values (compared
// as Compare compares runs: differingSettings), or with `all` every key stored.
// The command that classifies new inputs with the run's best checkpoint, for its kind of data;
// "" when its config cannot be read.
std::string predictHint(const RunSummary& s) {
    std::string kind;
    try {
        kind = configFromJson(s.config_json).data.kind;
    } catch (const std::exception&) {
        return {};
    }
    const std::string inputs = isImageKind(kind) ? "--images FILES_OR_FOLDERS"
                               : kind == "csv"   ? "--input ROWS.csv"
                                                 : "--input TEXTS.csv";
    return "hearth-cli predict " + std::to_string(s.id) + " " + inputs + " -o predictions.csv";
}

std::string configText(const std::string& config_json, int64_t run_id, bool all) {
    const std::map<std::string, std::string> config = flattenJson(config_json);
    if (config.empty()) return "\nConfig: none stored\n";   // a run that failed before its config was read
    if (all) return "\nConfig\n" + keyValueLines(config);
    std::map<std::string, std::string> set;
    for (const auto& d : differingSettings({configToJson(ExperimentConfig{}), config_json}, /*include_name=*/true))
        if (!d.values[1].empty()) set.emplace(d.key, d.values[1]);   // "": a key this run's config lacks
    const size_t rest = config.size() - set.size();
    const std::string all_of = "`hearth-cli show " + std::to_string(run_id) + " --all` lists all " +
                               std::to_string(config.size());
    if (set.empty()) return "\nConfig: every key at its default (" + all_of + ")\n";
    return "\nConfig (the keys set; " + std::to_string(rest) + " more at their defaults: " + all_of + ")\n" +
           keyValueLines(set);
}

std::string timingsText(const StoredRun& run) {
    const RunSummary& s = run.summary;
    TextTable t({"", ""});
    auto row = [&](const std::string& name, const std::string& value) { t.addRow({name, value}); };
    row("train time", s.train_time_s ? formatDuration(*s.train_time_s) : "-");
    row("total time", s.total_time_s ? formatDuration(*s.total_time_s) : "-");
    row("samples/s", s.samples_per_sec ? formatFixed(*s.samples_per_sec, 0) : "-");
    row("model FLOPs", formatCompute(s.tflops, s.mfu));
    row("peak memory", formatPeakMemory(s.peak_memory_bytes, run.ranks.size()));
    row("epochs", std::to_string(s.epochs_completed) +
                      (run.started.max_epochs > 0 ? " of " + std::to_string(run.started.max_epochs) : ""));
    row("optimizer steps", std::to_string(s.global_steps));
    row("best val acc", accuracy(s.best_val_accuracy));
    row("test acc", accuracy(s.test_accuracy) + (s.test_loss ? " (loss " + formatFixed(*s.test_loss, 4) + ")" : ""));
    std::string text = t.render("  ");
    return text.substr(text.find('\n') + 1);   // no header row
}

std::string environmentText(const RunStarted& started) {
    const EnvironmentInfo& e = started.environment;
    if (e.hearth_version.empty() && e.libtorch_version.empty()) return "  (not recorded: the run ended before it started)\n";
    std::string devices;
    for (const auto& d : e.devices) devices += (devices.empty() ? "" : ", ") + d;
    return "  Hearth " + e.hearth_version + (e.git_revision.empty() ? "" : " (" + e.git_revision + ")") +
           ", LibTorch " + e.libtorch_version + (e.cuda_support.empty() ? "" : ", " + e.cuda_support) + "\n  " + e.os +
           "; " + e.cpu + " (" + std::to_string(e.cpu_threads) + " logical CPUs, " +
           std::to_string(e.intra_op_threads) + " intra-op threads)\n  devices: " + devices + "\n";
}

std::string epochsTable(const std::vector<EpochMetrics>& epochs) {
    TextTable t({"EPOCH", "TRAIN LOSS", "TRAIN ACC", "VAL LOSS", "VAL ACC", "LR", "TIME", "SAMPLES/S", "DATA WAIT", "BEST"});
    for (const auto& e : epochs)
        t.addRow({std::to_string(e.epoch), formatFixed(e.train_loss, 4), formatFixed(e.train_accuracy, 4), formatFixed(e.val_loss, 4),
                  formatFixed(e.val_accuracy, 4), formatNumber(e.lr), formatDuration(e.epoch_time_s),
                  formatFixed(e.samples_per_sec, 0), formatFixed(100.0 * e.data_wait_share, 1) + "%", e.is_best ? "*" : ""});
    return t.render("  ");
}

// One row per process of a data-parallel run: where it ran, how fast, where its steps went
// (data wait; gradient communication per step and the share of a step it was not hidden under
// backward), its memory (its peak, and its share of the gradients and optimizer state: a sharded
// strategy's ranks hold different parts) and its log.
std::string ranksTable(const std::vector<RankSummary>& ranks) {
    TextTable t({"RANK", "DEVICE", "PID", "SAMPLES", "TRAIN TIME", "SAMPLES/S", "DATA WAIT", "COMM/STEP",
                 "EXPOSED COMM", "PEAK MEMORY", "GRADIENTS", "OPTIMIZER STATE", "LOG"});
    for (const auto& r : ranks) {
        const double step_ms = r.steps > 0 ? r.train_time_s * 1000.0 / static_cast<double>(r.steps) : 0.0;
        const bool timed = r.comm_steps > 0 && step_ms > 0.0;
        t.addRow({std::to_string(r.rank), r.device, std::to_string(r.pid), std::to_string(r.samples),
                  formatDuration(r.train_time_s), formatFixed(r.samples_per_sec, 0),
                  r.train_time_s > 0.0 ? formatFixed(100.0 * r.data_wait_s / r.train_time_s, 1) + "%" : "-",
                  timed ? formatFixed(r.comm_ms, 1) + " ms" : "-",
                  timed ? formatFixed(100.0 * std::max(0.0, r.comm_ms - r.overlap_ms) / step_ms, 1) + "%" : "-",
                  formatBytes(r.peak_memory_bytes), formatHeldBytes(r.gradients_bytes), formatHeldBytes(r.optimizer_state_bytes),
                  r.log_path.empty() ? "-" : r.log_path});
    }
    return t.render("  ");
}

}  // namespace

StoredRun loadRun(const RunStore& store, int64_t run_id) {
    StoredRun run;
    auto summary = store.run(run_id);
    if (!summary) throw StoreError("No run #" + std::to_string(run_id) + " in '" + store.path() + "'.");
    run.summary = std::move(*summary);
    if (auto started = store.runStarted(run_id)) run.started = std::move(*started);
    run.epochs = store.epochs(run_id);
    run.val = store.report(run_id, "val");
    run.test = store.report(run_id, "test");
    run.artifacts = store.artifacts(run_id);
    run.ranks = store.ranks(run_id);
    run.memory = store.memoryBreakdown(run_id);
    run.devices = summarizeDevices(store.deviceSamples(run_id));
    return run;
}

std::string formatDuration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0.0) return "-";
    if (seconds < 60.0) return formatFixed(seconds, 1) + " s";
    const auto total = static_cast<int64_t>(std::llround(seconds));
    char buffer[64];
    if (total < 3600) {
        std::snprintf(buffer, sizeof buffer, "%lld min %02lld s", static_cast<long long>(total / 60),
                      static_cast<long long>(total % 60));
    } else {
        std::snprintf(buffer, sizeof buffer, "%lld h %02lld min", static_cast<long long>(total / 3600),
                      static_cast<long long>(total % 3600 / 60));
    }
    return buffer;
}

std::string formatFixed(double value, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return buffer;
}

std::string formatPercent(double share, int digits) { return formatFixed(100.0 * share, digits) + " %"; }

std::string runLabel(const RunSummary& run) { return "#" + std::to_string(run.id) + " " + run.name; }

std::string formatCompute(std::optional<double> tflops, std::optional<double> mfu, bool with_unit) {
    if (!tflops || *tflops < 0.0) return "-";
    std::string text = formatFixed(*tflops, *tflops >= 100.0 ? 1 : *tflops >= 1.0 ? 2 : 3) + (with_unit ? " TFLOP/s" : "");
    if (mfu && *mfu >= 0.0) {
        const double percent = 100.0 * *mfu;
        text += " (MFU " + formatFixed(percent, percent >= 1.0 ? 1 : percent >= 0.1 ? 2 : 3) + "%)";
    }
    return text;
}

std::string formatPeakMemory(std::optional<int64_t> peak, size_t processes, const std::string& none) {
    if (!peak) return none;
    return formatBytes(*peak) + (processes > 1 ? " (the largest of " + std::to_string(processes) + " processes)" : "");
}

std::string formatHeldBytes(int64_t bytes, const std::string& none) { return bytes < 0 ? none : formatBytes(bytes); }

std::string formatTime(double unix_seconds) {
    if (unix_seconds <= 0.0) return "-";
    const auto t = static_cast<std::time_t>(unix_seconds);
    std::tm local{};
    localtime_r(&t, &local);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S", &local);
    return buffer;
}

std::string formatNumber(double value) {
    if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

std::map<std::string, std::string> flattenJson(const std::string& json_text) {
    std::map<std::string, std::string> out;
    const json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) flattenInto(j, "", out);
    out.erase("");
    return out;
}

std::string runsTable(const std::vector<RunSummary>& runs) {
    // Tags beside the name, as the History has them: they tell runs of one name apart.
    TextTable t({"ID", "NAME", "TAGS", "STATUS", "STARTED", "EPOCHS", "BEST VAL ACC", "TEST ACC", "TRAIN TIME",
                 "SAMPLES/S"});
    for (const auto& r : runs)
        t.addRow({std::to_string(r.id), r.name, r.tags.empty() ? "-" : tagList(r.tags), r.status,
                  formatTime(r.started_at), std::to_string(r.epochs_completed),
                  accuracy(r.best_val_accuracy), accuracy(r.test_accuracy),
                  r.train_time_s ? formatDuration(*r.train_time_s) : "-",
                  r.samples_per_sec ? formatFixed(*r.samples_per_sec, 0) : "-"});
    return t.render();
}

std::string runText(const StoredRun& run, bool all_config) {
    const RunSummary& s = run.summary;
    std::string out = "Run " + runLabel(s) + " [" + s.status + "]\n";
    out += "  started " + formatTime(s.started_at) + ", finished " + formatTime(s.finished_at) +
           (s.device.empty() ? "" : ", device " + s.device) + "\n";
    if (!s.tags.empty()) out += "  tags: " + tagList(s.tags) + "\n";
    if (s.sweep_id) out += "  sweep: " + s.sweep_name + " (#" + std::to_string(*s.sweep_id) + ")\n";
    if (!s.notes.empty()) out += "  notes: " + s.notes + "\n";
    if (!s.failure_message.empty()) out += "  failure (" + s.failure_kind + "): " + s.failure_message + "\n";
    if (!s.stop_reason.empty()) out += "  ended after epoch " + std::to_string(s.epochs_completed) + ": " + s.stop_reason + "\n";
    out += "\nTimings\n" + timingsText(run);
    if (!run.ranks.empty()) {
        const auto& first = run.ranks.front();
        out += "\nRanks (" + std::to_string(first.world_size) + " processes, " + first.backend + ")\n" +
               ranksTable(run.ranks);
    }
    if (!run.epochs.empty()) out += "\nStep-time breakdown\n" + breakdownText(run.epochs);
    if (run.memory) {
        out += "\nMemory breakdown (at the peak" + std::string(run.ranks.empty() ? "" : ", rank 0's; every rank's "
                                                        "gradients and optimizer state are under Ranks") + ")\n" +
               memoryText(*run.memory);
    }
    if (!run.devices.empty()) out += "\nDevices\n" + devicesText(run.devices);
    out += configText(s.config_json, s.id, all_config);
    if (!run.started.effective.empty()) out += "\nEffective settings\n" + keyValueLines(run.started.effective);
    out += "\nEnvironment\n" + environmentText(run.started);
    if (!run.epochs.empty()) out += "\nEpochs\n" + epochsTable(run.epochs);
    const auto& shown = run.test ? run.test : run.val;
    if (shown) {
        out += "\nClassification report (" + shown->split + ", loss " + formatFixed(shown->loss, 4) + ")\n" +
               shown->report.toText() + "\nConfusion matrix (" + shown->split +
               "; rows: true class, columns: predicted)\n" + shown->report.confusionText();
        if (!out.empty() && out.back() != '\n') out += "\n";
    }
    if (!run.artifacts.empty()) {
        TextTable t({"ARTIFACT", "EPOCH", "SIZE", "SHA-256", "PATH"});
        for (const auto& a : run.artifacts)
            t.addRow({a.kind, a.epoch >= 0 ? std::to_string(a.epoch) : "-", formatBytes(a.bytes),
                      a.sha256.empty() ? "(unreadable)" : a.sha256.substr(0, 16), a.path});
        out += "\nArtifacts\n" + t.render("  ");
        if (const std::string use = predictHint(s); !use.empty() &&
            std::any_of(run.artifacts.begin(), run.artifacts.end(), [](const Artifact& a) { return a.kind == "checkpoint"; }))
            out += "  predict with it: " + use + "\n";
    }
    return out;
}

std::string comparisonText(const std::vector<StoredRun>& runs) {
    if (runs.empty()) return {};
    std::vector<std::string> headers{"KEY"};
    std::vector<std::string> configs;
    std::vector<std::map<std::string, std::string>> effective;
    for (const auto& r : runs) {
        headers.push_back(runLabel(r.summary));
        configs.push_back(r.summary.config_json);
        effective.push_back(r.started.effective);
    }
    // The same differences as Compare and the HTML comparison: config keys in the key table's
    // order (the run names are in the header), what ran without each run's own artifact folder.
    // A config without the key: "(unset)"; a run from before a setting was recorded: "(not recorded)".
    auto table = [&](const std::vector<SettingDifference>& differences, const std::string& missing) {
        TextTable t(headers);
        for (const auto& d : differences) {
            std::vector<std::string> row{d.key};
            for (const auto& v : d.values) row.push_back(v.empty() ? missing : v);
            t.addRow(std::move(row));
        }
        return t.render("  ");
    };
    std::string out;
    const auto config_differences = differingSettings(configs);
    out += config_differences.empty() ? "Config: identical\n"
                                      : "Config keys that differ (" + std::to_string(config_differences.size()) +
                                            ")\n" + table(config_differences, "(unset)");
    const auto effective_differences = differingEffective(effective);
    if (!effective_differences.empty())
        out += "\nEffective settings that differ\n" + table(effective_differences, "(not recorded)");

    headers[0] = "METRIC";
    TextTable metrics(headers);
    auto row = [&](const std::string& name, auto&& cell) {
        std::vector<std::string> cells{name};
        for (const auto& r : runs) cells.push_back(cell(r.summary));
        metrics.addRow(std::move(cells));
    };
    row("status", [](const RunSummary& s) { return s.status; });
    row("best val acc", [](const RunSummary& s) { return accuracy(s.best_val_accuracy); });
    row("test acc", [](const RunSummary& s) { return accuracy(s.test_accuracy); });
    row("train time", [](const RunSummary& s) { return s.train_time_s ? formatDuration(*s.train_time_s) : "-"; });
    row("samples/s", [](const RunSummary& s) { return s.samples_per_sec ? formatFixed(*s.samples_per_sec, 0) : "-"; });
    row("model FLOPs", [](const RunSummary& s) { return formatCompute(s.tflops, s.mfu); });
    row("peak memory", [](const RunSummary& s) { return s.peak_memory_bytes ? formatBytes(*s.peak_memory_bytes) : "-"; });
    row("epochs", [](const RunSummary& s) { return std::to_string(s.epochs_completed); });
    const RunSummary& base = runs.front().summary;
    row("speedup vs #" + std::to_string(base.id) + " (samples/s)", [&](const RunSummary& s) {
        const auto up = speedup(base, s);
        return up ? formatFixed(*up, 2) + "x" : std::string("-");
    });
    out += "\nMetrics\n" + metrics.render("  ");

    // Where the time went, per micro-batch, and what filled memory: the ladder's "why".
    TextTable profile(headers);
    std::vector<std::optional<StepBreakdown>> means;
    means.reserve(runs.size());
    for (const auto& r : runs) means.push_back(meanBreakdown(r.epochs));
    const auto time_parts = breakdownParts(StepBreakdown{});
    for (size_t i = 0; i < time_parts.size(); ++i) {
        std::vector<std::string> cells{time_parts[i].label + " (ms)"};
        bool any = false;
        for (const auto& m : means) {
            if (!m) { cells.push_back("-"); continue; }
            const double v = breakdownParts(*m)[i].value;
            any = any || v > 0.0;
            cells.push_back(formatFixed(v, 2));
        }
        if (any) profile.addRow(std::move(cells));
    }
    const bool any_memory = std::any_of(runs.begin(), runs.end(), [](const StoredRun& r) { return r.memory.has_value(); });
    if (any_memory) {
        std::vector<const MemoryBreakdown*> memories;
        memories.reserve(runs.size());
        for (const auto& r : runs) memories.push_back(r.memory ? &*r.memory : nullptr);
        const auto labels = memoryPartLabels(memories);
        for (size_t i = 0; i < labels.size(); ++i) {
            std::vector<std::string> cells{labels[i]};
            bool any = false;   // a part no run has (a CUDA graph pool on the CPU) gets no row
            for (const auto& r : runs) {
                const double bytes = r.memory ? memoryParts(*r.memory)[i].value : 0.0;
                any = any || bytes > 0.0;
                cells.push_back(r.memory ? formatBytes(static_cast<int64_t>(bytes)) : "-");
            }
            if (any) profile.addRow(std::move(cells));
        }
    }
    if (std::any_of(means.begin(), means.end(), [](const auto& m) { return m.has_value(); }) || any_memory)
        out += "\nStep-time breakdown (per micro-batch) and memory at the peak\n" + profile.render("  ");
    return out;
}

}  // namespace hearth::report
