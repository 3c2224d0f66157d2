#pragma once
// The local launcher: a LocalLauncher plan (planLaunch) on one machine starts N copies of this
// hearth-cli, one per device, with torchrun's variables (localRankVariables). Like torchrun's
// agent it hosts the rendezvous TCPStore itself (port 0: no race for a port) and tells the ranks
// so (TORCHELASTIC_USE_AGENT_STORE=True), so every rank is a client under /worker/attempt_0. Each
// rank runs in its own process group, so a terminal's Ctrl+C reaches the launcher alone, which
// passes it on once; when one rank fails it stops the others (SIGTERM, then SIGKILL after a grace
// period) so that no process is left waiting in a collective. Every child it starts ends with it
// (followParentProcess).

#include "engine/run/LaunchPlan.h"

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hearth::cli {

struct LaunchResult {
    int exit_code = 0;             // rank 0's, or the first failing rank's
    int64_t failed_rank = -1;      // -1 when every rank succeeded
};

// argv: this process's own arguments (argv[1..]); the children run /proc/self/exe with them.
// log_dir (created): ranks other than 0 write their output to log_dir/rank<r>.log (rank 0 keeps
// this process's standard output and error), and every rank is told the folder
// ($HEARTH_RANK_LOG_DIR) so the run links them.
LaunchResult launchLocalRanks(const LaunchPlan& plan, const std::vector<std::string>& args, const std::string& log_dir);

// The arguments this process was started with (set once by main()).
void rememberArguments(int argc, char** argv);
const std::vector<std::string>& rememberedArguments();

// This executable's path (/proc/self/exe's target, without " (deleted)"): the children's argv[0].
std::string selfExecutable();
// What the children exec: /proc/self/exe names the file this process runs even after it was
// replaced or deleted on disk (a rebuild or an upgrade while a sweep runs), so every step of a
// ladder and every rank run the same build.
inline constexpr const char* kSelfExecutablePath = "/proc/self/exe";
// This process's environment less the variables named in `drop`, plus `set`, plus
// HEARTH_PARENT_PID naming this process (the child's followParentProcess reads it).
std::vector<std::string> childEnvironment(const std::vector<std::pair<std::string, std::string>>& set = {},
                                          const std::vector<std::string>& drop = {});
// Starts `executable` with `argv` (argv[0] included) and `env` in a process group of its own;
// stdout_fd / stderr_fd >= 0 replace its standard output / error. Throws std::runtime_error.
pid_t spawnChild(const std::string& executable, const std::vector<std::string>& argv,
                 const std::vector<std::string>& env, int stdout_fd = -1, int stderr_fd = -1);
// "exit status" of waitpid: the exit code, or 128 + the signal that ended it.
int exitCodeOf(int wait_status);

// Called first thing in main(): when a Hearth process started this one (HEARTH_PARENT_PID names
// the parent), this one is sent SIGTERM when that parent dies, so it stops after its current step
// and leaves no orphan (the workbench, a sweep and the local launcher set the variable).
void followParentProcess();

}  // namespace hearth::cli
