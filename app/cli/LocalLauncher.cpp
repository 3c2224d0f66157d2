#include "LocalLauncher.h"

#include "engine/dist/Rendezvous.h"
#ifdef HEARTH_WITH_C10D
#include "engine/dist/StoreServer.h"
#endif

#include <fcntl.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, for posix_spawn

namespace hearth::cli {
namespace {

constexpr const char* kParentPidVariable = "HEARTH_PARENT_PID";

std::vector<std::string> g_arguments;
std::atomic<int> g_forward_signal{0};

extern "C" void onLauncherSignal(int signal) {
    g_forward_signal.store(signal);
}

#ifndef HEARTH_WITH_C10D
// A port free a moment ago: the kernel's pick for port 0 on the loopback interface.
int freeLoopbackPort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::runtime_error("cannot open a socket: " + std::generic_category().message(errno));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
    close(fd);
    if (!ok) throw std::runtime_error("cannot find a free port on 127.0.0.1");
    return ntohs(addr.sin_port);
}
#endif

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (auto& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

// The file rank `rank` writes to: what the run records too (dist::rankLogPath).
std::string logPathOf(const std::string& log_dir, int64_t rank) {
    return dist::rankLogPath(rank, [&](const std::string&) { return std::optional<std::string>(log_dir); });
}

// The last lines of a rank's log, for the terminal when that rank failed.
std::string tailOf(const std::string& path, size_t lines) {
    std::ifstream in(path);
    std::deque<std::string> last;
    for (std::string line; std::getline(in, line);) {
        last.push_back(line);
        if (last.size() > lines) last.pop_front();
    }
    std::string out;
    for (const auto& line : last) out += "  | " + line + "\n";
    return out;
}

}  // namespace

int exitCodeOf(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

void rememberArguments(int argc, char** argv) {
    g_arguments.assign(argv + 1, argv + argc);
}

const std::vector<std::string>& rememberedArguments() {
    return g_arguments;
}

std::string selfExecutable() {
    char self[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) throw std::runtime_error("cannot find hearth-cli's own executable (/proc/self/exe)");
    std::string path(self, static_cast<size_t>(n));
    const std::string deleted = " (deleted)";
    if (path.size() > deleted.size() && path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0)
        path.resize(path.size() - deleted.size());
    return path;
}

std::vector<std::string> childEnvironment(const std::vector<std::pair<std::string, std::string>>& set,
                                          const std::vector<std::string>& drop) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
        const std::string entry(*e);
        const std::string name = entry.substr(0, entry.find('='));
        const bool replaced = name == kParentPidVariable ||
                              std::find(drop.begin(), drop.end(), name) != drop.end() ||
                              std::any_of(set.begin(), set.end(), [&](const auto& v) { return v.first == name; });
        if (!replaced) env.push_back(entry);
    }
    for (const auto& [name, value] : set) {
        std::string entry = name;
        entry += '=';
        entry += value;
        env.push_back(std::move(entry));
    }
    env.push_back(std::string(kParentPidVariable) + "=" + std::to_string(getpid()));
    return env;
}

pid_t spawnChild(const std::string& executable, const std::vector<std::string>& argv,
                 const std::vector<std::string>& env, int stdout_fd, int stderr_fd) {
    std::vector<std::string> argv_strings = argv;
    std::vector<std::string> env_strings = env;
    auto argv_pointers = pointers(argv_strings);
    auto env_pointers = pointers(env_strings);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&files, stdout_fd, STDOUT_FILENO);
    if (stderr_fd >= 0) posix_spawn_file_actions_adddup2(&files, stderr_fd, STDERR_FILENO);
    // A group of its own: a terminal's Ctrl+C reaches the parent alone, which passes it on once
    // (a child that got it from both would take the second as "abort now").
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, executable.c_str(), &files, &attributes, argv_pointers.data(), env_pointers.data());
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attributes);
    if (rc != 0) throw std::runtime_error("cannot start " + argv.front() + ": " + std::generic_category().message(rc));
    return pid;
}

void followParentProcess() {
    // Read once in main() before any thread starts.
    const char* parent = std::getenv(kParentPidVariable);  // NOLINT(concurrency-mt-unsafe)
    if (!parent) return;
    char* end = nullptr;
    const long pid = std::strtol(parent, &end, 10);
    // Only the process that named itself: a grandchild that inherited the variable keeps its own
    // parent's (which set the variable anew if it is a Hearth process).
    if (end == parent || *end != '\0' || pid != static_cast<long>(getppid())) return;
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != static_cast<pid_t>(pid)) std::raise(SIGTERM);   // it died before prctl
}

LaunchResult launchLocalRanks(const LaunchPlan& plan, const std::vector<std::string>& args, const std::string& log_dir) {
    const int64_t world_size = plan.local_processes;
    if (!log_dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(log_dir, ec);
        if (ec) throw std::runtime_error("cannot create the folder for the ranks' logs '" + log_dir + "': " + ec.message());
    }
#ifdef HEARTH_WITH_C10D
    // The store lives here for the whole run (port 0: the kernel picks a free one).
    const dist::StoreServer store(std::chrono::seconds(300));
    const int port = store.port();
    const bool agent_store = true;
#else
    const int port = freeLoopbackPort();
    const bool agent_store = false;
#endif
    std::vector<pid_t> pids;
    // The executable itself, resolved now: the children run the same binary with the same arguments.
    const std::string self = selfExecutable();
    std::vector<std::string> argv{self};
    argv.insert(argv.end(), args.begin(), args.end());
    std::signal(SIGINT, onLauncherSignal);
    std::signal(SIGTERM, onLauncherSignal);
    for (int64_t rank = 0; rank < world_size; ++rank) {
        const auto env = childEnvironment(localRankVariables(plan, rank, port, log_dir, agent_store),
                                          launchVariableNames());
        // Rank 0 keeps this process's output (the terminal, or the pipe of whoever follows the
        // job); the others write to their log files.
        int log_fd = -1;
        const std::string log = logPathOf(log_dir, rank);
        if (rank > 0 && !log.empty()) log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        try {
            pids.push_back(spawnChild(kSelfExecutablePath, argv, env, log_fd, log_fd));
        } catch (const std::exception& e) {
            if (log_fd >= 0) close(log_fd);
            for (pid_t p : pids) kill(p, SIGKILL);
            throw std::runtime_error("cannot start rank " + std::to_string(rank) + ": " + e.what());
        }
        if (log_fd >= 0) close(log_fd);
    }
    std::fprintf(stderr, "Started %lld processes (ranks 0-%lld, rendezvous 127.0.0.1:%d)%s%s\n",
                 static_cast<long long>(world_size), static_cast<long long>(world_size - 1), port,
                 log_dir.empty() ? "" : "; the other ranks log to ", log_dir.c_str());

    LaunchResult result;
    std::vector<bool> running(pids.size(), true);
    size_t left = pids.size();
    std::chrono::steady_clock::time_point kill_after{};
    bool stopping = false;
    while (left > 0) {
        if (const int sig = g_forward_signal.exchange(0)) {
            for (size_t i = 0; i < pids.size(); ++i)
                if (running[i]) kill(pids[i], sig);
        }
        int status = 0;
        const pid_t done = waitpid(-1, &status, WNOHANG);
        if (done > 0) {
            for (size_t i = 0; i < pids.size(); ++i) {
                if (pids[i] != done) continue;
                running[i] = false;
                --left;
                const int code = exitCodeOf(status);
                if (i == 0 && result.failed_rank < 0) result.exit_code = code;
                if (code != 0 && code != 130 && result.failed_rank < 0) {
                    result.failed_rank = static_cast<int64_t>(i);
                    result.exit_code = code;
                    if (i > 0 && !log_dir.empty()) {
                        const std::string log = logPathOf(log_dir, static_cast<int64_t>(i));
                        std::fprintf(stderr, "error: rank %zu exited with %d; the end of its log (%s):\n%s", i, code,
                                     log.c_str(), tailOf(log, 8).c_str());
                    }
                    if (left > 0) {
                        std::fprintf(stderr, "error: rank %zu exited with %d; stopping the other ranks\n", i, code);
                        for (size_t j = 0; j < pids.size(); ++j)
                            if (running[j]) kill(pids[j], SIGTERM);
                        stopping = true;
                        kill_after = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                    }
                }
            }
            continue;
        }
        if (stopping && std::chrono::steady_clock::now() > kill_after) {
            for (size_t j = 0; j < pids.size(); ++j)
                if (running[j]) kill(pids[j], SIGKILL);
            stopping = false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    return result;
}

}  // namespace hearth::cli
