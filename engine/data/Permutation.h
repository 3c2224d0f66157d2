#pragma once
// Seeded permutations that come out identical on every standard library and platform: splits
// and epoch orders must not change when the same config runs on another machine.

#include <cstdint>
#include <random>
#include <vector>

namespace hearth {

// A uniform integer in [0, bound) from mt19937_64 by rejection (no std distributions, whose
// algorithms the standard leaves to each library). bound must be > 0.
uint64_t uniformBelow(std::mt19937_64& rng, uint64_t bound);

// 0..n-1 shuffled by Fisher-Yates driven by mt19937_64(seed).
std::vector<int64_t> seededPermutation(int64_t n, uint64_t seed);

}  // namespace hearth
