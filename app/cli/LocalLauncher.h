#pragma once
// The local launcher: `hearth-cli run --set trainer.devices=N --set trainer.strategy=ddp` on one
// machine starts N copies of itself, one per device, with torchrun's variables (RANK, LOCAL_RANK,
// WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT). Like torchrun's agent it
// hosts the rendezvous TCPStore itself (port 0: no race for a port) and tells the ranks so
// (TORCHELASTIC_USE_AGENT_STORE=True), so every rank is a client under /worker/attempt_0. It forwards
// Ctrl+C / SIGTERM to every rank, and when one rank fails it stops the others (SIGTERM, then
// SIGKILL after a grace period) so that no process is left waiting in a collective.

#include <cstdint>
#include <string>
#include <vector>

namespace hearth::cli {

struct LaunchResult {
    int exit_code = 0;             // rank 0's, or the first failing rank's
    int64_t failed_rank = -1;      // -1 when every rank succeeded
};

// argv: this process's own arguments (argv[1..]); the children run /proc/self/exe with them.
// log_dir (created): ranks other than 0 write their output to log_dir/rank<r>.log (rank 0 keeps
// the terminal), and every rank is told the folder ($HEARTH_RANK_LOG_DIR) so the run links them.
LaunchResult launchLocalRanks(int64_t world_size, const std::vector<std::string>& args, const std::string& log_dir);

// The arguments this process was started with (set once by main()).
void rememberArguments(int argc, char** argv);
const std::vector<std::string>& rememberedArguments();

}  // namespace hearth::cli
