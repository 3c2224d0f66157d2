#include "engine/data/formats/IdxFile.h"

#include "engine/data/DataError.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <system_error>

namespace hearth {
namespace {

namespace fs = std::filesystem;

// Deflate cannot compress better than about 1032:1; with the gzip framing, a file of N bytes
// inflates to at most this many.
uint64_t mostInflated(uint64_t compressed) { return compressed * 1032 + 4096; }
// Past this the header is not describing a dataset Hearth could hold in memory anyway.
constexpr uint64_t kMaxPayload = uint64_t{1} << 40;

uint32_t bigEndian32(const uint8_t* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string hex32(uint32_t value) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", value);
    return buf;
}

// "10000 images of 28x28" / "10000 labels": what the header promises, in the user's words.
std::string promise(const std::vector<int64_t>& dims) {
    if (dims.size() == 1) return std::to_string(dims[0]) + " labels";
    std::string text = std::to_string(dims[0]) + (dims.size() == 3 ? " images of " : " items of ");
    for (size_t i = 1; i < dims.size(); ++i) text += (i > 1 ? "x" : "") + std::to_string(dims[i]);
    return text;
}

// A gzip (or, transparently, raw) stream read in bounded pieces.
class Stream {
public:
    explicit Stream(const std::string& path) : m_path(path), m_file(gzopen(path.c_str(), "rb")) {
        if (!m_file) throw DataError(path + ": cannot open: " + std::generic_category().message(errno));
        gzbuffer(m_file, 1 << 18);
    }
    ~Stream() { gzclose(m_file); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    // Appends up to `count` bytes to `out`; fewer only at the end of the stream.
    void read(std::vector<uint8_t>& out, uint64_t count) {
        constexpr uint64_t kChunk = 1u << 20;
        while (count > 0 && !m_ended) {
            const auto want = static_cast<unsigned>(std::min(count, kChunk));
            const size_t old = out.size();
            out.resize(old + want);
            const int got = gzread(m_file, out.data() + old, want);
            out.resize(old + static_cast<size_t>(std::max(got, 0)));
            if (got < static_cast<int>(want)) m_ended = true;
            if (got > 0) count -= static_cast<uint64_t>(got);
        }
        checkError();
    }
    // Counts (without keeping) what is left, up to `limit` bytes.
    uint64_t skipRest(uint64_t limit) {
        std::vector<uint8_t> scratch;
        uint64_t total = 0;
        while (!m_ended && total <= limit) {
            scratch.clear();
            read(scratch, 1u << 20);
            total += scratch.size();
        }
        return total;
    }
    bool gzip() const { return gzdirect(m_file) == 0; }
    bool truncated() const { return m_truncated; }

private:
    void checkError() {
        int errnum = Z_OK;
        const char* message = gzerror(m_file, &errnum);
        if (errnum == Z_BUF_ERROR) {   // the gzip stream ends early: keep what was decoded
            m_truncated = true;
            m_ended = true;
        } else if (errnum != Z_OK) {
            throw DataError(m_path + ": cannot decompress (zlib: " + (message ? message : "") + ")");
        }
    }
    std::string m_path;
    gzFile m_file;
    bool m_ended = false, m_truncated = false;
};

}  // namespace

IdxFile readIdxFile(const std::string& path, int expected_rank) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) throw DataError(path + ": no such file");
    const uint64_t file_size = fs::file_size(path, ec);
    Stream stream(path);
    IdxFile idx;
    idx.header_size = 4 + 4 * static_cast<size_t>(expected_rank);
    stream.read(idx.bytes, idx.header_size);
    const bool gzip = stream.gzip();
    auto holds = [&](uint64_t bytes) { return std::to_string(bytes) + " bytes" + (gzip ? " (decompressed)" : ""); };

    if (idx.bytes.size() < 4)
        throw DataError(path + ": truncated: the file holds " + holds(idx.bytes.size()) + ", too few for an IDX header");
    const uint32_t magic = bigEndian32(idx.bytes.data());
    const uint32_t expected_magic = 0x00000800u | static_cast<uint32_t>(expected_rank);
    if (magic != expected_magic)
        throw DataError(path + ": bad magic number " + hex32(magic) + ", expected " + hex32(expected_magic) + " (IDX " +
                        (expected_rank == 1 ? "labels" : "images") + " of unsigned bytes)");
    if (idx.bytes.size() < idx.header_size)
        throw DataError(path + ": truncated: the file holds " + holds(idx.bytes.size()) + ", the IDX header needs " +
                        std::to_string(idx.header_size));
    uint64_t payload = 1;
    for (int d = 0; d < expected_rank; ++d) {
        const int64_t dim = bigEndian32(idx.bytes.data() + 4 + 4 * static_cast<std::ptrdiff_t>(d));
        if (dim <= 0 || dim > (int64_t{1} << 31) || (d > 0 && dim > 65536))
            throw DataError(path + ": implausible dimension " + std::to_string(dim) + " in the header");
        idx.dims.push_back(dim);
        payload *= static_cast<uint64_t>(dim);   // at most 2^31 * 2^16 * 2^16 = 2^63: no overflow
    }
    if (payload > kMaxPayload)
        throw DataError(path + ": implausible header: it promises " + promise(idx.dims) + ", over 1 TiB");
    const uint64_t expected = idx.header_size + payload;
    const std::string promised = "header promises " + promise(idx.dims) + " (" + std::to_string(expected) + " bytes)";

    // Before allocating: can a file this size hold what the header promises?
    if (!gzip && file_size != expected)
        throw DataError(path + ": " + (file_size < expected ? "truncated: " : "") + promised + " but the file holds " +
                        holds(file_size));
    if (gzip && expected > mostInflated(file_size))
        throw DataError(path + ": truncated: " + promised + " but the file holds " + std::to_string(file_size) +
                        " compressed bytes, which cannot inflate to that much");

    idx.bytes.reserve(static_cast<size_t>(expected));
    stream.read(idx.bytes, expected - idx.header_size);
    if (idx.bytes.size() < expected || stream.truncated())
        throw DataError(path + ": truncated: " + promised + " but the file holds " + holds(idx.bytes.size()) +
                        (stream.truncated() ? "; the gzip stream ends early" : ""));
    // More data than promised: say how much (counted, not kept), up to a limit.
    const uint64_t limit = std::max<uint64_t>(expected, uint64_t{1} << 26);
    if (const uint64_t extra = stream.skipRest(limit); extra > 0)
        throw DataError(path + ": " + promised + " but the file holds " +
                        (extra > limit ? "more than " + holds(expected + limit) : holds(expected + extra)));
    return idx;
}

}  // namespace hearth
