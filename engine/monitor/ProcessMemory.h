#pragma once
// Host memory of this process and of the machine, read from /proc (Linux).

#include <cstdint>

namespace hearth {

struct ProcessMemory {
    int64_t rss_bytes = 0;        // resident set size now (VmRSS)
    int64_t peak_rss_bytes = 0;   // high-water mark (VmHWM)
    int64_t total_ram_bytes = 0;  // physical RAM (MemTotal)
};

ProcessMemory readProcessMemory();
// Resets the process's high-water mark (VmHWM) to its current RSS, so the next peak is the
// peak of what follows (writes 5 to /proc/self/clear_refs). False where the kernel refuses.
bool resetPeakRss();

}  // namespace hearth
