#pragma once
// ImageAugment: random crop with padding and horizontal flip of image batches (torchvision's
// RandomCrop(size, padding) and RandomHorizontalFlip), applied by the Loader as it builds a
// training batch, so on loader workers when there are any. Every sample draws from its own
// generator, seeded by the run's seed, the epoch and the sample's index: the same run gives the
// same augmented images for any worker count or batch order. Images arrive normalised with the
// dataset's statistics; the padding takes each image's darkest value (the raw image's black,
// torchvision's fill=0 before normalisation, on data with black backgrounds like Fashion-MNIST).

#include "engine/data/Batch.h"

#include <cstdint>

namespace hearth {

class ImageAugment {
public:
    // padding 0: no crop; flip: mirror left-right with probability 1/2.
    ImageAugment(int64_t padding, bool flip);
    bool active() const { return padding_ > 0 || flip_; }
    // Augments batch.input ([B, C, H, W]) in place; batch.indices name the samples.
    void apply(Batch& batch, uint64_t seed, int64_t epoch) const;
    // What it does, for the run's log ("random crop 28x28 with padding 4, horizontal flip").
    std::string describe() const;

private:
    int64_t padding_;
    bool flip_;
};

}  // namespace hearth
