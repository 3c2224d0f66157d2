#pragma once
// ImageAugment: random crop with padding and horizontal flip of image batches (torchvision's
// RandomCrop(size, padding) and RandomHorizontalFlip), applied by the Loader as it builds a
// training batch: on loader workers when there are any, on the training device when the data
// lives there (data.on_device). Every sample draws its window and mirror on the host from its own
// generator, seeded by the run's seed, the epoch and the sample's index: the same run gives the
// same augmented images for any worker count, batch order or device. The pixels move with whole-
// batch tensor ops where the images are. Images may be raw uint8 or normalised; the padding takes
// each image's darkest value (the raw image's black, torchvision's fill=0 before normalisation, on
// data with black backgrounds like Fashion-MNIST), so both give the same normalised result.

#include "engine/data/Batch.h"

#include <cstdint>

namespace hearth {

class ImageAugment {
public:
    // padding 0: no crop; flip: mirror left-right with probability 1/2.
    ImageAugment(int64_t padding, bool flip);
    bool active() const { return padding_ > 0 || flip_; }
    // Replaces batch.input ([B, C, H, W], any dtype and device) by its augmented images;
    // batch.indices (host) name the samples. No host-device synchronisation.
    void apply(Batch& batch, uint64_t seed, int64_t epoch) const;
    // What it does, for the run's log ("random crop 28x28 with padding 4, horizontal flip").
    std::string describe() const;

private:
    struct Draw {
        int64_t dy = 0, dx = 0;   // the window's corner in the padded image
        bool flip = false;
    };
    Draw draw(uint64_t seed, int64_t epoch, int64_t sample) const;

    int64_t padding_;
    bool flip_;
};

}  // namespace hearth
