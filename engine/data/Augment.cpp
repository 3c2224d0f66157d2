#include "engine/data/Augment.h"

#include <cmath>
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

ImageAugment::ImageAugment(int64_t padding, bool flip, bool resized_crop)
    : padding_(padding), flip_(flip), resized_crop_(resized_crop) {
    if (padding_ < 0) throw std::invalid_argument("augmentation padding must be >= 0");
    if (resized_crop_ && padding_ > 0) throw std::invalid_argument("a resized crop takes no padding");
}

std::string ImageAugment::describe() const {
    std::string text;
    if (padding_ > 0) text = "random crop with padding " + std::to_string(padding_);
    if (resized_crop_) text = "random resized crop (scale 0.08-1, ratio 3/4-4/3)";
    if (flip_) text += (text.empty() ? "" : ", ") + std::string("horizontal flip");
    return text.empty() ? "none" : text;
}

ImageAugment::Draw ImageAugment::draw(uint64_t seed, int64_t epoch, int64_t sample, int64_t h, int64_t w) const {
    std::mt19937_64 rng(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(epoch) + 1) ^
                                   splitmix64(static_cast<uint64_t>(sample) * 0xD1B54A32D192ED03ull)));
    Draw d;
    if (padding_ > 0) {
        std::uniform_int_distribution<int64_t> offset(0, 2 * padding_);
        d.dy = offset(rng);
        d.dx = offset(rng);
    }
    if (resized_crop_) {
        // torchvision's RandomResizedCrop.get_params: ten tries at a box of the drawn area and
        // aspect ratio inside the image, else the whole image clipped to the ratio range.
        const double area = static_cast<double>(h * w);
        std::uniform_real_distribution<double> scale(0.08, 1.0), log_ratio(std::log(3.0 / 4.0), std::log(4.0 / 3.0));
        for (int attempt = 0; attempt < 10 && d.height == 0; ++attempt) {
            const double target = area * scale(rng), ratio = std::exp(log_ratio(rng));
            const auto bw = static_cast<int64_t>(std::lround(std::sqrt(target * ratio)));
            const auto bh = static_cast<int64_t>(std::lround(std::sqrt(target / ratio)));
            if (bw > 0 && bw <= w && bh > 0 && bh <= h) {
                d.top = std::uniform_int_distribution<int64_t>(0, h - bh)(rng);
                d.left = std::uniform_int_distribution<int64_t>(0, w - bw)(rng);
                d.height = bh;
                d.width = bw;
            }
        }
        if (d.height == 0) {   // fallback: a centre crop within the ratio range
            const double in_ratio = static_cast<double>(w) / static_cast<double>(h);
            d.width = in_ratio < 3.0 / 4.0 ? w : in_ratio > 4.0 / 3.0 ? std::lround(h * 4.0 / 3.0) : w;
            d.height = in_ratio < 3.0 / 4.0 ? std::lround(w / (3.0 / 4.0)) : h;
            d.top = (h - d.height) / 2;
            d.left = (w - d.width) / 2;
        }
    }
    d.flip = flip_ && std::bernoulli_distribution(0.5)(rng);
    return d;
}

void ImageAugment::applyResizedCrop(Batch& batch, uint64_t seed, int64_t epoch) const {
    const torch::Tensor images = batch.input();
    const int64_t n = images.size(0), h = images.size(2), w = images.size(3);
    // Each sample's box, scaled back to h x w (bilinear, align_corners=false: the box's outer
    // edges map to the image's; a box is never larger than the image, so this only enlarges) and
    // mirrored when drawn so. One small interpolation per sample: a batched grid_sample computes
    // the same samples but was ~15x slower on the CPU.
    const auto ids = batch.indices.to(torch::kCPU, torch::kInt64).contiguous();
    torch::NoGradGuard no_grad;
    namespace F = torch::nn::functional;
    const bool raw = images.scalar_type() == torch::kUInt8;
    torch::Tensor out = torch::empty_like(images);
    for (int64_t i = 0; i < n; ++i) {
        const Draw d = draw(seed, epoch, ids.data_ptr<int64_t>()[i], h, w);
        torch::Tensor crop = images[i].narrow(1, d.top, d.height).narrow(2, d.left, d.width).unsqueeze(0);
        if (raw) crop = crop.to(torch::kFloat32);
        torch::Tensor resized = d.height == h && d.width == w
                                    ? crop
                                    : F::interpolate(crop, F::InterpolateFuncOptions()
                                                               .size(std::vector<int64_t>{h, w})
                                                               .mode(torch::kBilinear)
                                                               .align_corners(false));
        if (d.flip) resized = resized.flip({3});
        if (raw) resized = resized.round().clamp_(0, 255);
        out[i].copy_(resized[0]);
    }
    batch.set(Batch::kInput, out);
}

void ImageAugment::apply(Batch& batch, uint64_t seed, int64_t epoch) const {
    if (!active()) return;
    const torch::Tensor images = batch.input();
    if (images.dim() != 4) throw std::invalid_argument("image augmentation needs [B, C, H, W] inputs");
    const int64_t n = images.size(0), c = images.size(1), h = images.size(2), w = images.size(3);
    if (n == 0) return;
    if (resized_crop_) return applyResizedCrop(batch, seed, epoch);
    // Output pixel (y, x) of sample i comes from padded row rows[i][y], column cols[i][x].
    const auto ids = batch.indices.to(torch::kCPU, torch::kInt64).contiguous();
    auto rows = torch::empty({n, h}, torch::kInt64);
    auto cols = torch::empty({n, w}, torch::kInt64);
    int64_t* row = rows.data_ptr<int64_t>();
    int64_t* col = cols.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
        const Draw d = draw(seed, epoch, ids.data_ptr<int64_t>()[i], h, w);
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
