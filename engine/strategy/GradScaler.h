#pragma once
// GradScaler: dynamic loss scaling for 16-mixed training, with the semantics of PyTorch's
// torch.amp.GradScaler (scale, unscale_ once before clipping, step that skips on inf/nan,
// update that backs off or grows the scale). LibTorch has no C++ GradScaler.

#include <torch/torch.h>

#include <cstdint>
#include <functional>

namespace hearth {

// Sums a tensor in place over every rank of a sharded optimizer (empty: one rank holds it all).
using SumAcrossRanks = std::function<void(torch::Tensor&)>;

struct GradScalerOptions {
    double init_scale = 65536.0;  // 2^16
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    int64_t growth_interval = 2000;  // consecutive good steps before the scale grows
};

// What a training state keeps of a scaler, to continue it exactly.
struct GradScalerState {
    double scale = 65536.0;
    int64_t growth_tracker = 0;   // consecutive good steps since the scale last changed
};

class GradScaler final {
public:
    explicit GradScaler(GradScalerOptions options = {});

    // loss * scale; creates the scale on the loss's device at the first call.
    torch::Tensor scale(const torch::Tensor& loss);
    // Divides every gradient by the scale and records whether any was inf/nan. Once per step.
    // When each rank's optimizer holds a shard, sum_across_ranks makes every rank agree: an
    // inf on one rank's shard skips the step everywhere.
    void unscale_(torch::optim::Optimizer& optimizer, const SumAcrossRanks& sum_across_ranks = {});
    // Steps unless an inf/nan was found. A fused optimizer (ScalerAwareOptimizer) gets the scale
    // and the inf flag and unscales and skips on the device: no host sync. Any other is unscaled
    // here if unscale_ was not called, and the flag is read back (one sync, as PyTorch's).
    void step(torch::optim::Optimizer& optimizer, const SumAcrossRanks& sum_across_ranks = {});
    // Backs off after a skipped step, grows after growth_interval good ones. Ends the step.
    void update();

    // Steps skipped since the last call (reads the device's count: a sync; call once per log).
    int64_t takeSkippedSteps();
    double currentScale() const;    // host copy (syncs)
    int64_t growthTracker() const;  // host copy (syncs)
    GradScalerState state() const { return {currentScale(), growthTracker()}; }
    // Continues from `state` (before the first step: from then on, on the loss's device).
    void loadState(const GradScalerState& state);
    const GradScalerOptions& options() const { return options_; }

private:
    enum class Stage { Ready, Unscaled, Stepped };
    void lazyInit(const torch::Device& device);
    std::vector<torch::Tensor> gradientsOf(torch::optim::Optimizer& optimizer);
    // found_inf_ over `grads` multiplied by inv_scale, agreed over the ranks, as exactly 0 or 1.
    void findInf(std::vector<torch::Tensor>& grads, const torch::Tensor& inv_scale,
                 const SumAcrossRanks& sum_across_ranks);
    void updateOnDevice();

    GradScalerOptions options_;
    GradScalerState initial_;       // what lazyInit creates: the options' scale, or a loaded state
    torch::Tensor scale_;           // float32 [1]
    torch::Tensor growth_tracker_;  // int32 [1]
    torch::Tensor found_inf_;       // float32 [1]: 1 when this step saw inf/nan
    torch::Tensor one_;             // float32 [1]: the inv_scale of a check that does not unscale
    torch::Tensor skipped_;         // float32 [1]: steps skipped since takeSkippedSteps last read it
    Stage stage_ = Stage::Ready;
};

}  // namespace hearth
