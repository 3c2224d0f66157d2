#pragma once
// `hearth-cli run`: load/override/validate a config, train it, store it, print the report.
// trainAndStore() is the one path by which the CLI trains (run and sweep use it).

#include "engine/config/ExperimentConfig.h"
#include "engine/dist/Rendezvous.h"
#include "engine/run/RunController.h"

#include <CLI/CLI.hpp>

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

struct RunCommandOptions {
    std::string config_path;
    std::vector<std::string> overrides;
    std::string db_path;   // the global --db / $HEARTH_DB
    bool quiet = false;
    bool print_config = false;   // print the effective config as JSON and exit without training
    bool events = false;         // every event as a JSON line on stdout (the workbench follows the run)
    std::optional<int64_t> sweep_id;   // record the run in this sweep (the workbench's ladder)
};

// Loads the config file (or the built-in default), applies overrides, validates. Prints every
// problem to stderr and returns nullopt when the config cannot run.
std::optional<ExperimentConfig> prepareConfig(const RunCommandOptions& options);
std::string resolveDbPath(const RunCommandOptions& options);

struct StoredRun {
    int64_t run_id = 0;
    RunOutcome outcome;
    std::optional<RunFinished> finished;
    std::optional<EvalReport> test;
    double data_wait_share = 0.0;   // mean over epochs
    bool recorded = true;           // false: a resume that failed before its run was reopened
};

// A stored run to continue (hearth-cli resume) from a training state.
struct ResumeTarget {
    int64_t run_id = 0;
    std::string state_path;
};

// Trains `config` with progress on stderr, records it through `writer`; Ctrl+C stops cleanly.
// events: also writes the run's id and every event as JSON lines to stdout (eventjson).
// resume: continues that run instead of creating one; nothing is recorded (the run stays as it
// was) until its state has been read and checked and the run reopened.
StoredRun trainAndStore(const ExperimentConfig& config, const std::shared_ptr<RunWriter>& writer,
                        std::optional<int64_t> sweep_id, bool quiet, bool events = false,
                        const ResumeTarget* resume = nullptr);
int exitCodeFor(const RunOutcome& outcome);
// A data-parallel rank other than 0 (torchrun / srun / the local launcher started it): it trains
// its share, rank 0 alone records the run (`options`: a resume's state and the run's folder).
int trainWorkerRank(const ExperimentConfig& config, int64_t rank, const RunOptions& options = {});
// "Continue it where it ended: hearth-cli resume N" for a stopped or failed run with a training state.
void printResumeHint(const RunWriter& writer, const StoredRun& run);
// Opens the writer for `path`, printing the problem and returning nullptr when it cannot.
std::shared_ptr<RunWriter> openWriter(const std::string& path);

// "<db>.artifacts/rank-logs/<UTC time>-<launcher pid>": the other ranks' logs of one launch.
std::string rankLogFolder(const std::string& db_path);

// What a command (`run`, `tune`) does with a config for several processes. With a distributed
// strategy and no launcher around it, and several devices asked for, this process becomes the
// local launcher: `exit_code` is then its ranks' result. A bad launcher environment, or several
// nodes without a launcher, also ends with an exit code (the message printed). Otherwise `env`
// is the launcher's environment (none: one process) and the command goes on.
struct RankLaunch {
    std::optional<int> exit_code;
    std::optional<dist::DistEnv> env;
};
// extra_arguments: appended to this process's arguments for the ranks it launches.
RankLaunch launchRanksIfNeeded(const ExperimentConfig& config, const std::string& command,
                               const std::string& db_path, const std::vector<std::string>& extra_arguments = {});

void registerRunCommand(CLI::App& app, RunCommandOptions& options, int& exit_code);
int runCommand(const RunCommandOptions& options);

}  // namespace hearth::cli
