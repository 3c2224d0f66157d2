#pragma once
// Small helpers the benchmarks share.

#include <algorithm>
#include <vector>

namespace hearth::bench {

// The p-quantile (0..1) of `v`, nearest rank; 0 for no values.
inline double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0.0;
    std::sort(v.begin(), v.end());
    const auto i = static_cast<size_t>(p * double(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

}  // namespace hearth::bench
