// The IDX reader on arbitrary bytes, as a raw file or (first byte odd) with a ".gz" name;
// zlib reads either transparently. Only DataError may come out.
#include "FuzzFile.h"
#include "engine/data/DataError.h"
#include "engine/data/formats/IdxFile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const int rank = 1 + data[0] % 3;
    const std::string path = hearth::fuzz::writeInput(data + 1, size - 1, (data[0] & 0x80) ? "x-idx.gz" : "x-idx");
    try {
        const hearth::IdxFile idx = hearth::readIdxFile(path, rank);
        // What came back is what the header promised.
        size_t expected = idx.header_size;
        size_t payload = 1;
        for (const int64_t d : idx.dims) payload *= static_cast<size_t>(d);
        if (idx.bytes.size() != expected + payload) __builtin_trap();
    } catch (const hearth::DataError&) {
    }
    return 0;
}
