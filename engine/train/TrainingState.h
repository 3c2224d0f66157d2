#pragma once
// TrainingState: what a fit needs to continue bit for bit where it stopped, as one file (a
// LibTorch archive): the model's parameters and buffers, the optimizer state, the GradScaler's
// scale and growth tracker, the CPU random generator (dropout), the loop position (LoopState:
// epoch, micro-batch within it, optimizer steps), the interrupted epoch's running totals, the
// fit's elapsed time, and the callbacks' own state as JSON. The loaders need nothing: their
// order and augmentation are functions of the seed, the epoch and the sample.
//
// Reading checks the whole file before changing anything: a file that is not a training state
// (or is damaged), one from a model with other parameters, or one written by a newer Hearth is
// refused with a TrainingStateError naming the file and the problem, and the model and
// optimizer stay as they were.

#include "engine/strategy/GradScaler.h"
#include "engine/train/LoopState.h"

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace hearth {

// The format this Hearth writes and the newest it reads.
constexpr int64_t kTrainingStateFormat = 1;

class TrainingStateError : public std::runtime_error {
public:
    explicit TrainingStateError(const std::string& message) : std::runtime_error(message) {}
};

// The running totals of the epoch in progress (so its EpochMetrics come out as uninterrupted).
struct EpochProgress {
    double loss_sum = 0.0;
    int64_t correct = 0, samples = 0, batches = 0;   // summed over ranks, as the epoch's meter holds them
    int64_t local_samples = 0;                       // this rank's
    int64_t skipped_steps = 0;
    double wait_ms = 0.0;
    double train_time_s = 0.0;

    bool operator==(const EpochProgress& o) const;
};

// The fit's totals over its completed epochs (its samples/s and per-rank report continue).
struct FitTotals {
    double train_s = 0.0;            // pure training time
    int64_t samples = 0;             // training samples, summed over ranks
    int64_t rank_samples = 0;        // this rank's
    double rank_train_s = 0.0;
    double rank_wait_s = 0.0;
    double best_val_accuracy = 0.0;

    bool operator==(const FitTotals& o) const;
};

struct TrainingState {
    int64_t format = kTrainingStateFormat;
    LoopState loop;
    EpochProgress epoch;
    FitTotals fit;
    double elapsed_s = 0.0;                 // the fit's time so far: the curves' time axis continues
    std::optional<GradScalerState> scaler;   // 16-mixed only
    std::string callbacks_json = "{}";      // {"<callback>": {...}}, each callback's own
    torch::Tensor cpu_rng;                  // the default CPU generator's state (uint8)
};

// The default CPU generator's state, and back.
torch::Tensor cpuRngState();
void setCpuRngState(const torch::Tensor& state);

// "name:shape;..." of the model's parameters and buffers: two models can exchange states when
// these are equal.
std::string modelSignature(const torch::nn::Module& model);

// Writes atomically (a temporary file renamed over `path`). Throws TrainingStateError.
void saveTrainingState(const std::string& path, const TrainingState& state, const torch::nn::Module& model,
                       torch::optim::Optimizer& optimizer);
// Checks the file, then loads the model's tensors and the optimizer state, and returns the rest.
// Throws TrainingStateError (nothing changed).
TrainingState loadTrainingState(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer);

}  // namespace hearth
