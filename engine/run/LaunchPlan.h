#pragma once
// planLaunch: the one decision of how a job (run, resume, a sweep's step, tune) runs on this
// machine: in this process, as the local launcher of one process per device, or as one rank that a
// launcher (torchrun, srun, Hearth's own) started. Torch-free (hearth_engine_api): hearth-cli and
// the workbench both call it, and nothing else decides it.

#include "engine/config/ExperimentConfig.h"
#include "engine/dist/Rendezvous.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hearth {

enum class LaunchMode {
    ThisProcess,    // one process: this one trains and records
    LocalLauncher,  // several processes on this machine: this one starts them and trains nothing
    LaunchedRank,   // a launcher started this process as one rank of the job
};

struct LaunchPlan {
    LaunchMode mode = LaunchMode::ThisProcess;
    int64_t world_size = 1;            // processes in the whole job
    int64_t local_processes = 1;       // processes on this machine (LocalLauncher: how many it starts)
    std::optional<dist::DistEnv> env;  // LaunchedRank: what the launcher set
    // Not empty: the job cannot start as configured (a bad launcher environment, several nodes
    // without a launcher); names the setting and what to do instead. The CLI exits 2 with it.
    std::string problem;

    bool ok() const { return problem.empty(); }
    // Whether this process records the run in the store (rank 0, or the only process).
    bool records() const;
    int64_t rank() const { return env ? env->rank : 0; }
    // "this process", "2 processes on this machine", "rank 1 of 4 (started by a launcher)".
    std::string describe() const;
};

// `command` names the hearth-cli command in messages ("run", "tune", "resume").
LaunchPlan planLaunch(const ExperimentConfig& config, const DeviceCapabilities& machine,
                      const dist::EnvReader& env = dist::processEnvironment(), const std::string& command = "run");

// What a LocalLauncher plan's rank `rank` runs with, torchrun's names: RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT; HEARTH_RANK_LOG_DIR when `log_dir` is given; and, when
// the launcher hosts the rendezvous store as torchrun's agent does, TORCHELASTIC_USE_AGENT_STORE
// and TORCHELASTIC_RESTART_COUNT.
std::vector<std::pair<std::string, std::string>> localRankVariables(const LaunchPlan& plan, int64_t rank, int port,
                                                                    const std::string& log_dir, bool agent_store);
// The names localRankVariables may set: a child's environment drops inherited ones first.
const std::vector<std::string>& launchVariableNames();

}  // namespace hearth
