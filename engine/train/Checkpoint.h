#pragma once
// BestCheckpoint: keeps the best model state seen so far by a monitored metric (like
// Lightning's ModelCheckpoint(save_top_k=1)), in memory and, given a directory, as best.pt
// (model + optimizer state, written with LibTorch's serializer).

#include "engine/config/ExperimentConfig.h"
#include "engine/events/Events.h"

#include <torch/torch.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hearth {

class BestCheckpoint final {
public:
    // monitor: val_acc | val_loss; mode: max | min. directory "" keeps the state in memory only.
    BestCheckpoint(CheckpointConfig config, std::string directory);

    // Offers this epoch's metric; when it improves, snapshots the model and (with a directory)
    // writes best.pt. Returns the saved-file event when a file was written.
    std::optional<CheckpointSaved> offer(double value, int64_t epoch, const torch::nn::Module& model,
                                         torch::optim::Optimizer& optimizer);
    // Without a validation split: every epoch replaces the snapshot (the last epoch wins).
    std::optional<CheckpointSaved> offerAlways(int64_t epoch, const torch::nn::Module& model,
                                               torch::optim::Optimizer& optimizer);
    bool improvedLast() const { return improved_last_; }
    bool hasState() const { return !state_.empty(); }
    int64_t bestEpoch() const { return best_epoch_; }
    std::optional<double> bestValue() const { return best_; }
    std::string path() const;  // "" without a directory
    // Copies the best snapshot back into the model (same architecture).
    void restore(torch::nn::Module& model) const;

private:
    bool isBetter(double value) const;
    std::optional<CheckpointSaved> keep(double value, int64_t epoch, const torch::nn::Module& model,
                                        torch::optim::Optimizer& optimizer);

    CheckpointConfig config_;
    std::string directory_;
    std::optional<double> best_;
    int64_t best_epoch_ = -1;
    bool improved_last_ = false;
    std::vector<std::pair<std::string, torch::Tensor>> state_;  // parameters and buffers
};

// Writes model (+ optimizer, when given) state to `path` in one archive: "model", "optimizer".
void saveCheckpointFile(const std::string& path, const torch::nn::Module& model, torch::optim::Optimizer* optimizer);
// Loads the "model" part of a file written by saveCheckpointFile into `model`.
void loadCheckpointFile(const std::string& path, torch::nn::Module& model);

}  // namespace hearth
