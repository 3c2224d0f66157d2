#pragma once
// TextPredictor: `hearth-cli predict`: a trained text classifier over the texts of a CSV file,
// writing each row's predicted class and every class's probability. The model is a run's best
// checkpoint (its config rebuilds the model and names the tokenizer) or a Hugging Face checkpoint
// folder that has a classification head (class names from config.json's id2label). Public
// header: standard types only (app/cli includes it without LibTorch).

#include "engine/config/ExperimentConfig.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace hearth {

struct PredictModel {
    // A run: its config, the class names it trained on, and its checkpoint file (best.pt; the
    // caller checks that it is there: RunStore::checkpointProblem).
    std::optional<ExperimentConfig> run_config;
    std::vector<std::string> class_names;
    std::string checkpoint;
    // Or a checkpoint folder (config.json, weights, vocab.txt or tokenizer.json).
    std::string folder;
};

// Called after each batch of forward passes: the inputs predicted so far, and how many in all.
using PredictProgress = std::function<void(int64_t done, int64_t total)>;

struct PredictOptions {
    std::string input_csv;
    std::string output_csv;
    std::string text_column = "text";
    int64_t batch_size = 32;
    std::optional<int64_t> max_length;      // default: the run's data.max_length, or the folder model's positions (<= 512)
    std::optional<std::string> tokenizer;   // default: the run's, or the folder's own
    // The input's column of true classes, which scores the predictions (default: the run's
    // data.label_column where the input has it; a checkpoint folder has none).
    std::optional<std::string> label_column;
    PredictProgress on_progress;
};

struct PredictResult {
    int64_t rows = 0;
    std::vector<std::string> class_names;
    std::vector<int64_t> predicted_counts;   // rows per predicted class
    double seconds = 0.0;
    std::string device;
    std::vector<std::string> notes;          // e.g. texts truncated to max_length
    int64_t labelled = 0;                    // inputs whose true class is known (class folder, label column)
    int64_t correct = 0;                     // of those, predicted right
};

// Output columns: index (the row's 0-based number in the input), predicted (class name),
// confidence, true (a run's label column, where the input has it: those rows are scored), then
// prob:<class> for every class. Throws DataError (files, checkpoint) or
// ConfigError (a run whose config cannot rebuild its model).
PredictResult predictTextCsv(const PredictModel& model, const PredictOptions& options);

}  // namespace hearth
