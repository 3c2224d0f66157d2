#pragma once
// SplitPlan: the seeded train/val/test split arithmetic every data kind shares: fractions carved
// off a shuffled file, data.limit, and views that keep file order.

#include "engine/config/ExperimentConfig.h"
#include "engine/data/Dataset.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace hearth {

// Test-set subsampling under data.limit (and explicit val/test files) draws from its own stream,
// so it does not shift when the train/val split changes.
inline constexpr uint64_t kTestSeedSalt = 0x9E3779B97F4A7C15ull;

using Indices = std::vector<int64_t>;

struct SplitIndices {
    Indices train, val, test;
};

// Throws ConfigError(key) unless 0 <= value < 1.
void checkFraction(const char* key, double value);
size_t fractionOf(size_t n, double fraction);
Indices slice(const Indices& v, size_t begin, size_t end);
// The splits of a file of `rows` samples (csv, text_csv, wordnet): fractions carve test, then
// val, out of the seeded order unless a file of its own is given (its size here); the given
// files are shuffled with their own streams; then data.limit. Checks the fractions (ConfigError)
// and that training rows remain (DataError naming `path`).
SplitIndices planFileSplits(int64_t rows, std::optional<int64_t> val_rows, std::optional<int64_t> test_rows,
                            const DataConfig& config, uint64_t seed, const std::string& path);

// data.limit: keep the first `limit` (already shuffled) training samples and shrink val/test by
// the same ratio, keeping at least one sample in each non-empty split.
void applyLimit(SplitIndices& s, const std::optional<int64_t>& limit);
// A view of `idx` in file order (evaluation and per-sample predictions read naturally).
std::shared_ptr<const Dataset> sortedSubset(std::shared_ptr<const Dataset> parent, Indices idx);
// "55000/5000/10000 samples"
std::string countsText(const DataSplits& s);

}  // namespace hearth
