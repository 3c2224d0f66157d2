#pragma once
// The checks of a safetensors file's header, without LibTorch (fuzzed on their own): the 8-byte
// little-endian length, the JSON, each tensor's dtype, shape and data_offsets, and that the
// tensors tile the data section exactly. See SafeTensors.h for the format.

#include <cstdint>
#include <string>
#include <vector>

namespace hearth {

struct SafeTensorsEntry {
    std::string name;
    std::string dtype;               // "F32", "BF16", ...
    int64_t element_bytes = 0;
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;     // within the data section
};

struct SafeTensorsLayout {
    uint64_t data_offset = 0;                  // 8 + the header's length
    std::vector<SafeTensorsEntry> entries;     // in offset order
};

// `data`/`size`: the whole file. Throws DataError("safetensors: '<path>': <what>").
SafeTensorsLayout parseSafeTensorsHeader(const uint8_t* data, uint64_t size, const std::string& path);

}  // namespace hearth
