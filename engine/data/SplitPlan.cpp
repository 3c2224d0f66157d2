#include "engine/data/SplitPlan.h"

#include "engine/config/ExperimentConfig.h"

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

std::shared_ptr<const Dataset> sortedSubset(std::shared_ptr<const Dataset> parent, Indices idx) {
    std::sort(idx.begin(), idx.end());
    return std::make_shared<Subset>(std::move(parent), std::move(idx));
}

std::string countsText(const DataSplits& s) {
    return std::to_string(s.train->size()) + "/" + std::to_string(s.val->size()) + "/" +
           std::to_string(s.test->size()) + " samples";
}

}  // namespace hearth
