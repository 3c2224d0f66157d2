#include "engine/monitor/ProcessMemory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace hearth {
namespace {

// "VmRSS:	  123456 kB" -> bytes; 0 when the key is absent.
int64_t kilobyteField(const char* path, const std::string& key) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) == 0 && line.size() > key.size() && line[key.size()] == ':') {
            std::istringstream fields(line.substr(key.size() + 1));
            int64_t kb = 0;
            fields >> kb;
            return kb * 1024;
        }
    }
    return 0;
}

}  // namespace

ProcessMemory readProcessMemory() {
    ProcessMemory m;
    m.rss_bytes = kilobyteField("/proc/self/status", "VmRSS");
    m.peak_rss_bytes = kilobyteField("/proc/self/status", "VmHWM");
    m.total_ram_bytes = kilobyteField("/proc/meminfo", "MemTotal");
    return m;
}

bool resetPeakRss() {
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    out.flush();
    return static_cast<bool>(out);
}

}  // namespace hearth
