#include "engine/dist/Rendezvous.h"

#include <cstdlib>
#include <stdexcept>

namespace hearth::dist {
namespace {

int64_t integer(const EnvReader& env, const std::string& name, std::optional<int64_t> fallback = std::nullopt) {
    const auto text = env(name);
    if (!text || text->empty()) {
        if (fallback) return *fallback;
        throw std::invalid_argument("distributed launch: " + name + " is not set");
    }
    try {
        size_t used = 0;
        const long long v = std::stoll(*text, &used);
        if (used != text->size() || v < 0) throw std::invalid_argument(*text);
        return v;
    } catch (const std::exception&) {
        throw std::invalid_argument("distributed launch: " + name + "='" + *text + "' is not a whole number");
    }
}

void check(const DistEnv& e) {
    if (e.world_size < 1) throw std::invalid_argument("distributed launch: WORLD_SIZE must be at least 1");
    if (e.rank >= e.world_size)
        throw std::invalid_argument("distributed launch: RANK " + std::to_string(e.rank) + " is outside WORLD_SIZE " +
                                    std::to_string(e.world_size));
    if (e.local_rank >= e.local_world_size)
        throw std::invalid_argument("distributed launch: LOCAL_RANK " + std::to_string(e.local_rank) +
                                    " is outside LOCAL_WORLD_SIZE " + std::to_string(e.local_world_size));
    if (e.world_size > 1 && (e.master_port < 1 || e.master_port > 65535))
        throw std::invalid_argument("distributed launch: MASTER_PORT must be a port number (1-65535)");
}

}  // namespace

EnvReader processEnvironment() {
    return [](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): read at start-up
        return v ? std::optional<std::string>(v) : std::nullopt;
    };
}

std::optional<DistEnv> readDistEnv(const EnvReader& env) {
    DistEnv e;
    if (env("WORLD_SIZE") && env("RANK")) {
        // torchrun, or Hearth's local launcher (which sets the same variables).
        e.rank = integer(env, "RANK");
        e.world_size = integer(env, "WORLD_SIZE");
        e.local_rank = integer(env, "LOCAL_RANK", e.rank);
        e.local_world_size = integer(env, "LOCAL_WORLD_SIZE", e.world_size);
        e.master_addr = env("MASTER_ADDR").value_or("127.0.0.1");
        e.master_port = integer(env, "MASTER_PORT", e.world_size == 1 ? std::optional<int64_t>(0) : std::nullopt);
        const auto agent = env("TORCHELASTIC_USE_AGENT_STORE");
        e.agent_store = agent && (*agent == "True" || *agent == "true" || *agent == "1");
        e.restart_count = integer(env, "TORCHELASTIC_RESTART_COUNT", 0);
    } else if (env("SLURM_PROCID") && env("SLURM_NTASKS")) {
        e.rank = integer(env, "SLURM_PROCID");
        e.world_size = integer(env, "SLURM_NTASKS");
        e.local_rank = integer(env, "SLURM_LOCALID", 0);
        e.local_world_size = integer(env, "SLURM_NTASKS_PER_NODE", e.world_size);
        // The first host of the allocation hosts the store; the job script exports it
        // (MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)).
        const auto addr = env("MASTER_ADDR");
        if (!addr) {
            throw std::invalid_argument(
                "distributed launch: under SLURM set MASTER_ADDR to the first node, e.g. "
                "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1)");
        }
        e.master_addr = *addr;
        e.master_port = integer(env, "MASTER_PORT", 29500);
    } else {
        return std::nullopt;
    }
    check(e);
    return e;
}

std::string rankLogPath(int64_t rank, const EnvReader& env) {
    const auto dir = env(kRankLogDirVariable);
    if (!dir || dir->empty()) return "";
    return *dir + "/rank" + std::to_string(rank) + ".log";
}

}  // namespace hearth::dist
