#include "engine/data/SplitPlan.h"

#include "engine/data/DataError.h"
#include "engine/data/Permutation.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace hearth {

void checkFraction(const char* key, double value) {
    if (!(value >= 0.0 && value < 1.0))
        throw ConfigError(key, "must be at least 0 and below 1, got " + std::to_string(value));
}

size_t fractionOf(size_t n, double fraction) {
    return static_cast<size_t>(std::llround(static_cast<double>(n) * fraction));
}

Indices slice(const Indices& v, size_t begin, size_t end) {
    return Indices(v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(end));
}

void applyLimit(SplitIndices& s, const std::optional<int64_t>& limit) {
    if (!limit) return;
    if (*limit < 1) throw ConfigError("data.limit", "must be at least 1, got " + std::to_string(*limit));
    const auto cap = static_cast<size_t>(*limit);
    if (cap >= s.train.size()) return;
    const double ratio = static_cast<double>(cap) / static_cast<double>(s.train.size());
    s.train.resize(cap);
    for (Indices* split : {&s.val, &s.test})
        if (!split->empty()) split->resize(std::max<size_t>(1, fractionOf(split->size(), ratio)));
}

SplitIndices planFileSplits(int64_t rows, std::optional<int64_t> val_rows, std::optional<int64_t> test_rows,
                            const DataConfig& config, uint64_t seed, const std::string& path) {
    if (!val_rows) checkFraction("data.val_fraction", config.val_fraction);
    if (!test_rows) checkFraction("data.test_fraction", config.test_fraction);
    const Indices order = seededPermutation(rows, seed);
    const size_t n_test = test_rows ? 0 : fractionOf(order.size(), config.test_fraction);
    const size_t n_val = val_rows ? 0 : fractionOf(order.size(), config.val_fraction);
    if (n_test + n_val >= order.size())
        throw DataError(path + ": " + std::to_string(order.size()) +
                        " rows leave no training rows after the val/test fractions");
    SplitIndices s{slice(order, n_test + n_val, order.size()),
                   val_rows ? seededPermutation(*val_rows, seed ^ kTestSeedSalt) : slice(order, n_test, n_test + n_val),
                   test_rows ? seededPermutation(*test_rows, seed ^ (kTestSeedSalt + 1)) : slice(order, 0, n_test)};
    applyLimit(s, config.limit);
    return s;
}

std::shared_ptr<const Dataset> sortedSubset(std::shared_ptr<const Dataset> parent, Indices idx) {
    std::sort(idx.begin(), idx.end());
    return std::make_shared<Subset>(std::move(parent), std::move(idx));
}

std::string countsText(const DataSplits& s) {
    return std::to_string(s.train->size()) + "/" + std::to_string(s.val->size()) + "/" +
           std::to_string(s.test->size()) + " samples";
}

}  // namespace hearth
