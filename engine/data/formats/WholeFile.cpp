#include "engine/data/formats/WholeFile.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <unistd.h>

namespace hearth {

std::string writeWholeFile(const std::string& path, const std::function<void(std::ostream&)>& write) {
    namespace fs = std::filesystem;
    static std::atomic<uint64_t> writes{0};
    const std::string temporary =
        path + ".partial-" + std::to_string(::getpid()) + "-" + std::to_string(writes.fetch_add(1));
    std::error_code ec;
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return std::generic_category().message(errno);
    try {
        write(out);
    } catch (...) {
        out.close();
        fs::remove(temporary, ec);
        throw;
    }
    out.close();   // flushes: a full disk shows here
    if (out.fail()) {
        std::string why = std::generic_category().message(errno);
        fs::remove(temporary, ec);
        return why;
    }
    fs::rename(temporary, path, ec);
    if (ec) {
        std::string why = ec.message();
        fs::remove(temporary, ec);
        return why;
    }
    return "";
}

}  // namespace hearth
