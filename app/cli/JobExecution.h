#pragma once
// The CLI's job execution: how every command that trains (run, resume, sweep, tune) carries out
// planLaunch's decision. This process trains and records (trainAndStore), trains as one rank of a
// data-parallel job (trainWorkerRank), launches one process per device (startJob), or runs a whole
// job as a child hearth-cli whose first line names its run (trainInChild: each step of a sweep).
// The commands themselves only read their arguments, call these and print.

#include "engine/config/ExperimentConfig.h"
#include "engine/run/LaunchPlan.h"
#include "engine/run/RunController.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hearth {
class RunWriter;
}

namespace hearth::cli {

// Exit codes of the CLI contract (ARCHITECTURE.md).
enum ExitCode : int { kExitOk = 0, kExitBadConfig = 2, kExitBadData = 3, kExitTrainingFailed = 4, kExitStopped = 130 };

struct StoredRun {
    int64_t run_id = 0;   // 0: the job never got its row
    RunOutcome outcome;
    std::optional<RunFinished> finished;
    std::optional<EvalReport> test;
    double data_wait_share = 0.0;   // mean over epochs
    std::vector<EpochMetrics> epochs;   // as they ended (a resume: those it trained)
    bool recorded = true;           // false: a resume that failed before its run was reopened
};

// A stored run to continue (hearth-cli resume) from a training state.
struct ResumeTarget {
    int64_t run_id = 0;
    std::string state_path;
};

int exitCodeFor(const RunOutcome& outcome);
int exitCodeFor(FailureKind kind);

// Prints each issue as "error: key: message" on stderr.
void printIssues(const std::vector<ConfigIssue>& issues);

// Whether every file and folder `config` names is there and of its kind, and a CSV's header has the
// columns the config reads (dataInputProblems); when not,
// prints each problem and a job stops with kExitBadData before it stores anything (no failed run,
// no sweep of steps that never ran).
bool inputsUsable(const ExperimentConfig& config);

// Opens the writer for `path`, printing the problem and returning nullptr when it cannot.
std::shared_ptr<RunWriter> openWriter(const std::string& path);

// Trains `config` in this process with progress on stderr, records it through `writer`; Ctrl+C
// and SIGTERM stop it after the current step. events: also writes the run's id and every event as
// JSON lines to stdout (eventjson). resume: continues that run instead of creating one; nothing is
// recorded (the run stays as it was) until its state has been read and checked and the run reopened.
StoredRun trainAndStore(const ExperimentConfig& config, const std::shared_ptr<RunWriter>& writer,
                        std::optional<int64_t> sweep_id, bool quiet, bool events = false,
                        const ResumeTarget* resume = nullptr);

// A data-parallel rank other than 0 (torchrun / srun / the local launcher started it): it trains
// its share, rank 0 alone records the run (`options`: a resume's state and the run's folder).
int trainWorkerRank(const ExperimentConfig& config, int64_t rank, const RunOptions& options = {});

// "Continue it where it ended: hearth-cli resume N" for a stopped or failed run with a training state.
void printResumeHint(const RunWriter& writer, const StoredRun& run);

// "<db>.artifacts/rank-logs/<UTC time>-<launcher pid>": the other ranks' logs of one launch.
std::string rankLogFolder(const std::string& db_path);

// What a command does with its config after planLaunch. `exit_code` set: this process is done
// (the plan was refused, with the message printed; or this process was the local launcher and its
// ranks have ended). Otherwise the command goes on as `plan` says: the only process, or one rank.
struct JobStart {
    std::optional<int> exit_code;
    LaunchPlan plan;
};
// extra_arguments: appended to this process's arguments for the ranks it launches.
JobStart startJob(const ExperimentConfig& config, const std::string& command, const std::string& db_path,
                  const std::vector<std::string>& extra_arguments = {});

// Runs `hearth-cli <arguments>` (which must include --events) as a child of this process, in its
// own process group, and follows it: the run id from its first line (never a guess from the
// store), its events into the progress printer (quiet: collected only), every line to `on_line`.
// Ctrl+C and SIGTERM here are passed on once. A child that ends without a verdict is a failed run
// whose message quotes its exit status; run_id stays 0 when it never created its row.
StoredRun trainInChild(const std::vector<std::string>& arguments, bool quiet,
                       const std::function<void(const std::string&)>& on_line = {});

// --device-memory SIZE ("16GiB"): its bytes; nullopt, with the error printed, when it is not a size.
std::optional<int64_t> deviceMemoryBytes(const std::string& text);

// A config written to a file of its own under /tmp for a child process (--config), removed with it.
class ChildConfigFile {
public:
    explicit ChildConfigFile(const ExperimentConfig& config);
    ~ChildConfigFile();
    ChildConfigFile(const ChildConfigFile&) = delete;
    ChildConfigFile& operator=(const ChildConfigFile&) = delete;
    bool ok() const { return ok_; }   // false: it could not be written
    std::string path() const { return path_; }

private:
    char path_[40] = "/tmp/hearth-job-XXXXXX.json";
    bool ok_ = false;
};

// Runs `hearth-cli <arguments>` as a child in its own process group, every line of its standard
// output to `on_line` (its standard error to stderr_fd, or this process's), Ctrl+C and SIGTERM
// passed on once; returns its exit status. Throws std::runtime_error when it cannot start.
int runChild(const std::vector<std::string>& arguments, const std::function<void(const std::string&)>& on_line,
             int stderr_fd = -1);

}  // namespace hearth::cli
