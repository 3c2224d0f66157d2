#pragma once
// CacheFiles: what the on-disk caches of derived data (token ids, decoded images) share: where
// they live and the fingerprint that names an entry after everything it was derived from. No
// LibTorch.

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace hearth {

// HEARTH_CACHE_DIR/<what>, else $XDG_CACHE_HOME/hearth/<what>, else ~/.cache/hearth/<what>; ""
// when none is set (no cache). Read on the run's thread, before any worker starts.
inline std::string defaultCacheDir(const std::string& what) {
    namespace fs = std::filesystem;
    if (const char* dir = std::getenv("HEARTH_CACHE_DIR"); dir && *dir)  // NOLINT(concurrency-mt-unsafe)
        return (fs::path(dir) / what).string();
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)  // NOLINT(concurrency-mt-unsafe)
        return (fs::path(xdg) / "hearth" / what).string();
    if (const char* home = std::getenv("HOME"); home && *home)  // NOLINT(concurrency-mt-unsafe)
        return (fs::path(home) / ".cache" / "hearth" / what).string();
    return "";
}

// Two FNV-1a streams with different offsets: a 128-bit key, so unrelated inputs never share an
// entry in practice. Not cryptographic: the cache is the user's own.
struct Fingerprint {
    uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
    void bytes(const void* data, size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (size_t i = 0; i < n; ++i) {
            a = (a ^ p[i]) * 0x100000001b3ull;
            b = (b ^ p[i]) * 0x100000001b3ull ^ (b >> 29);
        }
    }
    void text(const std::string& s) {
        const uint64_t n = s.size();
        bytes(&n, sizeof n);
        bytes(s.data(), s.size());
    }
    void number(int64_t v) { bytes(&v, sizeof v); }
    std::string hex() const {
        static const char* digits = "0123456789abcdef";
        std::string out;
        for (uint64_t v : {a, b})
            for (int shift = 60; shift >= 0; shift -= 4) out.push_back(digits[(v >> shift) & 0xF]);
        return out;
    }
};

}  // namespace hearth
