#include "engine/data/Permutation.h"

#include <limits>
#include <numeric>

namespace hearth {

uint64_t uniformBelow(std::mt19937_64& rng, uint64_t bound) {
    // Reject the top partial block so every residue is equally likely.
    const uint64_t max = std::numeric_limits<uint64_t>::max();
    const uint64_t limit = max - (max % bound + 1) % bound;
    uint64_t draw = rng();
    while (draw > limit) draw = rng();
    return draw % bound;
}

std::vector<int64_t> seededPermutation(int64_t n, uint64_t seed) {
    std::vector<int64_t> order(static_cast<size_t>(n > 0 ? n : 0));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::mt19937_64 rng(seed);
    for (size_t i = order.size(); i > 1; --i) {
        const auto j = static_cast<size_t>(uniformBelow(rng, i));
        std::swap(order[i - 1], order[j]);
    }
    return order;
}

}  // namespace hearth
