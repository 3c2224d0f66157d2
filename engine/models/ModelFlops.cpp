#include "engine/models/ModelFlops.h"

namespace hearth {

double ForwardFlops::forward(int64_t samples, int64_t tokens) const {
    const auto t = static_cast<double>(tokens);
    return static_cast<double>(samples) * (per_sample + per_token * t + per_token_squared * t * t);
}

ForwardFlops& ForwardFlops::operator+=(const ForwardFlops& o) {
    per_sample += o.per_sample;
    per_token += o.per_token;
    per_token_squared += o.per_token_squared;
    return *this;
}

ForwardFlops PartFlops::total() const {
    ForwardFlops sum = stem;
    for (const auto& block : blocks) sum += block;
    sum += head;
    return sum;
}

PartFlops mlpFlops(int64_t in_features, const std::vector<int64_t>& hidden, int64_t classes) {
    PartFlops f;
    int64_t width = in_features;
    for (const int64_t h : hidden) {
        f.blocks.push_back({2.0 * static_cast<double>(width) * static_cast<double>(h)});
        width = h;
    }
    f.head.per_sample = 2.0 * static_cast<double>(width) * static_cast<double>(classes);
    return f;
}

PartFlops cnnFlops(const std::vector<int64_t>& sample_shape, const std::vector<int64_t>& channels, int64_t classes) {
    PartFlops f;
    if (sample_shape.size() != 3) return f;
    int64_t in = sample_shape[0], h = sample_shape[1], w = sample_shape[2];
    for (const int64_t out : channels) {
        const double positions = static_cast<double>(h) * static_cast<double>(w);
        f.blocks.push_back({2.0 * 9.0 * static_cast<double>(in) * static_cast<double>(out) * positions +   // conv1
                            2.0 * 9.0 * static_cast<double>(out) * static_cast<double>(out) * positions}); // conv2
        in = out;
        h /= 2;
        w /= 2;
    }
    f.head.per_sample = 2.0 * static_cast<double>(in * h * w) * static_cast<double>(classes);
    return f;
}

PartFlops transformerFlops(const TransformerSpec& spec) {
    const auto d = static_cast<double>(spec.hidden);
    PartFlops f;
    ForwardFlops layer;
    layer.per_token = 2.0 * (4.0 * d * d + 2.0 * d * static_cast<double>(spec.intermediate));
    layer.per_token_squared = 4.0 * d;
    f.blocks.assign(static_cast<size_t>(spec.layers), layer);
    f.head.per_sample = 2.0 * (d * d + d * static_cast<double>(spec.num_labels));
    return f;
}

}  // namespace hearth
