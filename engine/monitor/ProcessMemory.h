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

}  // namespace hearth
