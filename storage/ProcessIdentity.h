#pragma once
// Who is writing a run (pid, host, process start time) and whether that writer still lives:
// a run left `running` by a process that died (kill -9, power loss) is shown as `interrupted`.

#include <cstdint>
#include <string>

namespace hearth::process {

struct Identity {
    int64_t pid = 0;
    std::string hostname;
    int64_t start_ticks = 0;   // /proc/<pid>/stat starttime (clock ticks since boot); 0 unknown
};

Identity self();
std::string hostName();
int64_t startTicks(int64_t pid);   // 0 when unknown

// True when `writer` ran on this host and is certainly gone: no such pid (ESRCH), or the pid
// now belongs to a process started at another time (pid reuse). Other hosts: false (unknown).
bool isGone(const Identity& writer);

}  // namespace hearth::process
