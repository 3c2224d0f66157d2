#pragma once
// PredictionsCsv: the file `hearth-cli predict` writes, one row per input: its identification
// (`lead`: the text's or table row's index, the image's path), the predicted class, its
// confidence, the true class where the input says it (an image's class folder, a row's label
// column), then every class's probability. Shared by the text, image and table predictors; counts
// each predicted class, and the labelled inputs and those predicted right, into `result`. Also the
// predictors' other shared parts: the message for a checkpoint that does not load, the device they
// run on, and their batched forward pass.

#include "engine/run/TextPredictor.h"

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace hearth {

struct PredictionsCsvColumns {
    std::string lead_name;                                  // "index", "file"
    std::function<std::string(int64_t)> lead;               // the row's first field, as CSV text
    // When set, a "true" column after confidence: the input's class as written ("" = unknown; a
    // name outside the classes is written but not scored, and named in a note).
    std::function<std::string(int64_t)> truth;
};

// Before any work: the predictions can be written at `output` (its folder exists and takes files;
// it is not a folder or a read-only file; DataError naming it otherwise), and it is not the input
// CSV (`input`, "" for none), which it would overwrite (ConfigError on --output).
void checkPredictionsOutput(const std::string& output, const std::string& input);

// probabilities: float32 [n, classes] on the CPU. Returns each row's predicted class. Throws
// DataError naming `path` when it cannot be written.
std::vector<int64_t> writePredictionsCsv(const std::string& path, const PredictionsCsvColumns& columns,
                                         const torch::Tensor& probabilities,
                                         const std::vector<std::string>& class_names, PredictResult& result);

// The input's column of true classes (`header`: the CSV at `path`): options.label_column when given
// (a DataError naming the columns when the input lacks it), else the run's data.label_column where
// the input has it; "" for none.
std::string scoredLabelColumn(const std::string& path, const std::vector<std::string>& header, const PredictModel& model,
                              const PredictOptions& options);

// The DataError for a checkpoint that does not load into the model its run's config builds.
[[noreturn]] void cannotLoadCheckpoint(const PredictModel& model, const std::exception& why);
// Where predictions run: the first GPU when there is one, else the CPU.
torch::Device predictionDevice();

// Every input's class probabilities, float32 [n, classes] on the CPU: the model moved to `device`,
// in eval mode and without gradients, runs batch_size inputs at a time, taken in `order` (0..n-1
// when empty; the text predictor takes the longest first, for little padding). `logits(rows)`
// runs it on those inputs (row numbers into the n) and returns their logits, one row each.
// `on_progress` (when set) hears after each batch how many are done.
torch::Tensor classProbabilities(torch::nn::Module& model, const torch::Device& device, int64_t n, int64_t classes,
                                 int64_t batch_size, std::vector<int64_t> order,
                                 const std::function<torch::Tensor(const std::vector<int64_t>& rows)>& logits,
                                 const PredictProgress& on_progress = {});

}  // namespace hearth
