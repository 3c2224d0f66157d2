#pragma once
// DeviceStatsMonitor: the callback that watches the training device, as Lightning's
// DeviceStatsMonitor does: it samples memory and utilisation about once a second while training
// and evaluating (DeviceSample events), shares each rank's live numbers at every logged step and
// its whole summary at the end of fit (RankReport), and measures what filled memory at the fit's
// peak (MemoryBreakdown: parameters, gradients and optimizer state counted from the tensors at this
// fit's first optimizer step, a resumed fit's too; activations on a GPU as the most a forward pass keeps allocated for its
// backward, on the host from the counted tensor bytes at the training loop's peak, not the
// validation's or a checkpoint's), which it hands to the Trainer.

#include "engine/callbacks/Callback.h"
#include "engine/monitor/DeviceMonitor.h"

#include <cstdint>

namespace hearth {

class DeviceStatsMonitor final : public Callback {
public:
    // `device`: the strategy's (samples are marked with its rank when fit starts).
    explicit DeviceStatsMonitor(torch::Device device);

    void onFitStart(TrainerContext& ctx) override;
    void onResume(TrainerContext& ctx) override;
    void onTrainEpochStart(TrainerContext& ctx) override;
    void onForwardEnd(TrainerContext& ctx) override;
    void onBeforeOptimizerStep(TrainerContext& ctx) override;
    void onTrainBatchEnd(TrainerContext& ctx) override;
    void onMetricsSync(TrainerContext& ctx, double local_samples_per_sec) override;
    void onEvalBatchEnd(TrainerContext& ctx) override;
    void onFitEnd(TrainerContext& ctx) override;

    const DeviceMonitor& monitor() const { return monitor_; }
    // What filled memory at the last fit's peak (device empty when it made no optimizer step).
    const MemoryBreakdown& memoryBreakdown() const { return memory_; }

private:
    void measureMemory(TrainerContext& ctx);

    DeviceMonitor monitor_;
    MemoryBreakdown memory_;
    // This fit's first optimizer step (a resumed fit's is not global step 0): the global step it
    // closes (-1: none yet), and whether the optimizer's state was counted after it.
    int64_t first_step_ = -1;
    bool optimizer_state_measured_ = false;
    int64_t baseline_bytes_ = 0;          // what the process (or the device) held when fit started
    int64_t baseline_tensor_bytes_ = 0;   // tensor bytes then (-1: not counted)
    // CUDA: the allocated bytes after the last micro-batch, and the most that a forward pass added
    // to them (what it keeps for the backward, the batch included; -1 until measured).
    int64_t batch_end_bytes_ = 0;
    int64_t forward_kept_bytes_ = -1;
    // Host: the most tensor bytes held while the training loop ran (each epoch's from its start to
    // its last micro-batch); -1 until a micro-batch ran or when tensors are not counted.
    int64_t train_tensor_peak_ = -1;
};

}  // namespace hearth
