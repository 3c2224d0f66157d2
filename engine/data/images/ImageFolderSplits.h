#pragma once
// ImageFolderSplits: data.kind=image_folder. Lists the folder (ImageFolderScan), reads every
// file's header before training (format, size, grey or colour: the images are decoded to RGB when
// any training file is colour), and with data.cache_decoded decodes them all once into the cache
// (DecodedImages). data.on_bad_file: error stops at the first unreadable file, naming it; skip
// leaves such files out and lists them in the run log (skip without the cache decodes every file
// once before training to find them). Splits: the folder's val/ and test/ when it has them, else
// data.val_fraction and data.test_fraction of the training files, seeded; then data.limit.
// Normalised with ImageNet's statistics: per channel for colour, their means (0.449 / 0.226) for
// grey: fixed numbers, so a prediction later normalises exactly as training did.

#include "engine/config/ExperimentConfig.h"
#include "engine/data/Dataset.h"

#include <functional>
#include <string>

namespace hearth {

struct ImageFolderSplitOptions {
    std::string cache_dir;                          // data.cache_decoded's folder ("" = no cache)
    std::function<void(const std::string&)> log;    // progress lines (may be empty)
};

// Throws DataError naming the file or folder, ConfigError for bad keys.
DataSplits loadImageFolderSplits(const DataConfig& config, uint64_t seed, const ImageFolderSplitOptions& options);

// ImageNet's channel statistics (torchvision's pretrained weights expect them) for 3 channels;
// their means for 1.
PixelNormalization imageNetNormalization(int channels);

}  // namespace hearth
