#include "TuneCommand.h"

#include "LocalLauncher.h"
#include "OptionChecks.h"
#include "RunCommand.h"
#include "engine/monitor/Elapsed.h"

#include "engine/config/ByteSize.h"
#include "engine/config/DeviceInfo.h"
#include "engine/dist/Rendezvous.h"
#include "engine/run/FinderJson.h"
#include "engine/metrics/RunProfile.h"
#include "engine/run/Finders.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace hearth::cli {
namespace {

struct TuneOptions {
    RunCommandOptions config;  // --config and --set, as `run` reads them
    bool batch_size = false;
    bool lr = false;
    bool footprint = false;
    std::string device_memory;
    bool json = false;
    std::optional<int64_t> probe_batch;   // --probe-batch: one footprint probe, in this process
    std::string memory_limit;
    int64_t max_batch = 0;
    int64_t start_batch = 2;
    int64_t multiple_of = BatchSizeFinderOptions{}.multiple_of;
    double tolerance = BatchSizeFinderOptions{}.tolerance;
    std::optional<int64_t> steps;
    double min_lr = 1e-7;
    double max_lr = 1.0;
    std::string apply_path;
    bool events = false;   // progress, trials and the result as JSON lines on stdout (the workbench)
};

// Where the human-readable report goes: stdout, unless stdout carries the events.
std::FILE* reportOut(const TuneOptions& options) {
    return options.events ? stderr : stdout;
}

void emit(const finderjson::Line& line) {
    std::printf("%s\n", finderjson::toLine(line).c_str());
    std::fflush(stdout);
}

std::atomic<bool> g_tune_stop{false};

extern "C" void onTuneInterrupt(int) {
    g_tune_stop.store(true);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    const char msg[] = "\nStopping after the current step (Ctrl+C again to abort)...\n";
    [[maybe_unused]] auto n = write(STDERR_FILENO, msg, sizeof msg - 1);
}

// A progress line on a terminal (overwritten in place), or an event line; nothing when stderr is
// not a terminal.
FinderProgress terminalProgress(bool events) {
    if (events) return [](double fraction, const std::string& what) { emit(finderjson::Progress{fraction, what}); };
    if (!isatty(STDERR_FILENO)) return {};
    return [](double fraction, const std::string& what) {
        std::fprintf(stderr, "\r\033[K%3.0f%%  %s", 100.0 * fraction, what.c_str());
        if (fraction >= 1.0) std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
    };
}

std::function<void(const std::string&)> logTo(bool events) {
    if (events) return [](const std::string& line) { emit(finderjson::Log{line}); };
    return [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
}

// --apply: the experiment with the found value, as a config file the user trains with.
int applyTo(const TuneOptions& options, ExperimentConfig config, const std::string& assignment) {
    if (options.apply_path.empty()) return kExitOk;
    std::FILE* out = reportOut(options);
    try {
        applyOverride(config, assignment);
        saveConfigFile(config, options.apply_path);
    } catch (const ConfigError& e) {
        std::fprintf(stderr, "error: --apply %s: %s\n", options.apply_path.c_str(), e.what());
        return kExitBadConfig;
    }
    std::fprintf(out, "Wrote %s with %s (hearth-cli run --config %s)\n", options.apply_path.c_str(), assignment.c_str(),
                options.apply_path.c_str());
    return kExitOk;
}

// A config for several devices with a distributed strategy: as `run` does, become the local
// launcher (every rank runs the same trials or sweep and the ranks agree on each outcome), or, as
// a launched rank other than 0, tune quietly. Returns an exit code when this process is done.
std::optional<int> launchRanksIfAsked(TuneOptions& options, const ExperimentConfig& config) {
    const JobStart job = startJob(config, "tune", resolveDbPath(options.config));
    if (job.exit_code) return job.exit_code;
    if (!job.plan.records()) options.apply_path.clear();  // rank 0 writes the config
    return std::nullopt;
}

int tuneBatchSize(const TuneOptions& options, const ExperimentConfig& config) {
    std::FILE* out = reportOut(options);
    BatchSizeFinderOptions finder;
    finder.start_batch = options.start_batch;
    finder.max_batch = options.max_batch;
    finder.steps_per_trial = options.steps.value_or(3);
    finder.multiple_of = options.multiple_of;
    finder.tolerance = options.tolerance;
    const TrainerConfig trainer = resolveTrainer(config.trainer, queryDeviceCapabilities());
    const bool cpu = trainer.accelerator == "cpu" || !queryDeviceCapabilities().cuda_available;
    if (!options.memory_limit.empty()) {
        const auto bytes = parseByteSize(options.memory_limit);
        if (!bytes) {
            std::fprintf(stderr, "error: --memory-limit: '%s' is not a size (e.g. 4GiB, 512MiB)\n",
                         options.memory_limit.c_str());
            return kExitBadConfig;
        }
        finder.memory_limit_bytes = *bytes;
    } else if (cpu) {
        std::fprintf(stderr, "error: --memory-limit: on CPU there is no device memory to run out of; give the memory "
                             "a trial may use, e.g. --memory-limit 4GiB (peak RSS of this process)\n");
        return kExitBadConfig;
    }
    finder.on_log = logTo(options.events);
    const FinderProgress bar = options.events ? FinderProgress{} : terminalProgress(false);
    finder.on_progress = options.events ? terminalProgress(true) : bar;
    finder.on_trial = [&bar, out, events = options.events](const BatchSizeTrial& t) {
        if (events) emit(t);
        if (bar) bar(0.0, "");  // clears the progress line
        std::fprintf(out, "  %8lld  %-5s  %12s  %7.2f s  %s\n", static_cast<long long>(t.batch_size), t.fits ? "fits" : "oom",
                    formatBytes(t.peak_bytes).c_str(), t.seconds, t.fits ? "" : t.failure.c_str());
        std::fflush(out);
    };
    std::fprintf(out, "Batch-size finder: %s, precision %s, strategy %s, %lld steps per trial, %s\n",
                config.name.c_str(), config.trainer.precision.c_str(), trainer.strategy.c_str(),
                static_cast<long long>(finder.steps_per_trial), settlingText(finder).c_str());
    std::fprintf(out, "  %8s  %-5s  %12s  %9s\n", "batch", "trial", "peak memory", "time");
    std::fflush(out);
    const BatchSizeResult result = findBatchSize(config, finder, g_tune_stop);
    if (options.events) emit(result);
    std::fprintf(out, "Limit: %s on %s", result.limit.c_str(), result.device.c_str());
    if (result.baseline_bytes > 0)
        std::fprintf(out, "; the process held %s before the first trial", formatBytes(result.baseline_bytes).c_str());
    std::fprintf(out, "\n");
    if (result.batch_size == 0) {
        std::fprintf(out, "No batch size fits%s.\n", result.stopped ? " (stopped)" : "");
        return result.stopped ? kExitStopped : kExitTrainingFailed;
    }
    std::fprintf(out, "Largest batch that fits: %lld", static_cast<long long>(result.batch_size));
    if (result.first_failure > 0) std::fprintf(out, " (batch %lld does not)", static_cast<long long>(result.first_failure));
    if (result.first_failure == 0 && !result.bound.empty()) std::fprintf(out, " (bounded by %s)", result.bound.c_str());
    std::fprintf(out, "%s\n", result.stopped ? " (stopped early)" : "");
    const std::string assignment = "trainer.batch_size=" + std::to_string(result.batch_size);
    std::fprintf(out, "--set %s\n", assignment.c_str());
    if (result.stopped) return kExitStopped;
    return applyTo(options, config, assignment);
}

int tuneLearningRate(const TuneOptions& options, const ExperimentConfig& config) {
    std::FILE* out = reportOut(options);
    LrFinderOptions finder;
    finder.min_lr = options.min_lr;
    finder.max_lr = options.max_lr;
    finder.steps = options.steps.value_or(100);
    if (!(finder.min_lr > 0.0) || !(finder.max_lr > finder.min_lr)) {
        std::fprintf(stderr, "error: --min-lr/--max-lr: the sweep needs 0 < min-lr < max-lr (got %g and %g)\n",
                     finder.min_lr, finder.max_lr);
        return kExitBadConfig;
    }
    if (finder.steps < 2) {
        std::fprintf(stderr, "error: --steps: the sweep needs at least 2 steps\n");
        return kExitBadConfig;
    }
    finder.on_log = logTo(options.events);
    finder.on_progress = terminalProgress(options.events);
    if (options.events) finder.on_point = [](const LrPoint& p) { emit(p); };
    std::fprintf(out, "Learning-rate finder: %s, optimizer %s, lr %g to %g over %lld steps, batch %lld\n",
                config.name.c_str(), config.optimizer.name.c_str(), finder.min_lr, finder.max_lr,
                static_cast<long long>(finder.steps), static_cast<long long>(config.trainer.batch_size));
    std::fflush(out);
    const LrFinderResult result = findLearningRate(config, finder, g_tune_stop);
    if (options.events) emit(result);
    std::fprintf(out, "  %12s  %14s\n", "lr", "smoothed loss");
    for (const size_t i : summaryRows(result)) {
        const LrPoint& p = result.points[i];
        std::fprintf(out, "  %12.3e  %14.4f%s\n", p.lr, p.smoothed_loss,
                    result.suggestion_index == i ? "  <- steepest descent" : "");
    }
    if (result.diverged) {
        std::fprintf(out, "Stopped at lr %.3e: the loss diverged (over %gx its best)\n", result.points.back().lr,
                    finder.divergence);
    }
    if (!result.suggestion) {
        std::fprintf(out, "No suggestion: too few steps ran (%zu)\n", result.points.size());
        return result.stopped ? kExitStopped : kExitTrainingFailed;
    }
    char value[32];
    std::snprintf(value, sizeof value, "%.3g", *result.suggestion);
    std::fprintf(out, "Suggested learning rate: %s (steepest descent of the smoothed loss)\n", value);
    const std::string assignment = std::string("optimizer.lr=") + value;
    std::fprintf(out, "--set %s\n", assignment.c_str());
    if (result.stopped) return kExitStopped;
    return applyTo(options, config, assignment);
}

// Each probe size in a fresh process of its own (`tune --footprint --probe-batch B --json`): a probe
// after another runs in a heap the first one shaped, and its peak says more of that than of its batch.
FootprintPrediction probeInFreshProcesses(const TuneOptions& options, const ExperimentConfig& config,
                                          const FootprintOptions& probe) {
    const auto started = std::chrono::steady_clock::now();
    const ChildConfigFile file(config);
    if (!file.ok()) throw FinderError(FailureKind::Data, "cannot write the probe's config to /tmp");
    const std::vector<int64_t> sizes = footprintProbeSizes(config.trainer.batch_size);
    std::vector<FootprintProbe> probes;
    std::optional<FootprintPrediction> last;
    for (size_t i = 0; i < sizes.size() && !g_tune_stop.load(); ++i) {
        if (probe.on_progress)
            probe.on_progress(static_cast<double>(i) / static_cast<double>(sizes.size()),
                              "probe " + std::to_string(i + 1) + ": batch " + std::to_string(sizes[i]));
        std::vector<std::string> args{"--db", resolveDbPath(options.config), "tune", "--footprint", "--json",
                                      "--config", file.path(), "--probe-batch", std::to_string(sizes[i]),
                                      "--steps", std::to_string(probe.steps_per_probe)};
        if (!options.device_memory.empty()) args.insert(args.end(), {"--device-memory", options.device_memory});
        std::string json;
        int code = 0;
        try {
            code = runChild(args, [&json](const std::string& line) {
                if (!line.empty() && line.front() == '{') json = line;
            });
        } catch (const std::exception& e) {
            throw FinderError(FailureKind::Training, e.what());
        }
        if (code == kExitStopped) break;
        if (code != kExitOk || json.empty())
            throw FinderError(code == kExitBadConfig ? FailureKind::Config
                              : code == kExitBadData ? FailureKind::Data
                                                     : FailureKind::Training,
                              "the probe at batch " + std::to_string(sizes[i]) + " failed (exit status " +
                                  std::to_string(code) + ")");
        try {
            last = footprintFromJson(json);
        } catch (const std::invalid_argument& e) {
            throw FinderError(FailureKind::Training, e.what());
        }
        if (!last->probes.empty()) probes.push_back(last->probes.front());
    }
    if (probes.empty() || !last) throw FinderError(FailureKind::Training, "the probe was stopped before it measured anything");
    if (probe.on_progress) probe.on_progress(1.0, "done");
    FootprintPrediction p = extrapolateFootprint(footprintBaseOf(*last), probes, config.trainer.batch_size, last->accumulate);
    p.world_size = last->world_size;
    p.probe_s = secondsSince(started);
    return p;
}

int tuneFootprint(const TuneOptions& options, const ExperimentConfig& config) {
    std::FILE* out = options.json ? stderr : reportOut(options);
    FootprintOptions probe;
    if (options.steps) probe.steps_per_probe = *options.steps;
    if (!options.device_memory.empty()) {
        const auto bytes = deviceMemoryBytes(options.device_memory);
        if (!bytes) return kExitBadConfig;
        probe.capacity_bytes = *bytes;
    }
    probe.on_log = logTo(options.events);
    if (options.probe_batch) {
        // One probe, the prediction as JSON alone: how the footprint probes each size afresh.
        probe.batch_sizes = {*options.probe_batch};
        std::printf("%s\n", footprintJson(predictFootprint(config, probe, g_tune_stop)).c_str());
        std::fflush(stdout);
        return g_tune_stop.load() ? kExitStopped : kExitOk;
    }
    probe.on_progress = terminalProgress(options.events);
    const std::vector<int64_t> sizes = footprintProbeSizes(config.trainer.batch_size);
    std::fprintf(out, "Footprint probe: %s, precision %s, batch %lld, probed at batch", config.name.c_str(),
                 config.trainer.precision.c_str(), static_cast<long long>(config.trainer.batch_size));
    for (size_t i = 0; i < sizes.size(); ++i)
        std::fprintf(out, "%s %lld", i == 0 ? "" : (i + 1 == sizes.size() ? " and" : ","), static_cast<long long>(sizes[i]));
    std::fprintf(out, " (%lld steps each, the first a warm-up)\n", static_cast<long long>(probe.steps_per_probe));
    std::fflush(out);
    const FootprintPrediction p = probeInFreshProcesses(options, config, probe);
    // With accumulation a probe's time is a micro-batch's share of its optimizer steps.
    std::fprintf(out, "  %8s  %12s  %12s  %12s  %10s\n", "batch", "peak", "activations", "workspace",
                 p.accumulate > 1 ? "per micro" : "step");
    for (const auto& probed : p.probes)
        std::fprintf(out, "  %8lld  %12s  %12s  %12s  %7.1f ms\n", static_cast<long long>(probed.batch_size),
                     formatBytes(probed.peak_bytes).c_str(), formatBytes(probed.activations_bytes).c_str(),
                     formatBytes(probed.workspace_bytes).c_str(), probed.step_ms);
    std::fprintf(out, "Predicted at batch %lld on %s:\n", static_cast<long long>(p.batch_size), p.device.c_str());
    for (const auto& part : memoryParts(p.memory))
        if (part.value > 0.0)
            std::fprintf(out, "  %-18s %12s\n", part.label.c_str(), formatBytes(static_cast<int64_t>(part.value)).c_str());
    std::fprintf(out, "  %-18s %12s  %s\n", "peak", formatBytes(p.memory.peak_bytes).c_str(),
                 p.fits ? ("fits " + p.capacity).c_str() : ("does not fit: " + footprintVerdict(p)).c_str());
    std::fprintf(out, "  %-18s %9.1f ms  (%lld micro-batch%s)\n", "optimizer step", p.step_ms,
                 static_cast<long long>(p.accumulate), p.accumulate == 1 ? "" : "es");
    std::fprintf(out, "Probe took %.1f s (each size in a process of its own).\n", p.probe_s);
    if (options.json) {
        std::printf("%s\n", footprintJson(p).c_str());
        std::fflush(stdout);
    }
    return g_tune_stop.load() ? kExitStopped : kExitOk;
}

int tuneCommand(TuneOptions options) {
    if (int(options.batch_size) + int(options.lr) + int(options.footprint) != 1) {
        std::fprintf(stderr, "error: tune needs exactly one of --batch-size, --lr and --footprint\n");
        return kExitBadConfig;
    }
    if (options.probe_batch && !options.footprint) {
        std::fprintf(stderr, "error: --probe-batch: belongs to --footprint\n");
        return kExitBadConfig;
    }
    if (options.footprint && options.events) {
        std::fprintf(stderr, "error: --events: the finders' JSON lines; --footprint prints its prediction with --json\n");
        return kExitBadConfig;
    }
    if (options.json && !options.footprint) {
        std::fprintf(stderr, "error: --json: prints --footprint's prediction (the finders have --events)\n");
        return kExitBadConfig;
    }
    const auto loaded = prepareConfig(options.config);
    if (!loaded) return kExitBadConfig;
    if (!inputsUsable(*loaded)) return kExitBadData;
    // The footprint's probes each run as a job of their own (which launches its ranks).
    if (!options.footprint || options.probe_batch)
        if (const auto launched = launchRanksIfAsked(options, *loaded)) return *launched;
    const ExperimentConfig& config = *loaded;
    g_tune_stop.store(false);
    std::signal(SIGINT, onTuneInterrupt);
    std::signal(SIGTERM, onTuneInterrupt);
    int code = kExitOk;
    try {
        code = options.footprint    ? tuneFootprint(options, config)
               : options.batch_size ? tuneBatchSize(options, config)
                                    : tuneLearningRate(options, config);
    } catch (const FinderError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        if (options.events) emit(finderjson::Failure{e.kind(), e.what()});
        code = exitCodeFor(e.kind());
    }
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    return code;
}

}  // namespace

void registerTuneCommand(CLI::App& app, const std::string& db_path, int& exit_code) {
    auto options = std::make_shared<TuneOptions>();
    auto* tune = app.add_subcommand("tune", "Find the largest batch size that fits or a learning rate, or predict a "
                                            "run's memory and step time, for an experiment");
    tune->add_option("-c,--config", options->config.config_path, "Experiment JSON file")->check(CLI::ExistingFile);
    tune->add_option("-s,--set", options->config.overrides, "Override a config key, e.g. trainer.precision=bf16-mixed")
        ->allow_extra_args(false);
    tune->add_flag("--batch-size", options->batch_size,
                   "Batch-size finder: double the batch until a trial runs out of memory, then bisect");
    tune->add_flag("--lr", options->lr, "Learning-rate finder: an exponential LR sweep and its steepest descent");
    tune->add_flag("--footprint", options->footprint,
                   "Predict the run's peak memory by category and its step time from a short probe at a quarter and "
                   "half its batch, and whether it fits the device (or --device-memory)");
    tune->add_option("--device-memory", options->device_memory,
                     "With --footprint: the memory the run must fit into, e.g. 16GiB (default: the device's; CPU: RAM)");
    tune->add_option("--probe-batch", options->probe_batch,
                     "With --footprint: probe this one micro-batch size in this process and print what it measured "
                     "as JSON (how --footprint probes each size in a fresh process)")
        ->check(atLeast(1));
    tune->add_flag("--json", options->json,
                   "With --footprint: print the prediction as one JSON object on standard output (the report goes to "
                   "standard error)");
    tune->add_option("--memory-limit", options->memory_limit,
                     "Memory a trial may use, e.g. 4GiB (required on CPU: peak RSS; optional on CUDA: peak reserved)");
    tune->add_option("--max-batch", options->max_batch, "Largest batch size to try (default: the training split)")
        ->check(atLeast(1));
    tune->add_option("--start-batch", options->start_batch, "First batch size tried (default 2)")
        ->check(atLeast(1));
    tune->add_option("--multiple-of", options->multiple_of,
                     "Past this batch size, try only its multiples and end the bisection at a gap of at most this "
                     "(default 8; 1 with --tolerance 0 finds the exact batch)")
        ->check(atLeast(1));
    tune->add_option("--tolerance", options->tolerance,
                     "End the bisection once the gap is at most this fraction of the largest fit (default 0.05)")
        ->check(between(0.0, 0.5));
    tune->add_option("--steps", options->steps,
                     "Training steps per batch-size trial (default 3), footprint probe (default 5) or of the LR sweep "
                     "(default 100)")
        ->check(atLeast(1));
    tune->add_option("--min-lr", options->min_lr, "First learning rate of the sweep (default 1e-7)");
    tune->add_option("--max-lr", options->max_lr, "Last learning rate of the sweep (default 1)");
    tune->add_option("--apply", options->apply_path,
                     "Write the experiment with the value found to this config file");
    tune->add_flag("--events", options->events,
                   "Write progress, each trial and the result as JSON lines to standard output (the report goes "
                   "to standard error; how the workbench follows a finder)");
    tune->callback([options, &db_path, &exit_code] {
        options->config.db_path = db_path;  // parsed by then
        exit_code = tuneCommand(*options);
    });
}

}  // namespace hearth::cli
