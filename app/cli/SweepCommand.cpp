#include "SweepCommand.h"

#include "LocalLauncher.h"
#include "ProgressPrinter.h"

#include "engine/config/DeviceInfo.h"
#include "engine/run/TechniqueLadder.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace hearth::cli {
namespace {

void printLadderTable(const std::vector<LadderStep>& steps, const std::vector<StoredRun>& runs) {
    // The step column fits the longest label ("+ length bucketing").
    int width = 16;
    for (const auto& step : steps) width = std::max(width, static_cast<int>(step.label.size()));
    std::printf("\n%-*s %5s %-11s %7s %5s %10s %8s %9s %11s %10s\n", width, "step", "run", "precision", "workers",
                "accum", "train time", "speedup", "test acc", "peak memory", "data wait");
    const double base_time = runs.empty() || !runs[0].finished ? 0.0 : runs[0].finished->train_time_s;
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto& cfg = steps[i].config.trainer;
        const auto& r = runs[i];
        const bool done = r.finished && r.finished->status == "completed";
        const double t = r.finished ? r.finished->train_time_s : 0.0;
        std::printf("%-*s %5lld %-11s %7lld %5lld %10s %7.2fx %9s %11s %9.1f%%\n", width, steps[i].label.c_str(),
                    static_cast<long long>(r.run_id), cfg.precision.c_str(), static_cast<long long>(cfg.num_workers),
                    static_cast<long long>(cfg.accumulate_grad_batches), formatDuration(t).c_str(),
                    t > 0 && base_time > 0 ? base_time / t : 0.0,
                    done ? std::to_string(r.finished->test_accuracy).substr(0, 6).c_str() : "-",
                    r.finished ? formatBytes(r.finished->peak_memory_bytes).c_str() : "-", r.data_wait_share * 100.0);
    }
}

// The memory ladder: what each toggle saves (peak and activations against the step before) and costs
// (training time against the baseline).
void printMemoryTable(const std::vector<LadderStep>& steps, const std::vector<StoredRun>& runs) {
    int width = 16;
    for (const auto& step : steps) width = std::max(width, static_cast<int>(step.label.size()));
    std::printf("\n%-*s %5s %11s %9s %11s %10s %10s %8s %9s\n", width, "step", "run", "peak memory", "change",
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
        std::printf("%-*s %5lld %11s %9s %11s %10s %10s %7.2fx %9s\n", width, steps[i].label.c_str(),
                    static_cast<long long>(r.run_id), peak > 0 ? formatBytes(peak).c_str() : "-", change,
                    m.device.empty() ? "-" : formatBytes(m.activations_bytes).c_str(),
                    m.device.empty() ? "-" : formatBytes(m.gradients_bytes).c_str(), formatDuration(t).c_str(),
                    t > 0 && base_time > 0 ? t / base_time : 0.0,
                    done ? std::to_string(r.finished->test_accuracy).substr(0, 6).c_str() : "-");
        previous_peak = peak;
    }
    std::printf("(peak: %s; time: training time relative to the baseline)\n",
                runs.empty() || !runs[0].finished || runs[0].finished->memory.device.rfind("cuda", 0) != 0
                    ? "the process's peak RSS during fit"
                    : "the caching allocator's peak allocated bytes during fit");
}

// A step on several devices (the DDP step): this program's launcher starts one process per device
// with `run --sweep`, whose rank 0 records the run in the sweep; the result is read back.
StoredRun trainInProcesses(const ExperimentConfig& config, const std::string& db_path, int64_t sweep_id,
                           bool quiet, const std::shared_ptr<RunWriter>& writer) {
    StoredRun result;
    char path[] = "/tmp/hearth-ladder-XXXXXX.json";
    const int fd = mkstemps(path, 5);
    if (fd >= 0) close(fd);
    std::ofstream(path) << configToJson(config) << "\n";
    writer->flush();   // this process's runs are in the store before the ranks add theirs
    std::vector<std::string> args{"--db", db_path, "run", "--config", path, "--sweep", std::to_string(sweep_id)};
    if (quiet) args.push_back("-q");
    int exit_code = kExitTrainingFailed;
    try {
        exit_code = launchLocalRanks(config.trainer.devices.value_or(1), args, rankLogFolder(db_path)).exit_code;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
    }
    std::remove(path);
    RunStore store(db_path);
    for (const auto& run : store.listRuns()) {   // newest first: the step's run
        if (run.sweep_id != sweep_id) continue;
        result.run_id = run.id;
        result.outcome.status = run.status == "completed" ? RunStatus::Completed
                                : run.status == "stopped" ? RunStatus::Stopped
                                                          : RunStatus::Failed;
        result.outcome.message = run.failure_message;
        RunFinished finished;
        finished.status = run.status;
        finished.train_time_s = run.train_time_s.value_or(0.0);
        finished.test_accuracy = run.test_accuracy.value_or(0.0);
        finished.peak_memory_bytes = run.peak_memory_bytes.value_or(0);
        if (auto memory = store.memoryBreakdown(run.id)) finished.memory = *memory;
        result.finished = finished;
        break;
    }
    if (result.run_id == 0 || exit_code != kExitOk) result.outcome.status = RunStatus::Failed;
    return result;
}

}  // namespace

void registerSweepCommand(CLI::App& app, SweepCommandOptions& options, const std::string& db_path, int& exit_code) {
    auto* sweep = app.add_subcommand("sweep", "Run a speed or memory study of one experiment (--ladder) as a group "
                                              "of runs");
    sweep->add_flag("--ladder{speed}", options.ladder,
                    "speed (the default): 32-true baseline -> mixed precision -> + loader workers -> + accumulation "
                    "(with --target-batch); memory: gradients zeroed -> set to none -> + in-place ReLU -> + "
                    "activation checkpointing")
        ->required()
        ->check(CLI::IsMember({"speed", "memory"}));
    sweep->add_option("-c,--config", options.run.config_path, "Experiment JSON file")->check(CLI::ExistingFile);
    sweep->add_option("-s,--set", options.run.overrides, "Override a config key of the base experiment")
        ->allow_extra_args(false);
    sweep->add_option("--target-batch", options.target_batch,
                      "Effective batch size for the accumulation step (a multiple of trainer.batch_size)");
    sweep->add_option("--workers", options.workers, "Loader workers for the workers step")->check(CLI::Range(1, 64));
    sweep->add_flag("-q,--quiet", options.run.quiet, "No live progress");
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
    const std::string db_path = resolveDbPath(options.run);
    const auto writer = openWriter(db_path);
    if (!writer) return kExitBadData;

    int64_t sweep_id = 0;
    try {
        sweep_id = writer->createSweep(base->name + (memory ? " memory ladder" : " ladder"),
                                       memory ? "memory-ladder" : "ladder");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: the run store could not create the sweep: %s\n", e.what());
        return kExitBadData;
    }
    const auto printTable = memory ? printMemoryTable : printLadderTable;
    std::vector<StoredRun> runs;
    for (size_t i = 0; i < steps.size(); ++i) {
        std::fprintf(stderr, "\n=== Ladder step %zu/%zu: %s (%s)\n", i + 1, steps.size(), steps[i].label.c_str(),
                     steps[i].change.c_str());
        const auto t = resolveTrainer(steps[i].config.trainer, queryDeviceCapabilities());
        if (t.strategy != "auto" && t.devices.value_or(1) > 1)
            runs.push_back(trainInProcesses(steps[i].config, db_path, sweep_id, options.run.quiet, writer));
        else
            runs.push_back(trainAndStore(steps[i].config, writer, sweep_id, options.run.quiet));
        if (runs.back().outcome.status != RunStatus::Completed) {
            std::fprintf(stderr, "Ladder ended early at step '%s'.\n", steps[i].label.c_str());
            printTable(steps, runs);
            return exitCodeFor(runs.back().outcome);
        }
    }
    printTable(steps, runs);
    std::printf("\nSweep #%lld stored in %s; compare the runs with: hearth-cli compare", static_cast<long long>(sweep_id),
                db_path.c_str());
    for (const auto& r : runs) std::printf(" %lld", static_cast<long long>(r.run_id));
    std::printf("\n");
    return kExitOk;
}

}  // namespace hearth::cli
