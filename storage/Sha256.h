#pragma once
// SHA-256 (FIPS 180-4) for artifact checksums, so a stored checkpoint can be verified later.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace hearth {

class Sha256 final {
public:
    Sha256();
    void update(const void* data, size_t bytes);
    std::string hexDigest();   // finalises; the object is then spent

    static std::string hex(const void* data, size_t bytes);
    // Digest of a file's contents; empty when the file cannot be read. `bytes` gets its size.
    static std::string ofFile(const std::string& path, int64_t* bytes = nullptr);

private:
    void compress(const uint8_t* block);
    std::array<uint32_t, 8> state_;
    std::array<uint8_t, 64> buffer_{};
    size_t buffered_ = 0;
    uint64_t total_bytes_ = 0;
};

}  // namespace hearth
