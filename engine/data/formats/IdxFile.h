#pragma once
// IdxFile: the IDX format of MNIST and Fashion-MNIST (a big-endian header: magic 0x00000800 |
// rank, one 32-bit size per dimension, then the bytes), gzip-compressed or raw. No LibTorch.
// A hostile header cannot make Hearth allocate more than the file could hold: the promised size
// is checked against the file's size (raw) or the most a gzip stream of that size can inflate to
// before anything is allocated, and decompression stops at the promised size.

#include <cstdint>
#include <string>
#include <vector>

namespace hearth {

// The decoded content of one IDX file: its dimensions and its bytes (header included).
struct IdxFile {
    std::vector<int64_t> dims;
    std::vector<uint8_t> bytes;
    size_t header_size = 0;
    const uint8_t* payload() const { return bytes.data() + header_size; }
};

// Reads an IDX file of unsigned bytes (magic 0x00000800 | rank), gzip-compressed or raw, and
// checks the magic, the rank and that the size matches the header. Throws DataError naming
// `path` and what was expected.
IdxFile readIdxFile(const std::string& path, int expected_rank);

}  // namespace hearth
