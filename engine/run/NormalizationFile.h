#pragma once
// NormalizationFile: normalization.json in a run's artifact folder, beside best.pt: what the run
// normalised its inputs with (DataSplits::normalization) and the shape of one sample, written when
// the run starts. A prediction on new inputs applies exactly the run's statistics from it, without
// the training data, which may have moved or changed since (a CSV with rows added would otherwise
// give other means and standard deviations, and silently other predictions).

#include "engine/data/Dataset.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hearth {

struct StoredNormalization {
    std::string kind;                    // data.kind: csv | idx | image_folder
    std::vector<int64_t> sample_shape;   // {features} or {channels, rows, cols}
    DataSplits::Normalization normalization;
};

// Writes the file when `splits` has a normalization (csv and image data) and `artifacts_dir` is
// set; nothing otherwise. DataError when it cannot be written.
void writeNormalizationFile(const std::string& artifacts_dir, const std::string& kind, const DataSplits& splits);

// The file beside `checkpoint` (a run's best.pt); nullopt when there is none (a run from before
// it was written, or one whose data has none). DataError naming the file when it is malformed or
// written for other data than `kind`.
std::optional<StoredNormalization> readNormalizationFile(const std::string& checkpoint, const std::string& kind);

// Stored image statistics as the loader applies them: one mean and std (grey images), or one per
// channel (colour).
PixelNormalization pixelNormalization(const FeatureScaling& scaling);

}  // namespace hearth
