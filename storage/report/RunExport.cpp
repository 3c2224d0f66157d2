// File renderings of a stored run: Lightning-style metrics CSV, full JSON and Markdown (the HTML
// report is storage/report/RunPage.h).
#include "storage/report/RunReport.h"

#include "engine/data/formats/CsvReader.h"
#include "engine/events/FieldJson.h"
#include "engine/events/RunJson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace hearth::report {
namespace {

using nlohmann::json;


std::string optionalText(const std::optional<double>& v, int digits) { return v ? formatFixed(*v, digits) : "-"; }

// A report as neutral sections, rendered to Markdown.
struct Section {
    std::string title;
    std::vector<std::string> headers;              // empty: a two-column key/value table
    std::vector<std::vector<std::string>> rows;
    std::string preformatted;                      // shown verbatim after the table
};

std::vector<Section> sections(const StoredRun& run) {
    const RunSummary& s = run.summary;
    std::vector<Section> out;
    Section summary{"Summary", {}, {}, {}};
    std::string tags;
    for (const auto& t : s.tags) tags += (tags.empty() ? "" : ", ") + t;
    summary.rows = {{"Status", s.status}, {"Started", formatTime(s.started_at)}, {"Finished", formatTime(s.finished_at)},
                    {"Device", s.device.empty() ? "-" : s.device}, {"Tags", tags.empty() ? "-" : tags},
                    {"Notes", s.notes.empty() ? "-" : s.notes}};
    if (!s.failure_message.empty()) summary.rows.push_back({"Failure", s.failure_message});
    out.push_back(summary);

    Section timings{"Timings", {}, {}, {}};
    timings.rows = {{"Train time", s.train_time_s ? formatDuration(*s.train_time_s) : "-"},
                    {"Total time", s.total_time_s ? formatDuration(*s.total_time_s) : "-"},
                    {"Samples/s", optionalText(s.samples_per_sec, 0)},
                    {"Peak memory", s.peak_memory_bytes ? formatBytes(*s.peak_memory_bytes) : "-"},
                    {"Epochs", std::to_string(s.epochs_completed)},
                    {"Optimizer steps", std::to_string(s.global_steps)},
                    {"Best val acc", optionalText(s.best_val_accuracy, 4)},
                    {"Test acc", optionalText(s.test_accuracy, 4)}};
    if (!s.stop_reason.empty()) timings.rows.push_back({"Ended early", s.stop_reason});
    out.push_back(timings);

    Section config{"Config", {"Key", "Value"}, {}, {}};
    for (const auto& [k, v] : flattenJson(s.config_json)) config.rows.push_back({k, v});
    out.push_back(config);
    if (!run.started.effective.empty()) {
        Section effective{"Effective settings", {"Key", "What ran"}, {}, {}};
        for (const auto& [k, v] : run.started.effective) effective.rows.push_back({k, v});
        out.push_back(effective);
    }
    const EnvironmentInfo& e = run.started.environment;
    std::string devices;
    for (const auto& d : e.devices) devices += (devices.empty() ? "" : ", ") + d;
    out.push_back({"Environment",
                   {},
                   {{"Hearth", e.hearth_version + " " + e.git_revision},
                    {"LibTorch", e.libtorch_version},
                    {"CUDA", e.cuda_support.empty() ? "not recorded" : e.cuda_support},
                    {"OS", e.os},
                    {"CPU", e.cpu + " (" + std::to_string(e.cpu_threads) + " threads)"},
                    {"Devices", devices}},
                   {}});
    if (!run.epochs.empty()) {
        Section epochs{"Epochs", {"Epoch", "Train loss", "Train acc", "Val loss", "Val acc", "LR", "Time", "Samples/s"}, {}, {}};
        for (const auto& m : run.epochs)
            epochs.rows.push_back({std::to_string(m.epoch), formatFixed(m.train_loss, 4), formatFixed(m.train_accuracy, 4),
                                   formatFixed(m.val_loss, 4), formatFixed(m.val_accuracy, 4), formatNumber(m.lr),
                                   formatDuration(m.epoch_time_s), formatFixed(m.samples_per_sec, 0)});
        out.push_back(epochs);
    }
    if (const auto& r = run.test ? run.test : run.val) {
        out.push_back({"Classification report (" + r->split + ", loss " + formatFixed(r->loss, 4) + ")", {}, {}, r->report.toText()});
        Section confusion{"Confusion matrix (" + r->split + "; rows: true class, columns: predicted)", {""}, {}, {}};
        for (const auto& name : r->report.class_names) confusion.headers.push_back(name);
        for (size_t t = 0; t < r->report.confusion.size(); ++t) {
            std::vector<std::string> row{t < r->report.class_names.size() ? r->report.class_names[t] : std::to_string(t)};
            for (int64_t count : r->report.confusion[t]) row.push_back(std::to_string(count));
            confusion.rows.push_back(std::move(row));
        }
        out.push_back(confusion);
    }
    if (!run.artifacts.empty()) {
        Section artifacts{"Artifacts", {"Kind", "Epoch", "Size", "SHA-256", "Path"}, {}, {}};
        for (const auto& a : run.artifacts)
            artifacts.rows.push_back({a.kind, a.epoch >= 0 ? std::to_string(a.epoch) : "-", formatBytes(a.bytes), a.sha256, a.path});
        out.push_back(artifacts);
    }
    return out;
}

std::string markdownCell(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '|') out += "\\|";
        else if (c == '\n') out += "<br>";
        else out += c;
    }
    return out;
}

std::string csvNumber(double value) { return formatNumber(value); }

json summaryJson(const RunSummary& s) {
    auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
    return {{"id", s.id}, {"name", s.name}, {"status", s.status}, {"started_at", s.started_at},
            {"finished_at", s.finished_at > 0 ? json(s.finished_at) : json(nullptr)}, {"device", s.device},
            {"best_val_accuracy", opt(s.best_val_accuracy)}, {"test_accuracy", opt(s.test_accuracy)},
            {"test_loss", opt(s.test_loss)}, {"train_time_s", opt(s.train_time_s)}, {"total_time_s", opt(s.total_time_s)},
            {"samples_per_sec", opt(s.samples_per_sec)}, {"tflops", opt(s.tflops)}, {"mfu", opt(s.mfu)},
            {"peak_memory_bytes", opt(s.peak_memory_bytes)},
            {"epochs_completed", s.epochs_completed}, {"global_steps", s.global_steps}, {"tags", s.tags},
            {"notes", s.notes}, {"failure_kind", s.failure_kind}, {"failure_message", s.failure_message},
            {"stop_reason", s.stop_reason},
            {"sweep_id", opt(s.sweep_id)}, {"sweep_name", s.sweep_name}, {"pid", s.pid}, {"hostname", s.hostname}};
}

json parsedOr(const std::string& text, const json& fallback) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    return j.is_discarded() ? fallback : j;
}


void flattenConfig(const json& value, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
    if (value.is_object()) {
        for (const auto& [key, child] : value.items()) {
            std::string path = prefix;
            if (!path.empty()) path += '.';
            path += key;
            flattenConfig(child, path, out);
        }
        return;
    }
    out.emplace_back(prefix, value.is_null() ? "" : value.is_string() ? value.get<std::string>() : value.dump());
}

std::string isoTime(double unix_s) {
    if (unix_s <= 0) return "";
    const auto t = static_cast<std::time_t>(unix_s);
    std::tm utc{};
    gmtime_r(&t, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

}  // namespace

std::string historyCsv(const std::vector<RunSummary>& runs) {
    const std::vector<std::string> fixed_columns = {
        "id", "name", "status", "started_at", "finished_at", "device", "sweep_id", "sweep", "tags", "notes",
        "epochs_completed", "global_steps", "train_time_s", "total_time_s", "samples_per_sec", "tflops", "mfu",
        "peak_memory_bytes", "best_val_acc", "test_acc", "test_loss", "stop_reason", "failure_kind", "failure_message"};
    std::vector<std::vector<std::pair<std::string, std::string>>> configs;
    std::vector<std::string> keys;   // config keys in first-seen order
    for (const auto& r : runs) {
        std::vector<std::pair<std::string, std::string>> flat;
        const json parsed = json::parse(r.config_json, nullptr, /*allow_exceptions=*/false);
        if (parsed.is_object()) flattenConfig(parsed, "", flat);
        for (const auto& [key, value] : flat)
            if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
        configs.push_back(std::move(flat));
    }
    std::string out;
    for (size_t i = 0; i < fixed_columns.size(); ++i) out += (i ? "," : "") + fixed_columns[i];
    for (const auto& key : keys) out += "," + csvField("config." + key);
    out += "\n";
    const auto opt = [](const auto& v, int digits) { return v ? formatFixed(static_cast<double>(*v), digits) : std::string(); };
    for (size_t i = 0; i < runs.size(); ++i) {
        const RunSummary& r = runs[i];
        std::string tags;
        for (const auto& tag : r.tags) tags += (tags.empty() ? "" : ";") + tag;
        const std::vector<std::string> row = {
            std::to_string(r.id), r.name, r.status, isoTime(r.started_at), isoTime(r.finished_at), r.device,
            r.sweep_id ? std::to_string(*r.sweep_id) : "", r.sweep_name, tags, r.notes,
            std::to_string(r.epochs_completed), std::to_string(r.global_steps), opt(r.train_time_s, 3),
            opt(r.total_time_s, 3), opt(r.samples_per_sec, 1), opt(r.tflops, 4), opt(r.mfu, 5),
            r.peak_memory_bytes ? std::to_string(*r.peak_memory_bytes) : "", opt(r.best_val_accuracy, 6),
            opt(r.test_accuracy, 6), opt(r.test_loss, 6), r.stop_reason, r.failure_kind, r.failure_message};
        for (size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + csvField(row[c]);
        for (const auto& key : keys) {
            const auto it = std::find_if(configs[i].begin(), configs[i].end(),
                                         [&key](const auto& kv) { return kv.first == key; });
            out += "," + (it == configs[i].end() ? std::string() : csvField(it->second));
        }
        out += "\n";
    }
    return out;
}

namespace {

// The metrics CSV's columns after epoch and step: the step table's CSV names, then the epoch
// table's that the steps do not already have (lr is one column for both).
std::vector<std::string> metricColumns() {
    std::vector<std::string> columns;
    auto add = [&columns](const std::string& name) {
        if (!name.empty() && std::find(columns.begin(), columns.end(), name) == columns.end()) columns.push_back(name);
    };
    for (const auto& f : fields::stepFields()) add(f.csv);
    for (const auto& f : fields::epochFields()) add(f.csv);
    return columns;
}

// One CSV row: epoch, step (0-based, as Lightning's CSVLogger writes it), then the row's own
// fields in `columns` (the others empty).
template <typename E>
void appendCsvRow(std::string& out, int64_t epoch, int64_t global_step, const std::vector<std::string>& columns,
                  const std::vector<fields::Field<E>>& table, const E& e) {
    out += std::to_string(epoch) + "," + std::to_string(global_step - 1);
    for (const auto& column : columns) {
        out += ",";
        for (const auto& f : table)
            if (f.csv == column && f.known(e)) out += csvNumber(f.number(e));
    }
    out += "\n";
}

}  // namespace

std::string metricsCsv(const RunStore& store, int64_t run_id) {
    const auto steps = store.steps(run_id);
    const auto epochs = store.epochs(run_id);
    static const std::vector<std::string> columns = metricColumns();
    std::string out = "epoch,step";
    for (const auto& column : columns) out += "," + column;
    out += "\n";
    out.reserve(out.size() + steps.size() * 120);
    size_t e = 0;
    auto epochRow = [&](const EpochMetrics& m) {
        appendCsvRow(out, m.epoch, m.global_step, columns, fields::epochFields(), m);
    };
    for (const auto& s : steps) {
        // An epoch's row follows the last step logged before (or at) its end.
        while (e < epochs.size() && epochs[e].global_step < s.global_step) epochRow(epochs[e++]);
        appendCsvRow(out, s.epoch, s.global_step, columns, fields::stepFields(), s);
    }
    while (e < epochs.size()) epochRow(epochs[e++]);
    return out;
}

std::string runJson(const RunStore& store, int64_t run_id) {
    const StoredRun run = loadRun(store, run_id);
    json j;
    j["run"] = summaryJson(run.summary);
    j["config"] = parsedOr(run.summary.config_json, json::object());
    j["effective"] = run.started.effective;
    j["environment"] = parsedOr(runjson::environmentToJson(run.started.environment), json::object());
    j["setup"] = parsedOr(runjson::setupToJson(run.started), json::object());
    j["epochs"] = json::array();
    for (const auto& m : run.epochs) j["epochs"].push_back(fields::toJson(fields::epochFields(), m, fields::Which::Stored));
    j["steps"] = json::array();
    for (const auto& s : store.steps(run_id)) j["steps"].push_back(fields::toJson(fields::stepFields(), s, fields::Which::Stored));
    j["reports"] = json::object();
    j["predictions"] = json::object();
    for (const auto* r : {&run.val, &run.test}) {
        if (!*r) continue;
        j["reports"][(*r)->split] = {{"loss", (*r)->loss}, {"report", parsedOr((*r)->report.toJson(), json::object())}};
        json predictions = json::array();
        for (const auto& p : store.predictions(run_id, (*r)->split))
            predictions.push_back({{"index", p.index}, {"true", p.true_label}, {"predicted", p.predicted},
                                   {"confidence", p.confidence}});
        j["predictions"][(*r)->split] = std::move(predictions);
    }
    j["device_samples"] = json::array();
    for (const auto& d : store.deviceSamples(run_id)) j["device_samples"].push_back(fields::toJson(fields::deviceFields(), d, fields::Which::Stored));
    j["ranks"] = json::array();
    for (const auto& r : run.ranks) j["ranks"].push_back(fields::toJson(fields::rankFields(), r, fields::Which::Stored));
    j["logs"] = json::array();
    for (const auto& l : store.logEntries(run_id))
        j["logs"].push_back({{"level", runjson::levelName(l.level)}, {"text", l.text}});
    j["artifacts"] = json::array();
    for (const auto& a : run.artifacts)
        j["artifacts"].push_back({{"kind", a.kind}, {"path", a.path}, {"bytes", a.bytes}, {"sha256", a.sha256},
                                  {"epoch", a.epoch}, {"monitor", a.monitor}, {"value", a.value}});
    return j.dump(2) + "\n";
}

std::string runMarkdown(const StoredRun& run) {
    std::string out = "# Run #" + std::to_string(run.summary.id) + " " + markdownCell(run.summary.name) + "\n";
    for (const auto& section : sections(run)) {
        out += "\n## " + section.title + "\n\n";
        if (!section.rows.empty()) {
            const auto headers = section.headers.empty() ? std::vector<std::string>{"", ""} : section.headers;
            out += "|";
            for (const auto& h : headers) out += " " + markdownCell(h) + " |";
            out += "\n|";
            for (size_t i = 0; i < headers.size(); ++i) out += i == 0 ? "---|" : "---:|";
            out += "\n";
            for (const auto& row : section.rows) {
                out += "|";
                for (const auto& cell : row) out += " " + markdownCell(cell) + " |";
                out += "\n";
            }
        }
        if (!section.preformatted.empty()) out += "```text\n" + section.preformatted + "\n```\n";
    }
    return out;
}

}  // namespace hearth::report
