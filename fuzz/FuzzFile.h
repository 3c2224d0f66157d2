#pragma once
// For parsers that take a path: the fuzz input as a file in a private temporary directory,
// rewritten for every input (the readers under test open files by name), under $TMPDIR.

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace hearth::fuzz {

inline std::string writeInput(const uint8_t* data, size_t size, const std::string& name) {
    static const std::string dir = [] {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/hearth-fuzz-XXXXXX";
        if (!mkdtemp(pattern.data())) std::abort();
        return pattern;
    }();
    const std::string path = dir + "/" + name;
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
    return path;
}

}  // namespace hearth::fuzz
