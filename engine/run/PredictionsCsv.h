#pragma once
// PredictionsCsv: the file `hearth-cli predict` writes, one row per input: its identification
// (`lead`: the text's row index, the image's path), the predicted class, its confidence, any
// `extra` columns (an image's true class), then every class's probability. Shared by the text and
// image predictors; counts each predicted class into `result`.

#include "engine/run/TextPredictor.h"

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace hearth {

struct PredictionsCsvColumns {
    std::string lead_name;                                  // "index", "file"
    std::function<std::string(int64_t)> lead;               // the row's first field, as CSV text
    std::vector<std::string> extra_names;                   // after confidence
    std::function<std::vector<std::string>(int64_t)> extra; // raw values (quoted here)
};

// probabilities: float32 [n, classes] on the CPU. Returns each row's predicted class. Throws
// DataError naming `path` when it cannot be written.
std::vector<int64_t> writePredictionsCsv(const std::string& path, const PredictionsCsvColumns& columns,
                                         const torch::Tensor& probabilities,
                                         const std::vector<std::string>& class_names, PredictResult& result);

}  // namespace hearth
