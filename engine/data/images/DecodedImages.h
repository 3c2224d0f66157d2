#pragma once
// DecodedImages: the images of one list of files as the model sees them before normalisation:
// uint8 [C, S, S], the shorter side resized to S (bilinear, antialiased, as torchvision's
// Resize) and the centre S x S cut out (CenterCrop). Decoded on demand (on loader workers, any
// thread), or read from the decoded cache (data.cache_decoded): one file of every square, built
// once on all cores and mapped into memory, named after the files' paths, sizes and modification
// times, the size and the channels, so a changed folder gets a new cache.

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace hearth {

struct BadImage {
    int64_t index = 0;
    std::string message;   // "PATH: what is wrong"
};

class DecodedImages {
public:
    DecodedImages(std::vector<std::string> paths, int channels, int64_t size);
    ~DecodedImages();
    DecodedImages(const DecodedImages&) = delete;
    DecodedImages& operator=(const DecodedImages&) = delete;

    int64_t count() const { return static_cast<int64_t>(paths_.size()); }
    int channels() const { return channels_; }
    int64_t size() const { return size_; }
    const std::string& path(int64_t i) const { return paths_.at(static_cast<size_t>(i)); }

    // Square i (uint8 [C, S, S]): the cache's bytes when one is open, else decoded now.
    // Throws DataError naming the file when it cannot be decoded.
    torch::Tensor square(int64_t i) const;
    // Copies squares `indices` into `out` (uint8 [B, C, S, S], contiguous).
    void fill(const std::vector<int64_t>& indices, torch::Tensor& out) const;

    // Opens the cache for these files under `dir` or builds it, decoding every file on all cores.
    // Returns the files that failed to decode (the cache marks them; their squares are black).
    // `built` tells whether it had to be built. Throws DataError when the folder cannot be written.
    std::vector<BadImage> useCache(const std::string& dir, bool& built);
    // Decodes every file on all cores without keeping the pixels: the files that fail.
    std::vector<BadImage> checkAll() const;
    const std::string& cachePath() const { return cache_path_; }

private:
    torch::Tensor decode(int64_t i) const;
    std::string cacheKey() const;
    bool openCache(const std::string& file, std::vector<BadImage>& bad);

    std::vector<std::string> paths_;
    int channels_;
    int64_t size_;
    std::string cache_path_;
    const uint8_t* mapped_ = nullptr;   // the cache file, mapped read-only
    size_t mapped_bytes_ = 0;
    size_t pixels_offset_ = 0;
};

// Runs fn(i) for i in [0, n) on every core (chunks claimed in order); rethrows the first error.
void parallelForEach(int64_t n, const std::function<void(int64_t)>& fn);

}  // namespace hearth
