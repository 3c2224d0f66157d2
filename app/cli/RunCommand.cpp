#include "RunCommand.h"

#include "LocalLauncher.h"
#include "ProgressPrinter.h"

#include "engine/config/DeviceInfo.h"
#include "engine/dist/Rendezvous.h"
#include "engine/events/EventJson.h"
#include "engine/train/StateFiles.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
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

// Every event as one JSON line on stdout, flushed: what the workbench reads from the run's rank 0.
class EventLines final : public EventSink {
public:
    void onEvent(const Event& event) override {
        std::printf("%s\n", eventjson::toLine(event).c_str());
        std::fflush(stdout);
    }
};

// Collects what the CLI reports after a run (mean data-wait share over epochs).
class EpochTally final : public EventSink {
public:
    void onEvent(const Event& event) override {
        if (const auto* e = std::get_if<EpochMetrics>(&event)) {
            wait_share_sum_ += e->data_wait_share;
            ++epochs_;
        }
    }
    double meanWaitShare() const { return epochs_ ? wait_share_sum_ / static_cast<double>(epochs_) : 0.0; }
private:
    double wait_share_sum_ = 0.0;
    int64_t epochs_ = 0;
};

// The run's recorder for a resume: it holds the events back until the run was reopened (its
// state read and checked), and records no failure before that: the run then stays as it was.
class GatedRecorder final : public EventSink {
public:
    GatedRecorder(std::shared_ptr<RunWriter> writer, int64_t run_id, bool open)
        : recorder_(std::move(writer), run_id), open_(open) {}
    void onEvent(const Event& event) override {
        if (open_) {
            recorder_.onEvent(event);
        } else if (!std::holds_alternative<RunFailed>(event)) {
            pending_.push_back(event);
        }
    }
    void open() {
        open_ = true;
        for (const auto& event : pending_) recorder_.onEvent(event);
        pending_.clear();
    }
    bool isOpen() const { return open_; }
private:
    RunRecorder recorder_;
    bool open_;
    std::vector<Event> pending_;
};

}  // namespace

// A data-parallel rank other than 0 (torchrun / srun started it): it trains its share, and rank
// 0 alone records the run. Its progress stays quiet; failures are printed with the rank.
int trainWorkerRank(const ExperimentConfig& config, int64_t rank, const RunOptions& options) {
    // Its log (a file under the local launcher, torchrun's own otherwise): messages and one line
    // per epoch, each naming the rank.
    struct RankLog final : EventSink {
        explicit RankLog(int64_t r) : rank(r) {}
        void onEvent(const Event& event) override {
            if (const auto* l = std::get_if<LogLine>(&event)) {
                std::fprintf(stderr, "rank %lld: %s\n", static_cast<long long>(rank), l->text.c_str());
            } else if (const auto* e = std::get_if<EpochMetrics>(&event)) {
                std::fprintf(stderr, "rank %lld: epoch %lld done: train loss %.4f acc %.4f, val acc %.4f, %.0f samples/s\n",
                             static_cast<long long>(rank), static_cast<long long>(e->epoch) + 1, e->train_loss,
                             e->train_accuracy, e->val_accuracy, e->samples_per_sec);
            } else if (const auto* f = std::get_if<RunFinished>(&event)) {
                std::fprintf(stderr, "rank %lld: %s after %lld epoch(s)\n", static_cast<long long>(rank),
                             f->status.c_str(), static_cast<long long>(f->epochs_completed));
            }
            std::fflush(stderr);
        }
        int64_t rank;
    } log(rank);
    g_stop_requested.store(false);
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
    const RunOutcome outcome = runExperiment(config, options, log, g_stop_requested);
    if (outcome.status == RunStatus::Failed)
        std::fprintf(stderr, "error: rank %lld: %s\n", static_cast<long long>(rank), outcome.message.c_str());
    return exitCodeFor(outcome);
}

std::optional<ExperimentConfig> prepareConfig(const RunCommandOptions& options) {
    ExperimentConfig config;
    try {
        if (!options.config_path.empty()) config = loadConfigFile(options.config_path);
        for (const auto& assignment : options.overrides) applyOverride(config, assignment);
    } catch (const ConfigError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return std::nullopt;
    }
    const auto issues = validate(config, queryDeviceCapabilities());
    for (const auto& issue : issues) std::fprintf(stderr, "error: %s: %s\n", issue.key.c_str(), issue.message.c_str());
    if (!issues.empty()) return std::nullopt;
    return config;
}

std::string resolveDbPath(const RunCommandOptions& options) {
    return options.db_path.empty() ? RunStore::defaultPath() : options.db_path;
}

RankLaunch launchRanksIfNeeded(const ExperimentConfig& config, const std::string& command,
                               const std::string& db_path, const std::vector<std::string>& extra_arguments) {
    RankLaunch launch;
    const TrainerConfig trainer = resolveTrainer(config.trainer, queryDeviceCapabilities());
    if (trainer.strategy == "auto") return launch;
    try {
        launch.env = dist::readDistEnv();
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        launch.exit_code = kExitBadConfig;
        return launch;
    }
    if (!launch.env && trainer.num_nodes > 1) {
        std::fprintf(stderr, "error: trainer.num_nodes: %lld nodes need a launcher on every node (torchrun "
                             "--nnodes=%lld --nproc-per-node=N --no-python hearth-cli %s ..., or srun); "
                             "hearth-cli starts processes on this machine only\n",
                     static_cast<long long>(trainer.num_nodes), static_cast<long long>(trainer.num_nodes),
                     command.c_str());
        launch.exit_code = kExitBadConfig;
        return launch;
    }
    // Not started by a launcher and asked for several devices: be the launcher.
    if (!launch.env && trainer.devices.value_or(1) > 1) {
        try {
            std::vector<std::string> arguments = rememberedArguments();
            arguments.insert(arguments.end(), extra_arguments.begin(), extra_arguments.end());
            launch.exit_code = launchLocalRanks(*trainer.devices, arguments, rankLogFolder(db_path)).exit_code;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "error: %s\n", e.what());
            launch.exit_code = kExitTrainingFailed;
        }
    }
    return launch;
}

std::string rankLogFolder(const std::string& db_path) {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
    std::error_code ec;
    const auto db = std::filesystem::absolute(db_path, ec).lexically_normal().string();
    return db + ".artifacts/rank-logs/" + stamp + "-" + std::to_string(getpid());
}

std::shared_ptr<RunWriter> openWriter(const std::string& path) {
    try {
        return std::make_shared<RunWriter>(path);
    } catch (const StoreError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return nullptr;
    }
}

int exitCodeFor(const RunOutcome& outcome) {
    switch (outcome.status) {
    case RunStatus::Completed: return kExitOk;
    case RunStatus::Stopped: return kExitStopped;
    case RunStatus::Failed:
        switch (outcome.failure) {
        case FailureKind::Config: return kExitBadConfig;
        case FailureKind::Data: return kExitBadData;
        case FailureKind::Training: return kExitTrainingFailed;
        }
    }
    return kExitTrainingFailed;
}

namespace {

// The store could not give the run its row or its artifacts folder: the run fails as a data
// problem (exit 3) with the store's message, and a row already created is marked failed.
StoredRun storeFailure(const std::shared_ptr<RunWriter>& writer, StoredRun result, const std::string& what) {
    result.outcome.status = RunStatus::Failed;
    result.outcome.failure = FailureKind::Data;
    result.outcome.message = "the run store could not set up the run: " + what;
    std::fprintf(stderr, "error: %s\n", result.outcome.message.c_str());
    if (result.run_id > 0) {
        try {
            RunRecorder(writer, result.run_id).onEvent(RunFailed{FailureKind::Data, result.outcome.message, ""});
            writer->flush();
        } catch (const std::exception&) {
            // The row stays 'running' and shows as interrupted once this process is gone.
        }
    }
    return result;
}

}  // namespace

StoredRun trainAndStore(const ExperimentConfig& config, const std::shared_ptr<RunWriter>& writer,
                        std::optional<int64_t> sweep_id, bool quiet, bool events, const ResumeTarget* resume) {
    StoredRun result;
    RunOptions run_options;
    const std::string store_error_before = writer->lastError();
    try {
        result.run_id = resume ? resume->run_id : writer->createRun(config.name, configToJson(config), sweep_id);
        run_options.artifacts_dir = writer->artifactsDir(result.run_id);
    } catch (const std::exception& e) {
        if (resume) {   // the stored run is left as it was
            result.outcome = RunOutcome{RunStatus::Failed, FailureKind::Data, e.what()};
            result.recorded = false;
            std::fprintf(stderr, "error: %s\n", e.what());
            return result;
        }
        return storeFailure(writer, std::move(result), e.what());
    }
    auto recorder = std::make_shared<GatedRecorder>(writer, result.run_id, /*open=*/resume == nullptr);
    if (resume) {
        run_options.resume_from = resume->state_path;
        run_options.on_resume = [writer, recorder, id = result.run_id](const ResumePoint& point) {
            writer->reopenRun(id, point.loop.global_step, point.loop.epoch, point.elapsed_s);
            recorder->open();
        };
    }

    // Quiet: the printer still collects the report and the outcome, it just prints nothing.
    auto printer = std::make_shared<ProgressPrinter>(quiet ? nullptr : stderr, isatty(STDERR_FILENO) != 0);
    auto tally = std::make_shared<EpochTally>();
    std::vector<std::shared_ptr<EventSink>> sinks{recorder, tally, printer};
    if (events) {
        std::printf("%s\n", eventjson::runLine(result.run_id).c_str());
        std::fflush(stdout);
        sinks.push_back(std::make_shared<EventLines>());
    }
    EventFanout fanout(sinks);

    g_stop_requested.store(false);
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
    result.outcome = runExperiment(config, run_options, fanout, g_stop_requested);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);

    writer->flush();
    result.recorded = recorder->isOpen();
    if (quiet && result.outcome.status == RunStatus::Failed)
        std::fprintf(stderr, "error: %s\n", result.outcome.message.c_str());
    result.finished = printer->finished();
    result.test = printer->testReport();
    result.data_wait_share = tally->meanWaitShare();
    // A write that failed during the run (the writer marked the run failed): never a silent loss.
    const std::string store_error = writer->lastError();
    if (store_error != store_error_before) {
        std::fprintf(stderr, "error: the run store could not record the run: %s\n", store_error.c_str());
        if (result.outcome.status != RunStatus::Failed) {
            result.outcome.status = RunStatus::Failed;
            result.outcome.failure = FailureKind::Data;
            result.outcome.message = store_error;
        }
    }
    return result;
}

void printResumeHint(const RunWriter& writer, const StoredRun& run) {
    if (run.outcome.status == RunStatus::Completed || run.run_id <= 0) return;
    try {
        if (trainingStatesIn(writer.artifactsDir(run.run_id)).empty()) return;
    } catch (const StoreError&) {
        return;
    }
    std::fprintf(stderr, "Continue it where it ended: hearth-cli resume %lld\n", static_cast<long long>(run.run_id));
}

void registerRunCommand(CLI::App& app, RunCommandOptions& options, int& exit_code) {
    auto* run = app.add_subcommand("run", "Train an experiment (the built-in Fashion-MNIST CNN by default)");
    run->add_option("-c,--config", options.config_path, "Experiment JSON file")->check(CLI::ExistingFile);
    run->add_option("-s,--set", options.overrides, "Override a config key, e.g. trainer.precision=bf16-mixed")
        ->allow_extra_args(false);
    run->add_flag("-q,--quiet", options.quiet, "No live progress; print only the final report");
    run->add_flag("--print-config", options.print_config,
                  "Print the experiment (defaults, file and --set applied, validated) as JSON and exit");
    run->add_flag("--events", options.events,
                  "Write the run's id and every event as JSON lines to standard output (implies --quiet; "
                  "how the workbench follows a run of several processes)");
    run->add_option("--sweep", options.sweep_id, "Record the run in this sweep (an id from hearth-cli runs)");
    run->callback([&options, &exit_code] { exit_code = runCommand(options); });
}

int runCommand(const RunCommandOptions& options) {
    const auto config = prepareConfig(options);
    if (!config) return kExitBadConfig;
    if (options.print_config) {
        std::printf("%s\n", configToJson(*config).c_str());
        return kExitOk;
    }
    const RankLaunch launch = launchRanksIfNeeded(*config, "run", resolveDbPath(options));
    if (launch.exit_code) return *launch.exit_code;
    if (launch.env && launch.env->rank != 0) return trainWorkerRank(*config, launch.env->rank);
    const std::string db_path = resolveDbPath(options);
    const auto writer = openWriter(db_path);
    if (!writer) return kExitBadData;

    const bool quiet = options.quiet || options.events;
    const StoredRun run = trainAndStore(*config, writer, options.sweep_id, quiet, options.events);
    if (options.quiet && !options.events && run.test) std::printf("%s", run.test->report.toText().c_str());
    if (run.run_id > 0) {
        std::fprintf(stderr, "Run #%lld stored in %s (hearth-cli show %lld)\n", static_cast<long long>(run.run_id),
                     db_path.c_str(), static_cast<long long>(run.run_id));
        printResumeHint(*writer, run);
    }
    return exitCodeFor(run.outcome);
}

}  // namespace hearth::cli
