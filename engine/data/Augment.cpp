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

void ImageAugment::apply(Batch& batch, uint64_t seed, int64_t epoch) const {
    if (!active()) return;
    torch::Tensor images = batch.input();
    if (images.dim() != 4) throw std::invalid_argument("image augmentation needs [B, C, H, W] inputs");
    const auto ids = batch.indices.to(torch::kInt64).contiguous();
    const int64_t* id = ids.data_ptr<int64_t>();
    const int64_t n = images.size(0), h = images.size(2), w = images.size(3);
    torch::NoGradGuard no_grad;
    for (int64_t i = 0; i < n; ++i) {
        std::mt19937_64 rng(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(epoch) + 1) ^
                                       splitmix64(static_cast<uint64_t>(id[i]) * 0xD1B54A32D192ED03ull)));
        torch::Tensor image = images[i];   // a view: written back in place
        torch::Tensor out = image;
        if (padding_ > 0) {
            std::uniform_int_distribution<int64_t> offset(0, 2 * padding_);
            const int64_t dy = offset(rng), dx = offset(rng);
            const double fill = image.min().item<double>();
            const auto padded = torch::constant_pad_nd(image, {padding_, padding_, padding_, padding_}, fill);
            out = padded.narrow(1, dy, h).narrow(2, dx, w);
        }
        if (flip_ && std::bernoulli_distribution(0.5)(rng)) out = out.flip({2});
        if (!out.is_same(image)) image.copy_(out.clone());
    }
}

}  // namespace hearth
