#pragma once
// BestCheckpoint: the callback that keeps the best model state seen so far by a monitored
// metric (like Lightning's ModelCheckpoint(save_top_k=1)): given a directory as best.pt (model +
// optimizer state, written through the strategy), which the test phase reads back; otherwise (and
// on the ranks that do not write the file) as a copy on the host. Never a second copy of the model
// on its device: that would hold the model's size of device memory for the whole fit and count
// as activations in the memory breakdown. Before the test phase it puts the best weights back.

#include "engine/callbacks/Callback.h"
#include "engine/config/ExperimentConfig.h"
#include "engine/events/Events.h"
#include "engine/strategy/CheckpointFile.h"

#include <torch/torch.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hearth {

class BestCheckpoint final : public Callback {
public:
    // monitor: val_acc | val_loss; mode: max | min. directory "" keeps the state in memory only.
    // Throws ConfigError for another monitor or mode.
    BestCheckpoint(CheckpointConfig config, std::string directory);

    void onValidationEnd(TrainerContext& ctx, EpochEnd& epoch) override;
    void onTestStart(TrainerContext& ctx) override;

    bool hasState() const { return on_disk_ || !state_.empty(); }
    int64_t bestEpoch() const { return best_epoch_; }
    std::optional<double> bestValue() const { return best_; }
    std::string path() const;  // "" without a directory
    // Copies the best weights back into the model (same architecture), from best.pt or the host copy.
    void restore(torch::nn::Module& model) const;

    // Resume: the best value and epoch; the snapshot itself is read back from best.pt.
    std::string stateKey() const override { return "best_checkpoint"; }
    std::string stateJson() const override;
    void loadState(TrainerContext& ctx, const std::string& json) override;

private:
    bool isBetter(double value) const;
    void keep(TrainerContext& ctx, double value);

    CheckpointConfig config_;
    std::string directory_;
    std::optional<double> best_;
    int64_t best_epoch_ = -1;
    bool on_disk_ = false;  // best.pt, written by this rank, holds the best weights (nothing kept here)
    std::vector<std::pair<std::string, torch::Tensor>> state_;  // otherwise: parameters and buffers, on the host
};

}  // namespace hearth
