#include "RunCommand.h"

#include "ProgressPrinter.h"

#include "engine/config/DeviceInfo.h"
#include "engine/run/RunController.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <unistd.h>

namespace hearth::cli {
namespace {

std::atomic<bool> g_stop_requested{false};

extern "C" void onInterrupt(int) {
    g_stop_requested.store(true);
    // A second Ctrl+C ends the process at once (the default action).
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    const char msg[] = "\nStopping after the current step (Ctrl+C again to abort)...\n";
    [[maybe_unused]] auto n = write(STDERR_FILENO, msg, sizeof msg - 1);
}

int exitCodeFor(FailureKind kind) {
    switch (kind) {
    case FailureKind::Config: return kExitBadConfig;
    case FailureKind::Data: return kExitBadData;
    case FailureKind::Training: return kExitTrainingFailed;
    }
    return kExitTrainingFailed;
}

// Loads the config file (or the built-in default), applies --set overrides, validates.
// Prints every problem and returns false when the config cannot run.
bool prepareConfig(const RunCommandOptions& options, ExperimentConfig& config) {
    try {
        if (!options.config_path.empty()) config = loadConfigFile(options.config_path);
        for (const auto& assignment : options.overrides) applyOverride(config, assignment);
    } catch (const ConfigError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return false;
    }
    const auto issues = validate(config, queryDeviceCapabilities());
    for (const auto& issue : issues) std::fprintf(stderr, "error: %s: %s\n", issue.key.c_str(), issue.message.c_str());
    return issues.empty();
}

}  // namespace

void registerRunCommand(CLI::App& app, RunCommandOptions& options, int& exit_code) {
    auto* run = app.add_subcommand("run", "Train an experiment (the built-in Fashion-MNIST CNN by default)");
    run->add_option("-c,--config", options.config_path, "Experiment JSON file")->check(CLI::ExistingFile);
    run->add_option("-s,--set", options.overrides, "Override a config key, e.g. trainer.precision=bf16-mixed")
        ->take_all()
        ->allow_extra_args(false);
    run->add_flag("-q,--quiet", options.quiet, "Print only the final report");
    run->callback([&options, &exit_code] { exit_code = runCommand(options); });
}

int runCommand(const RunCommandOptions& options) {
    ExperimentConfig config;
    if (!prepareConfig(options, config)) return kExitBadConfig;

    const std::string db_path = options.db_path.empty() ? RunStore::defaultPath() : options.db_path;
    std::shared_ptr<RunWriter> writer;
    int64_t run_id = 0;
    try {
        writer = std::make_shared<RunWriter>(db_path);
        run_id = writer->createRun(config.name, configToJson(config));
    } catch (const StoreError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return kExitBadData;
    }

    auto printer = std::make_shared<ProgressPrinter>(stderr, !options.quiet && isatty(STDERR_FILENO));
    std::vector<std::shared_ptr<EventSink>> sinks{std::make_shared<RunRecorder>(writer, run_id)};
    if (!options.quiet) sinks.push_back(printer);
    EventFanout fanout(sinks);

    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
    RunOptions run_options;
    run_options.artifacts_dir = writer->artifactsDir(run_id);
    const RunOutcome outcome = runExperiment(config, run_options, fanout, g_stop_requested);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);

    writer->flush();
    if (options.quiet && printer->testReport()) std::printf("%s", printer->testReport()->report.toText().c_str());
    const std::string store_error = writer->lastError();
    if (!store_error.empty()) std::fprintf(stderr, "warning: the run store reported: %s\n", store_error.c_str());
    std::fprintf(stderr, "Run #%lld stored in %s (hearth-cli show %lld)\n", static_cast<long long>(run_id),
                 db_path.c_str(), static_cast<long long>(run_id));

    switch (outcome.status) {
    case RunStatus::Completed: return kExitOk;
    case RunStatus::Stopped: return kExitStopped;
    case RunStatus::Failed: return exitCodeFor(outcome.failure);
    }
    return kExitTrainingFailed;
}

}  // namespace hearth::cli
