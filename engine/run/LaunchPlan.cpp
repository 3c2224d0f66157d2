#include "engine/run/LaunchPlan.h"

#include <stdexcept>

namespace hearth {

bool LaunchPlan::records() const {
    return ok() && (mode == LaunchMode::ThisProcess || (mode == LaunchMode::LaunchedRank && rank() == 0));
}

std::string LaunchPlan::describe() const {
    if (!ok()) return "cannot launch: " + problem;
    switch (mode) {
        case LaunchMode::ThisProcess:
            return "this process";
        case LaunchMode::LocalLauncher:
            return std::to_string(local_processes) + " processes on this machine";
        case LaunchMode::LaunchedRank:
            return "rank " + std::to_string(rank()) + " of " + std::to_string(world_size) + " (started by a launcher)";
    }
    return {};
}

LaunchPlan planLaunch(const ExperimentConfig& config, const DeviceCapabilities& machine, const dist::EnvReader& env,
                      const std::string& command) {
    LaunchPlan plan;
    const TrainerConfig trainer = resolveTrainer(config.trainer, machine);
    // One device in all: one process, whatever a surrounding allocation's variables say (inside an
    // sbatch script SLURM_NTASKS is the allocation's, not this job's).
    if (trainer.strategy == "auto") return plan;
    try {
        plan.env = dist::readDistEnv(env);
    } catch (const std::invalid_argument& e) {
        plan.problem = e.what();
        return plan;
    }
    if (plan.env) {
        plan.mode = LaunchMode::LaunchedRank;
        plan.world_size = plan.env->world_size;
        plan.local_processes = plan.env->local_world_size;
        return plan;
    }
    if (trainer.num_nodes > 1) {
        const std::string nodes = std::to_string(trainer.num_nodes);
        plan.problem = "trainer.num_nodes: " + nodes +
                       " nodes need a launcher on every node (torchrun --nnodes=" + nodes +
                       " --nproc-per-node=N --no-python hearth-cli " + command +
                       " ..., or srun); hearth-cli starts processes on this machine only";
        return plan;
    }
    const int64_t devices = trainer.devices.value_or(1);
    if (devices > 1) {
        plan.mode = LaunchMode::LocalLauncher;
        plan.world_size = devices;
        plan.local_processes = devices;
    }
    return plan;
}

const std::vector<std::string>& launchVariableNames() {
    static const std::vector<std::string> names{"RANK",
                                                "LOCAL_RANK",
                                                "WORLD_SIZE",
                                                "LOCAL_WORLD_SIZE",
                                                "MASTER_ADDR",
                                                "MASTER_PORT",
                                                dist::kRankLogDirVariable,
                                                "TORCHELASTIC_USE_AGENT_STORE",
                                                "TORCHELASTIC_RESTART_COUNT"};
    return names;
}

std::vector<std::pair<std::string, std::string>> localRankVariables(const LaunchPlan& plan, int64_t rank, int port,
                                                                    const std::string& log_dir, bool agent_store) {
    std::vector<std::pair<std::string, std::string>> vars{
        {"RANK", std::to_string(rank)},
        {"LOCAL_RANK", std::to_string(rank)},
        {"WORLD_SIZE", std::to_string(plan.world_size)},
        {"LOCAL_WORLD_SIZE", std::to_string(plan.local_processes)},
        {"MASTER_ADDR", "127.0.0.1"},
        {"MASTER_PORT", std::to_string(port)},
    };
    if (!log_dir.empty()) vars.emplace_back(dist::kRankLogDirVariable, log_dir);
    if (agent_store) {
        // The launcher hosts the store, as torchrun's agent does: every rank is a client.
        vars.emplace_back("TORCHELASTIC_USE_AGENT_STORE", "True");
        vars.emplace_back("TORCHELASTIC_RESTART_COUNT", "0");
    }
    return vars;
}

}  // namespace hearth
