#include "engine/data/Augment.h"

#include <random>
#include <stdexcept>

namespace hearth {
namespace {

uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

}  // namespace

ImageAugment::ImageAugment(int64_t padding, bool flip) : padding_(padding), flip_(flip) {
    if (padding_ < 0) throw std::invalid_argument("augmentation padding must be >= 0");
}

std::string ImageAugment::describe() const {
    std::string text;
    if (padding_ > 0) text = "random crop with padding " + std::to_string(padding_);
    if (flip_) text += (text.empty() ? "" : ", ") + std::string("horizontal flip");
    return text.empty() ? "none" : text;
}

ImageAugment::Draw ImageAugment::draw(uint64_t seed, int64_t epoch, int64_t sample) const {
    std::mt19937_64 rng(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(epoch) + 1) ^
                                   splitmix64(static_cast<uint64_t>(sample) * 0xD1B54A32D192ED03ull)));
    Draw d;
    if (padding_ > 0) {
        std::uniform_int_distribution<int64_t> offset(0, 2 * padding_);
        d.dy = offset(rng);
        d.dx = offset(rng);
    }
    d.flip = flip_ && std::bernoulli_distribution(0.5)(rng);
    return d;
}

void ImageAugment::apply(Batch& batch, uint64_t seed, int64_t epoch) const {
    if (!active()) return;
    const torch::Tensor images = batch.input();
    if (images.dim() != 4) throw std::invalid_argument("image augmentation needs [B, C, H, W] inputs");
    const int64_t n = images.size(0), c = images.size(1), h = images.size(2), w = images.size(3);
    if (n == 0) return;
    // Output pixel (y, x) of sample i comes from padded row rows[i][y], column cols[i][x].
    const auto ids = batch.indices.to(torch::kCPU, torch::kInt64).contiguous();
    auto rows = torch::empty({n, h}, torch::kInt64);
    auto cols = torch::empty({n, w}, torch::kInt64);
    int64_t* row = rows.data_ptr<int64_t>();
    int64_t* col = cols.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
        const Draw d = draw(seed, epoch, ids.data_ptr<int64_t>()[i]);
        for (int64_t y = 0; y < h; ++y) row[i * h + y] = d.dy + y;
        for (int64_t x = 0; x < w; ++x) col[i * w + x] = d.dx + (d.flip ? w - 1 - x : x);
    }
    torch::NoGradGuard no_grad;
    torch::Tensor padded = images;
    if (padding_ > 0) {
        const auto fill = images.reshape({n, -1}).amin(1).view({n, 1, 1, 1});
        padded = fill.expand({n, c, h + 2 * padding_, w + 2 * padding_}).contiguous();
        padded.narrow(2, padding_, h).narrow(3, padding_, w).copy_(images);
    }
    const torch::Device device = images.device();
    const auto row_index = toDeviceAsync(rows, device).view({n, 1, h, 1}).expand({n, c, h, padded.size(3)});
    const auto col_index = toDeviceAsync(cols, device).view({n, 1, 1, w}).expand({n, c, h, w});
    batch.set(Batch::kInput, padded.gather(2, row_index).gather(3, col_index));
}

}  // namespace hearth
