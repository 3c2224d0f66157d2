#include "JobExecution.h"

#include "LocalLauncher.h"
#include "ProgressPrinter.h"

#include "engine/config/ByteSize.h"
#include "engine/config/DeviceInfo.h"
#include "engine/events/EventJson.h"
#include "engine/run/DataInputs.h"
#include "engine/train/StateFiles.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace hearth::cli {
namespace {

std::atomic<bool> g_stop_requested{false};
std::atomic<int> g_child_signal{0};

extern "C" void onInterrupt(int) {
    g_stop_requested.store(true);
    // A second Ctrl+C ends the process at once (the default action).
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    const char msg[] = "\nStopping after the current step or evaluation batch (Ctrl+C again to abort)...\n";
    [[maybe_unused]] auto n = write(STDERR_FILENO, msg, sizeof msg - 1);
}

// Ctrl+C and SIGTERM stop the job after its current step while this lives (a fresh request).
struct StopSignals {
    StopSignals() {
        g_stop_requested.store(false);
        std::signal(SIGINT, onInterrupt);
        std::signal(SIGTERM, onInterrupt);
    }
    ~StopSignals() {
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;
};

// While a child job runs: its parent passes the signal on (the child announces the stop itself).
extern "C" void onChildJobSignal(int signal) {
    g_child_signal.store(signal);
}

// Every event as one JSON line on stdout, flushed: what the workbench reads from the run's rank 0.
class EventLines final : public EventSink {
public:
    void onEvent(const Event& event) override {
        std::printf("%s\n", eventjson::toLine(event).c_str());
        std::fflush(stdout);
    }
};

// Collects the epochs' metrics, for what the CLI reports after a run (the mean data-wait share,
// the ladder's steady speed).
class EpochTally final : public EventSink {
public:
    void onEvent(const Event& event) override {
        if (const auto* e = std::get_if<EpochMetrics>(&event)) epochs_.push_back(*e);
    }
    double meanWaitShare() const {
        double sum = 0.0;
        for (const auto& e : epochs_) sum += e.data_wait_share;
        return epochs_.empty() ? 0.0 : sum / static_cast<double>(epochs_.size());
    }
    const std::vector<EpochMetrics>& epochs() const { return epochs_; }
private:
    std::vector<EpochMetrics> epochs_;
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

// Reads a child's standard output line by line until it closes, passing signals on meanwhile.
void followLines(int fd, pid_t child, const std::function<void(const std::string&)>& on_line) {
    std::string pending;
    char buffer[65536];
    for (;;) {
        if (const int sig = g_child_signal.exchange(0)) kill(child, sig);
        pollfd p{fd, POLLIN, 0};
        const int ready = poll(&p, 1, 100);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) continue;
        const ssize_t n = read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        pending.append(buffer, static_cast<size_t>(n));
        size_t start = 0;
        for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1)
            on_line(pending.substr(start, end - start));
        pending.erase(0, start);
    }
    if (!pending.empty()) on_line(pending);
}

}  // namespace

int exitCodeFor(FailureKind kind) {
    switch (kind) {
    case FailureKind::Config: return kExitBadConfig;
    case FailureKind::Data: return kExitBadData;
    case FailureKind::Training: return kExitTrainingFailed;
    }
    return kExitTrainingFailed;
}

int exitCodeFor(const RunOutcome& outcome) {
    switch (outcome.status) {
    case RunStatus::Completed: return kExitOk;
    case RunStatus::Stopped: return kExitStopped;
    case RunStatus::Failed: return exitCodeFor(outcome.failure);
    }
    return kExitTrainingFailed;
}

void printIssues(const std::vector<ConfigIssue>& issues) {
    for (const auto& issue : issues) std::fprintf(stderr, "error: %s: %s\n", issue.key.c_str(), issue.message.c_str());
}

bool inputsUsable(const ExperimentConfig& config) {
    const auto issues = dataInputProblems(config);
    printIssues(issues);
    if (!issues.empty()) {
        const std::string& key = issues.front().key;
        const bool column = key.size() > 7 && key.compare(key.size() - 7, 7, "_column") == 0;
        std::fprintf(stderr, "hint: fix %s and run again (e.g. --set %s=%s)\n",
                     issues.size() == 1 ? key.c_str() : "these keys", key.c_str(), column ? "NAME" : "PATH");
    }
    return issues.empty();
}

std::shared_ptr<RunWriter> openWriter(const std::string& path) {
    try {
        return std::make_shared<RunWriter>(path);
    } catch (const StoreError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return nullptr;
    }
}

// Its log (a file under the local launcher, torchrun's own otherwise): messages and one line per
// epoch, each naming the rank; failures are printed with the rank.
int trainWorkerRank(const ExperimentConfig& config, int64_t rank, const RunOptions& options) {
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
    const StopSignals stop_signals;
    const RunOutcome outcome = runExperiment(config, options, log, g_stop_requested);
    if (outcome.status == RunStatus::Failed)
        std::fprintf(stderr, "error: rank %lld: %s\n", static_cast<long long>(rank), outcome.message.c_str());
    return exitCodeFor(outcome);
}

StoredRun trainAndStore(const ExperimentConfig& config, const std::shared_ptr<RunWriter>& writer,
                        std::optional<int64_t> sweep_id, bool quiet, bool events, const ResumeTarget* resume) {
    StoredRun result;
    RunOptions run_options;
    const std::string store_error_before = writer->lastError();
    // Stop requests count from here: the workbench may send SIGTERM as soon as it reads the run
    // line below, and a signal before the handlers were in place would kill the job outright
    // (its row left running) instead of stopping it after its current step.
    const StopSignals stop_signals;
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

    result.outcome = runExperiment(config, run_options, fanout, g_stop_requested);

    writer->flush();
    result.recorded = recorder->isOpen();
    if (quiet && result.outcome.status == RunStatus::Failed)
        std::fprintf(stderr, "error: %s\n", result.outcome.message.c_str());
    result.finished = printer->finished();
    result.test = printer->testReport();
    result.data_wait_share = tally->meanWaitShare();
    result.epochs = tally->epochs();
    // A write that failed during the run (the writer marked the run failed): never a silent loss.
    const std::string store_error = writer->lastError();
    if (store_error != store_error_before) {
        std::fprintf(stderr, "error: the run store could not record the run: %s\n", store_error.c_str());
        if (result.outcome.status != RunStatus::Failed) {
            result.outcome.status = RunStatus::Failed;
            result.outcome.failure = FailureKind::Data;
            result.outcome.message = "the run store could not record the run: " + store_error;
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

JobStart startJob(const ExperimentConfig& config, const std::string& command, const std::string& db_path,
                  const std::vector<std::string>& extra_arguments) {
    JobStart start;
    start.plan = planLaunch(config, queryDeviceCapabilities(), dist::processEnvironment(), command);
    if (!start.plan.ok()) {
        std::fprintf(stderr, "error: %s\n", start.plan.problem.c_str());
        start.exit_code = kExitBadConfig;
        return start;
    }
    if (start.plan.mode != LaunchMode::LocalLauncher) return start;
    try {
        std::vector<std::string> arguments = rememberedArguments();
        arguments.insert(arguments.end(), extra_arguments.begin(), extra_arguments.end());
        start.exit_code = launchLocalRanks(start.plan, arguments, rankLogFolder(db_path)).exit_code;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        start.exit_code = kExitTrainingFailed;
    }
    return start;
}

std::optional<int64_t> deviceMemoryBytes(const std::string& text) {
    const auto bytes = parseByteSize(text);
    if (bytes && *bytes > 0) return bytes;
    std::fprintf(stderr, "error: --device-memory: '%s' is not a size (e.g. 16GiB, 512MiB)\n", text.c_str());
    return std::nullopt;
}

ChildConfigFile::ChildConfigFile(const ExperimentConfig& config) {
    const int fd = mkstemps(path_, 5);
    if (fd < 0) return;
    close(fd);
    std::ofstream file(path_);
    file << configToJson(config) << "\n";
    ok_ = static_cast<bool>(file);
}

ChildConfigFile::~ChildConfigFile() {
    std::remove(path_);
}

int runChild(const std::vector<std::string>& arguments, const std::function<void(const std::string&)>& on_line,
             int stderr_fd) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("cannot open a pipe to the job's process");
    const std::string self = selfExecutable();
    std::vector<std::string> argv{self};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    pid_t child = 0;
    try {
        child = spawnChild(kSelfExecutablePath, argv, childEnvironment(), fds[1], stderr_fd);
    } catch (const std::exception&) {
        close(fds[0]);
        close(fds[1]);
        throw;
    }
    close(fds[1]);
    g_child_signal.store(0);
    const auto previous_int = std::signal(SIGINT, onChildJobSignal);
    const auto previous_term = std::signal(SIGTERM, onChildJobSignal);
    followLines(fds[0], child, on_line);
    close(fds[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
        if (const int sig = g_child_signal.exchange(0)) kill(child, sig);
    }
    std::signal(SIGINT, previous_int);
    std::signal(SIGTERM, previous_term);
    return exitCodeOf(status);
}

StoredRun trainInChild(const std::vector<std::string>& arguments, bool quiet,
                       const std::function<void(const std::string&)>& on_line) {
    StoredRun result;
    result.outcome = RunOutcome{RunStatus::Failed, FailureKind::Training, ""};
    ProgressPrinter printer(quiet ? nullptr : stderr, isatty(STDERR_FILENO) != 0);
    EpochTally tally;
    std::optional<RunOutcome> verdict;
    int code = 0;
    try {
        code = runChild(arguments, [&](const std::string& line) {
            if (on_line) on_line(line);
            if (const auto id = eventjson::runIdFromLine(line)) {
                result.run_id = *id;
                return;
            }
            const auto event = eventjson::fromLine(line);
            if (!event) return;
            printer.onEvent(*event);
            tally.onEvent(*event);
            if (const auto* done = std::get_if<RunFinished>(&*event))
                verdict = RunOutcome{done->status == "stopped" ? RunStatus::Stopped : RunStatus::Completed,
                                     FailureKind::Training, ""};
            else if (const auto* failed = std::get_if<RunFailed>(&*event))
                verdict = RunOutcome{RunStatus::Failed, failed->kind, failed->message};
        });
    } catch (const std::exception& e) {
        result.outcome.message = e.what();
        std::fprintf(stderr, "error: %s\n", e.what());
        return result;
    }

    result.finished = printer.finished();
    result.test = printer.testReport();
    result.data_wait_share = tally.meanWaitShare();
    result.epochs = tally.epochs();
    // The child's exit status has the last word over a verdict it printed: a run that finished
    // but could not be stored exits 3.
    if (verdict && exitCodeFor(*verdict) == code) {
        result.outcome = *verdict;
    } else {
        result.outcome.status = code == kExitStopped ? RunStatus::Stopped : RunStatus::Failed;
        result.outcome.failure = code == kExitBadConfig ? FailureKind::Config
                                 : code == kExitBadData ? FailureKind::Data
                                                        : FailureKind::Training;
        result.outcome.message = verdict && !verdict->message.empty()
                                     ? verdict->message
                                     : "its process exited with " + std::to_string(code) +
                                           (result.run_id == 0 ? " before it recorded a run" : "");
    }
    return result;
}

}  // namespace hearth::cli
