#include "storage/ProcessIdentity.h"

#include <cerrno>
#include <csignal>
#include <fstream>
#include <sstream>
#include <sys/types.h>
#include <unistd.h>

namespace hearth::process {

std::string hostName() {
    char buffer[256] = {};
    if (gethostname(buffer, sizeof buffer - 1) != 0) return {};
    return buffer;
}

int64_t startTicks(int64_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line)) return 0;
    // The command name (field 2) is in parentheses and may contain spaces: parse after the last ')'.
    const auto close = line.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream rest(line.substr(close + 1));
    std::string field;
    for (int i = 3; i <= 22 && (rest >> field); ++i) {
        if (i == 22) return std::stoll(field);
    }
    return 0;
}

Identity self() {
    Identity id;
    id.pid = static_cast<int64_t>(getpid());
    id.hostname = hostName();
    id.start_ticks = startTicks(id.pid);
    return id;
}

bool isGone(const Identity& writer) {
    if (writer.pid <= 0 || writer.hostname.empty() || writer.hostname != hostName()) return false;
    if (::kill(static_cast<pid_t>(writer.pid), 0) != 0 && errno == ESRCH) return true;
    if (writer.start_ticks == 0) return false;
    const int64_t now = startTicks(writer.pid);
    return now != 0 && now != writer.start_ticks;
}

}  // namespace hearth::process
