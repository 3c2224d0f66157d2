#include "LocalLauncher.h"

#include "engine/dist/Rendezvous.h"
#ifdef HEARTH_WITH_C10D
#include "engine/dist/StoreServer.h"
#endif

#include <fcntl.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, for posix_spawn

namespace hearth::cli {
namespace {

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

std::vector<std::string> childEnvironment(int64_t rank, int64_t world, int port, const std::string& log_dir,
                                          bool agent_store) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
        const std::string entry(*e);
        const std::string name = entry.substr(0, entry.find('='));
        if (name == "RANK" || name == "LOCAL_RANK" || name == "WORLD_SIZE" || name == "LOCAL_WORLD_SIZE" ||
            name == "MASTER_ADDR" || name == "MASTER_PORT" || name == dist::kRankLogDirVariable ||
            name == "TORCHELASTIC_USE_AGENT_STORE" || name == "TORCHELASTIC_RESTART_COUNT")
            continue;
        env.push_back(entry);
    }
    env.push_back("RANK=" + std::to_string(rank));
    env.push_back("LOCAL_RANK=" + std::to_string(rank));
    env.push_back("WORLD_SIZE=" + std::to_string(world));
    env.push_back("LOCAL_WORLD_SIZE=" + std::to_string(world));
    env.push_back("MASTER_ADDR=127.0.0.1");
    env.push_back("MASTER_PORT=" + std::to_string(port));
    if (!log_dir.empty()) env.push_back(std::string(dist::kRankLogDirVariable) + "=" + log_dir);
    if (agent_store) {
        // This launcher hosts the store, as torchrun's agent does: every rank is a client.
        env.emplace_back("TORCHELASTIC_USE_AGENT_STORE=True");
        env.emplace_back("TORCHELASTIC_RESTART_COUNT=0");
    }
    return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (auto& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

int exitCodeOf(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

}  // namespace

void rememberArguments(int argc, char** argv) {
    g_arguments.assign(argv + 1, argv + argc);
}

const std::vector<std::string>& rememberedArguments() {
    return g_arguments;
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

LaunchResult launchLocalRanks(int64_t world_size, const std::vector<std::string>& args, const std::string& log_dir) {
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
    char self[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) throw std::runtime_error("cannot find hearth-cli's own executable (/proc/self/exe)");
    std::vector<std::string> argv_strings{std::string(self, static_cast<size_t>(n))};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    auto argv = pointers(argv_strings);
    std::signal(SIGINT, onLauncherSignal);
    std::signal(SIGTERM, onLauncherSignal);
    for (int64_t rank = 0; rank < world_size; ++rank) {
        auto env_strings = childEnvironment(rank, world_size, port, log_dir, agent_store);
        auto env = pointers(env_strings);
        // Rank 0 keeps the terminal; the others write to their log files.
        posix_spawn_file_actions_t files;
        posix_spawn_file_actions_init(&files);
        const std::string log = logPathOf(log_dir, rank);
        if (rank > 0 && !log.empty()) {
            posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
        }
        pid_t pid = 0;
        const int rc = posix_spawn(&pid, argv_strings[0].c_str(), &files, nullptr, argv.data(), env.data());
        posix_spawn_file_actions_destroy(&files);
        if (rc != 0) {
            for (pid_t p : pids) kill(p, SIGKILL);
            throw std::runtime_error("cannot start rank " + std::to_string(rank) + ": " +
                                     std::generic_category().message(rc));
        }
        pids.push_back(pid);
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
