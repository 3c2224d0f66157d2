#pragma once
// TrainingState: what a fit needs to continue bit for bit where it stopped, as one file (a
// LibTorch archive): the model's parameters and buffers, the optimizer state, the GradScaler's
// scale and growth tracker, the CPU random generator (dropout), the fit's progress (FitProgress:
// the loop position, the interrupted epoch's running totals, the fit's totals and elapsed time,
// as the loop holds it), and the callbacks' own state as JSON; on a CUDA device its generator too.
// The loaders need nothing: their order and augmentation are functions of the seed, the epoch
// and the sample.
//
// A data-parallel fit writes one file on rank 0 (format 2): the model once (every rank holds the
// same weights), rank 0's part at the top, and for every other rank its own part: its progress
// (its share of the samples and timings), its generators, and under zero1/zero2 its optimizer
// share. Every rank reads the file (on several nodes it must be on a shared filesystem, as
// checkpoints are) and takes its own part; a file from a run of another world size is refused.
//
// Reading checks the whole file before changing anything: a file that is not a training state
// (or is damaged), one from a model with other parameters, or one written by a newer Hearth is
// refused with a TrainingStateError naming the file and the problem, and the model and
// optimizer stay as they were.

#include "engine/strategy/GradScaler.h"
#include "engine/train/FitProgress.h"
#include "engine/train/RandomState.h"

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hearth {

class Strategy;

// The newest format this Hearth reads; one process writes format 1 (readable by the Hearth that
// introduced training states), a data-parallel fit format 2.
constexpr int64_t kTrainingStateFormat = 2;

class TrainingStateError : public std::runtime_error {
public:
    explicit TrainingStateError(const std::string& message) : std::runtime_error(message) {}
};

struct TrainingState {
    int64_t format = 1;   // as read; a write uses at least the format its content needs
    FitProgress progress;                   // the loop's own value, saved whole
    std::optional<GradScalerState> scaler;   // 16-mixed only
    std::string callbacks_json = "{}";      // {"<callback>": {...}}, each callback's own
    torch::Tensor cpu_rng;                  // the default CPU generator's state (uint8)
    torch::Tensor cuda_rng;                 // the model's CUDA device's generator (undefined on CPU)
};

// "name:shape;..." of the model's parameters and buffers: two models can exchange states when
// these are equal.
std::string modelSignature(const torch::nn::Module& model);

// The model's tensors from an archive in Module::save's layout, copied into the model's own
// tensors: a strategy may hold views of them (zero2's flat buffers), which Module::load, which
// swaps their storage, would leave behind. Throws std::runtime_error (a missing or mis-shaped one).
void copyModelTensors(torch::serialize::InputArchive& archive, torch::nn::Module& model);

// One rank's part of a data-parallel state, as bytes (what rank 0 gathers): its progress, its
// generators and, when the optimizer is sharded, its optimizer share (`optimizer` null: not).
torch::Tensor rankStatePart(const TrainingState& state, torch::optim::Optimizer* optimizer);

// Writes atomically (a temporary file renamed over `path`). `rank_parts`: every rank's
// rankStatePart in rank order (data-parallel; empty for one process), `state` and `optimizer`
// being rank 0's. Throws TrainingStateError.
void saveTrainingState(const std::string& path, const TrainingState& state, const torch::nn::Module& model,
                       torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& rank_parts = {});
// Checks the file, then loads the model's tensors and rank `rank`'s optimizer state, and returns
// the rest of that rank's part. Throws TrainingStateError (nothing changed), also when the file
// was written by a run of another number of processes.
TrainingState loadTrainingState(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                                int64_t rank = 0, int64_t world_size = 1);

// A fit's side of the two, through its strategy. Resuming: this rank's part is loaded, checked to
// have this run's precision, and every rank agrees that all could (one agreeToStop), so a refused
// state leaves no rank waiting in a collective; then the strategy hears that the weights were
// replaced. Saving: one process writes `path`; data-parallel it is a collective, every rank's part
// gathered into rank 0's file (the other ranks pass ""). Throw TrainingStateError.
TrainingState resumeTrainingState(const std::string& path, torch::nn::Module& model,
                                  torch::optim::Optimizer& optimizer, Strategy& strategy);
void saveTrainingStateAcrossRanks(const std::string& path, const TrainingState& state, const torch::nn::Module& model,
                                  torch::optim::Optimizer& optimizer, Strategy& strategy);

}  // namespace hearth
