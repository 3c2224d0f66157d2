#pragma once
// Where this process stands in a distributed run, read from the launcher's environment: Hearth's
// own local launcher and torchrun set RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
// MASTER_ADDR and MASTER_PORT (torchrun also TORCHELASTIC_USE_AGENT_STORE and
// TORCHELASTIC_RESTART_COUNT); SLURM's srun sets SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID.

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace hearth::dist {

struct DistEnv {
    int64_t rank = 0;
    int64_t local_rank = 0;
    int64_t world_size = 1;
    int64_t local_world_size = 1;
    std::string master_addr = "127.0.0.1";
    int64_t master_port = 0;
    bool agent_store = false;     // torchrun's agent hosts the store: every rank is a client
    int64_t restart_count = 0;    // torchrun: the store prefix is /worker/attempt_<n>
};

// Reads a variable; the default reads the process environment (tests pass a map).
using EnvReader = std::function<std::optional<std::string>(const std::string&)>;
EnvReader processEnvironment();

// The launcher and this build cannot work together (e.g. torchrun's store speaks a protocol this
// LibTorch's store client does not): a launch problem, reported like a bad config (exit 2), with
// what to launch instead in the message.
class LaunchError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// nullopt when no launcher set a world (a single process). Throws std::invalid_argument naming
// the variable that is missing or malformed.
std::optional<DistEnv> readDistEnv(const EnvReader& env = processEnvironment());

// Where the launcher writes rank `rank`'s output: "$HEARTH_RANK_LOG_DIR/rank<rank>.log" (Hearth's
// local launcher sets the folder for every rank); empty when no folder was given.
inline constexpr const char* kRankLogDirVariable = "HEARTH_RANK_LOG_DIR";
std::string rankLogPath(int64_t rank, const EnvReader& env = processEnvironment());

}  // namespace hearth::dist
