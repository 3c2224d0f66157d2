#pragma once
// ImageAugment: random crop with padding, or random resized crop, and horizontal flip of image
// batches (torchvision's RandomCrop(size, padding), RandomResizedCrop(size) with its default scale
// 0.08-1 and ratio 3/4-4/3, and RandomHorizontalFlip), applied by the Loader as it builds a
// training batch: on loader workers when there are any, on the training device when the data
// lives there (data.on_device). Every sample draws its window and mirror on the host from its own
// generator, seeded by the run's seed, the epoch and the sample's index: the same run gives the
// same augmented images for any worker count, batch order or device. The pixels move with whole-
// batch tensor ops where the images are. Images may be raw uint8 or normalised; the padding takes
// each image's darkest value (the raw image's black, torchvision's fill=0 before normalisation, on
// data with black backgrounds like Fashion-MNIST), so both give the same normalised result. The
// resized crop scales each sample's box back bilinearly and keeps raw images raw (rounded back to
// uint8).

#include "engine/config/ExperimentConfig.h"
#include "engine/data/Batch.h"

#include <cstdint>

namespace hearth {

class ImageAugment {
public:
    // padding 0: no crop; flip: mirror left-right with probability 1/2; resized_crop: a random box
    // scaled back to the image's size (not with padding).
    ImageAugment(int64_t padding, bool flip, bool resized_crop = false);
    explicit ImageAugment(const AugmentConfig& config)
        : ImageAugment(config.random_crop_padding, config.horizontal_flip, config.random_resized_crop) {}
    bool active() const { return padding_ > 0 || flip_ || resized_crop_; }
    // Replaces batch.input ([B, C, H, W], any dtype and device) by its augmented images;
    // batch.indices (host) name the samples. No host-device synchronisation.
    void apply(Batch& batch, uint64_t seed, int64_t epoch) const;
    // What it does, for the run's log ("random crop 28x28 with padding 4, horizontal flip").
    std::string describe() const;

private:
    struct Draw {
        int64_t dy = 0, dx = 0;   // the window's corner in the padded image
        bool flip = false;
        int64_t top = 0, left = 0, height = 0, width = 0;   // resized crop: the box (height 0: whole image)
    };
    Draw draw(uint64_t seed, int64_t epoch, int64_t sample, int64_t h, int64_t w) const;
    void applyResizedCrop(Batch& batch, uint64_t seed, int64_t epoch) const;

    int64_t padding_;
    bool flip_;
    bool resized_crop_;
};

}  // namespace hearth
