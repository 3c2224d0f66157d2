#pragma once
// Builds the train/val/test splits an ExperimentConfig asks for: loads the files (IDX or CSV),
// splits with the seed, applies data.limit. Throws DataError (or ConfigError for bad keys).

#include "engine/config/ExperimentConfig.h"
#include "engine/data/Dataset.h"

namespace hearth {

DataSplits loadDataSplits(const DataConfig& config, uint64_t seed);

}  // namespace hearth
