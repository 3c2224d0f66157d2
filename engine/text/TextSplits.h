#pragma once
// TextSplits: the train/val/test splits of text data (data.kind text_csv or wordnet) as
// TextDatasets: files read, labels mapped to classes, split with the seed like every other kind,
// and only the texts the splits use tokenised (in parallel, cached).

#include "engine/config/ExperimentConfig.h"
#include "engine/data/Dataset.h"

#include <functional>
#include <optional>
#include <string>

namespace hearth {

struct TextSplitOptions {
    // The tokenizer when data.tokenizer is unset: the pretrained model's folder.
    std::optional<std::string> tokenizer_fallback;
    std::string cache_dir;                               // token cache; "" = none
    std::function<void(const std::string&)> log;         // progress lines (may be empty)
};

// Throws DataError (files, labels, tokenizer) or ConfigError (no tokenizer at all).
DataSplits loadTextSplits(const DataConfig& config, uint64_t seed, const TextSplitOptions& options);

}  // namespace hearth
