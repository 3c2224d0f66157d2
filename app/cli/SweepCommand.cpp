#include "SweepCommand.h"

#include "ProgressPrinter.h"

#include "engine/config/DeviceInfo.h"
#include "engine/events/EventJson.h"
#include "engine/run/TechniqueLadder.h"
#include "storage/RunWriter.h"

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace hearth::cli {
namespace {

std::vector<LadderMeasure> measuresOf(const std::vector<StoredRun>& runs) {
    std::vector<LadderMeasure> measures;
    measures.reserve(runs.size());
    for (const auto& run : runs)
        measures.push_back(ladderMeasureOf(run.finished ? run.finished->train_time_s : 0.0, run.epochs));
    return measures;
}

// Speed-ups against the baseline: of the whole fit's time (validation and warm-up included), and
// steady (the last epoch's training samples/s; with two or more epochs). A rung left out of the
// steps after it is marked, with a line saying against which step it measured slower and by how much.
void printLadderTable(std::FILE* out, const std::vector<LadderStep>& steps, const std::vector<StoredRun>& runs) {
    const std::string left_out = " (left out)";
    int width = 16;
    for (const auto& step : steps)
        width = std::max(width, static_cast<int>(step.label.size() + (step.kept ? 0 : left_out.size())));
    std::fprintf(out, "\n%-*s %5s %-11s %7s %5s %10s %8s %9s %7s %9s %11s %10s\n", width, "step", "run", "precision",
                "workers", "accum", "train time", "speedup", "steady/s", "steady", "test acc", "peak memory",
                "data wait");
    const std::vector<LadderMeasure> measures = measuresOf(runs);
    const double base_time = measures.empty() ? 0.0 : measures[0].fit_s;
    const double base_steady = measures.empty() ? 0.0 : measures[0].steady_samples_per_sec;
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto& cfg = steps[i].config.trainer;
        const auto& r = runs[i];
        const auto& m = measures[i];
        const bool done = r.finished && r.finished->status == "completed";
        char steady[16] = "-", steady_speedup[16] = "-";
        if (m.steady_samples_per_sec > 0) std::snprintf(steady, sizeof steady, "%.0f", m.steady_samples_per_sec);
        if (m.steady_samples_per_sec > 0 && base_steady > 0)
            std::snprintf(steady_speedup, sizeof steady_speedup, "%.2fx", m.steady_samples_per_sec / base_steady);
        const std::string label = steps[i].label + (steps[i].kept ? "" : left_out);
        std::fprintf(out, "%-*s %5lld %-11s %7lld %5lld %10s %7.2fx %9s %7s %9s %11s %9.1f%%\n", width, label.c_str(),
                    static_cast<long long>(r.run_id), cfg.precision.c_str(), static_cast<long long>(cfg.num_workers),
                    static_cast<long long>(cfg.accumulate_grad_batches), formatDuration(m.fit_s).c_str(),
                    m.fit_s > 0 && base_time > 0 ? base_time / m.fit_s : 0.0, steady, steady_speedup,
                    done ? std::to_string(r.finished->test_accuracy).substr(0, 6).c_str() : "-",
                    r.finished ? formatBytes(r.finished->peak_memory_bytes).c_str() : "-", r.data_wait_share * 100.0);
    }
    std::fprintf(out, "(speedup: the whole fit's time against the baseline's, warm-up and validation included; "
                      "steady: the last epoch's training samples/s against the baseline's, with 2+ epochs)\n");
    for (size_t i = 0; i < runs.size(); ++i) {
        if (steps[i].kept) continue;
        const size_t ref = ladderReferenceStep(steps, i);
        std::fprintf(out, "'%s' against '%s': %s; the steps after it leave it out.\n", steps[i].label.c_str(),
                    steps[ref].label.c_str(), ladderSpeedupText(measures[i], measures[ref]).c_str());
    }
}

// The memory ladder: what each toggle saves (peak and activations against the step before) and costs
// (training time against the baseline).
void printMemoryTable(std::FILE* out, const std::vector<LadderStep>& steps, const std::vector<StoredRun>& runs) {
    int width = 16;
    for (const auto& step : steps) width = std::max(width, static_cast<int>(step.label.size()));
    std::fprintf(out, "\n%-*s %5s %11s %9s %11s %10s %10s %8s %9s\n", width, "step", "run", "peak memory", "change",
                "activations", "gradients", "train time", "time", "test acc");
    int64_t previous_peak = 0;
    const double base_time = runs.empty() || !runs[0].finished ? 0.0 : runs[0].finished->train_time_s;
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto& r = runs[i];
        const bool done = r.finished && r.finished->status == "completed";
        const MemoryBreakdown m = r.finished ? r.finished->memory : MemoryBreakdown{};
        const int64_t peak = m.peak_bytes > 0 ? m.peak_bytes : (r.finished ? r.finished->peak_memory_bytes : 0);
        char change[32] = "-";
        if (i > 0 && previous_peak > 0 && peak > 0)
            std::snprintf(change, sizeof change, "%+.1f%%", 100.0 * static_cast<double>(peak - previous_peak) /
                                                                static_cast<double>(previous_peak));
        const double t = r.finished ? r.finished->train_time_s : 0.0;
        std::fprintf(out, "%-*s %5lld %11s %9s %11s %10s %10s %7.2fx %9s\n", width, steps[i].label.c_str(),
                    static_cast<long long>(r.run_id), peak > 0 ? formatBytes(peak).c_str() : "-", change,
                    m.device.empty() ? "-" : formatBytes(m.activations_bytes).c_str(),
                    m.device.empty() ? "-" : formatBytes(m.gradients_bytes).c_str(), formatDuration(t).c_str(),
                    t > 0 && base_time > 0 ? t / base_time : 0.0,
                    done ? std::to_string(r.finished->test_accuracy).substr(0, 6).c_str() : "-");
        previous_peak = peak;
    }
    std::fprintf(out, "(peak: %s; time: training time relative to the baseline)\n",
                runs.empty() || !runs[0].finished || runs[0].finished->memory.device.rfind("cuda", 0) != 0
                    ? "the process's peak RSS during fit"
                    : "the caching allocator's peak allocated bytes during fit");
}

// Every step runs as a child `hearth-cli run --sweep ID --events` (its own launch plan: one
// process, or the local launcher of one per device): each step starts with LibTorch's process-wide
// state fresh (threads, allocators, determinism, the CUDA context), and its run id comes from
// the child's first line, never from a look at the store.
StoredRun trainStep(const ExperimentConfig& config, const std::string& db_path, int64_t sweep_id, bool quiet,
                    bool events) {
    char path[] = "/tmp/hearth-ladder-XXXXXX.json";
    const int fd = mkstemps(path, 5);
    if (fd < 0) {
        StoredRun failed;
        failed.outcome = RunOutcome{RunStatus::Failed, FailureKind::Data, "cannot write the step's config to /tmp"};
        std::fprintf(stderr, "error: %s\n", failed.outcome.message.c_str());
        return failed;
    }
    close(fd);
    std::ofstream(path) << configToJson(config) << "\n";
    const std::vector<std::string> args{"--db", db_path, "run", "--config", path, "--sweep", std::to_string(sweep_id),
                                        "--events"};
    StoredRun run = trainInChild(args, quiet, [events](const std::string& line) {
        if (!events) return;
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
    });
    std::remove(path);
    return run;
}

}  // namespace

void registerSweepCommand(CLI::App& app, SweepCommandOptions& options, const std::string& db_path, int& exit_code) {
    auto* sweep = app.add_subcommand("sweep", "Run a speed or memory study of one experiment (--ladder) as a group "
                                              "of runs");
    sweep->add_flag("--ladder{speed}", options.ladder,
                    "speed (the default): 32-true baseline -> mixed precision -> + loader workers -> + accumulation "
                    "(with --target-batch), with the GPU's rungs between; a rung that trains slower than the step "
                    "before it is left out of the steps after it. memory: gradients zeroed -> set to none -> + "
                    "in-place ReLU -> (several processes: + zero1 -> + zero2 -> + zero3) -> + activation "
                    "checkpointing")
        ->required()
        ->check(CLI::IsMember({"speed", "memory"}));
    sweep->add_option("-c,--config", options.run.config_path, "Experiment JSON file")->check(CLI::ExistingFile);
    sweep->add_option("-s,--set", options.run.overrides, "Override a config key of the base experiment")
        ->allow_extra_args(false);
    sweep->add_option("--target-batch", options.target_batch,
                      "Effective batch size for the accumulation step (a multiple of trainer.batch_size)");
    sweep->add_option("--workers", options.workers, "Loader workers for the workers step")->check(CLI::Range(1, 64));
    sweep->add_flag("-q,--quiet", options.run.quiet, "No live progress");
    sweep->add_flag("--events", options.run.events,
                    "Write the sweep's id, then each step's run id and events, as JSON lines to standard output "
                    "(implies --quiet)");
    sweep->callback([&options, &db_path, &exit_code] {
        options.run.db_path = db_path;
        exit_code = sweepCommand(options);
    });
}

int sweepCommand(const SweepCommandOptions& options) {
    const auto base = prepareConfig(options.run);
    if (!base) return kExitBadConfig;
    std::vector<LadderStep> steps;
    try {
        LadderOptions ladder_options;
        ladder_options.kind = ladderKindFromName(options.ladder).value_or(LadderKind::Speed);
        if (ladder_options.kind == LadderKind::Memory && options.target_batch)
            throw ConfigError("target-batch", "belongs to the speed ladder; the memory ladder keeps the experiment's "
                                              "batch");
        ladder_options.target_batch = options.target_batch;
        ladder_options.loader_workers = options.workers;
        steps = buildTechniqueLadder(*base, queryDeviceCapabilities(), ladder_options);
    } catch (const ConfigError& e) {
        std::fprintf(stderr, "error: --%s\n", e.what());
        return kExitBadConfig;
    }
    const bool memory = options.ladder == "memory";
    const bool events = options.run.events;
    const bool quiet = options.run.quiet || events;
    const std::string db_path = resolveDbPath(options.run);
    int64_t sweep_id = 0;
    {
        const auto writer = openWriter(db_path);
        if (!writer) return kExitBadData;
        try {
            sweep_id = writer->createSweep(base->name + (memory ? " memory ladder" : " ladder"),
                                           memory ? "memory-ladder" : "ladder");
        } catch (const std::exception& e) {
            std::fprintf(stderr, "error: the run store could not create the sweep: %s\n", e.what());
            return kExitBadData;
        }
    }   // committed and closed: the steps' processes write the store themselves
    if (events) {
        std::printf("%s\n", eventjson::sweepLine(sweep_id).c_str());
        std::fflush(stdout);
    }
    // The tables go to stdout, unless stdout carries the events.
    std::FILE* table_out = events ? stderr : stdout;
    const auto printTable = memory ? printMemoryTable : printLadderTable;
    std::vector<StoredRun> runs;
    for (size_t i = 0; i < steps.size(); ++i) {
        std::fprintf(stderr, "\n=== Ladder step %zu/%zu: %s (%s)\n", i + 1, steps.size(), steps[i].label.c_str(),
                     steps[i].change.c_str());
        runs.push_back(trainStep(steps[i].config, db_path, sweep_id, quiet, events));
        const StoredRun& step = runs.back();
        if (!memory && step.outcome.status == RunStatus::Completed) {
            const std::vector<LadderMeasure> measures = measuresOf(runs);
            if (!settleLadderStep(steps, i, measures)) {
                const size_t ref = ladderReferenceStep(steps, i);
                std::fprintf(stderr, "'%s' trained slower than '%s' (%s): the next steps leave it out.\n",
                             steps[i].label.c_str(), steps[ref].label.c_str(),
                             ladderSpeedupText(measures[i], measures[ref]).c_str());
            }
        }
        if (step.outcome.status != RunStatus::Completed) {
            if (step.run_id == 0)
                std::fprintf(stderr, "error: step '%s' failed: %s\n", steps[i].label.c_str(),
                             step.outcome.message.c_str());
            else
                std::fprintf(stderr, "error: step '%s' (run #%lld) %s%s%s\n", steps[i].label.c_str(),
                             static_cast<long long>(step.run_id),
                             step.outcome.status == RunStatus::Stopped ? "was stopped" : "failed",
                             step.outcome.message.empty() ? "" : ": ", step.outcome.message.c_str());
            std::fprintf(stderr, "Ladder ended early at step '%s'.\n", steps[i].label.c_str());
            printTable(table_out, steps, runs);
            return exitCodeFor(step.outcome);
        }
    }
    printTable(table_out, steps, runs);
    std::fprintf(table_out, "\nSweep #%lld stored in %s; compare the runs with: hearth-cli compare",
                 static_cast<long long>(sweep_id), db_path.c_str());
    for (const auto& r : runs) std::fprintf(table_out, " %lld", static_cast<long long>(r.run_id));
    std::fprintf(table_out, "\n");
    return kExitOk;
}

}  // namespace hearth::cli
