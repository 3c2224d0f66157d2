#pragma once
// Builds the train/val/test splits an ExperimentConfig asks for: loads the files (IDX, CSV, an
// image folder), splits with the seed, applies data.limit. Text data (text_csv, wordnet) is
// tokenised with data.tokenizer, else `text.tokenizer_fallback`; `text.log` also carries an image
// folder's progress lines. Throws DataError (or ConfigError for bad keys).

#include "engine/config/ExperimentConfig.h"
#include "engine/data/Dataset.h"
#include "engine/text/TextSplits.h"

namespace hearth {

DataSplits loadDataSplits(const DataConfig& config, uint64_t seed, const TextSplitOptions& text = {});

}  // namespace hearth
