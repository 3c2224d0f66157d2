#pragma once
// WeightsText: how the weight loaders (Hugging Face checkpoints, torchvision state_dicts) name
// tensors in their messages: a shape as "[64, 3, 7, 7]", and a list of names cut after `limit`.

#include <torch/torch.h>

#include <string>
#include <vector>

namespace hearth {

inline std::string shapeText(at::IntArrayRef shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// One name per line, indented; "... and N more" after `limit`.
inline std::string listed(const std::vector<std::string>& names, size_t limit = 12) {
    std::string text;
    for (size_t i = 0; i < names.size() && i < limit; ++i) text += "\n  " + names[i];
    if (names.size() > limit) text += "\n  ... and " + std::to_string(names.size() - limit) + " more";
    return text;
}

}  // namespace hearth
