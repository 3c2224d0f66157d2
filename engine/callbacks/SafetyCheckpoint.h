#pragma once
// SafetyCheckpoint: the callback that writes the fit's whole training state (TrainingState) into
// the run's artifacts folder as state-<optimizer step>.pt, every N optimizer steps and/or M
// minutes (trainer.safety_checkpoint) and when a stop ends the fit (also one during or after an
// epoch's validation), keeping the last K. A stopped, interrupted (kill -9, power loss) or failed
// run resumes from the newest (hearth-cli resume). A state can only be written between logged
// optimizer steps: a save that falls due elsewhere waits for the next such point.
//
// Data-parallel, it runs on every rank: saving is a collective (each rank's part gathered into
// rank 0's file), so the ranks decide together, at the same logged steps, whether a save is due
// (any rank's clock or stop request makes it so). Rank 0 alone writes, prunes and reports; the
// others pass an empty directory or, resuming, the run's, which they only read.

#include "engine/callbacks/Callback.h"
#include "engine/config/ExperimentConfig.h"
#include "engine/train/StateFiles.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hearth {

class SafetyCheckpoint final : public Callback {
public:
    SafetyCheckpoint(SafetyCheckpointConfig config, std::string directory);

    void onFitStart(TrainerContext& ctx) override;
    void onTrainBatchEnd(TrainerContext& ctx) override;
    void onTrainStopped(TrainerContext& ctx) override;

    // Resume: states newer than the one resumed from belong to the abandoned continuation and go.
    std::string stateKey() const override { return "safety_checkpoint"; }
    void loadState(TrainerContext& ctx, const std::string& json) override;

private:
    bool due(TrainerContext& ctx) const;
    void save(TrainerContext& ctx, bool on_stop);
    bool writes(TrainerContext& ctx) const;   // rank 0 with a folder

    SafetyCheckpointConfig config_;
    std::string directory_;
    std::chrono::steady_clock::time_point last_save_;
    int64_t last_step_ = -1;               // optimizer step of the newest state (-1: none yet)
    std::pair<int64_t, int64_t> attempted_{-1, -1};  // (epoch, step) of the last save tried (alike on every rank)
    std::vector<std::string> kept_;        // oldest first
    bool enabled_ = true;                  // false: rank 0 has nowhere to write (no run folder)
};

}  // namespace hearth
