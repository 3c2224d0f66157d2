#pragma once
// OffloadedOptimizer (trainer.offload_optimizer, ZeRO-Offload): the optimizer of a sharded strategy
// stepping in host memory. It keeps a host copy of each tensor the strategy's optimizer would
// step, in that tensor's dtype (float32 master copies under mixed precision, whose parameters stay
// float32; pinned when the tensors live on a GPU), and the inner optimizer's state
// (moments, momentum) beside it, so the device holds neither. Its own param groups are the
// device tensors, so the loss scaler, gradient clipping, the learning-rate accessors and the
// memory accounting see what they see without offload; step() copies the device gradients to
// the host copies, steps the inner optimizer there (its fused or foreach CPU kernel where the
// build has one) and copies the updated values back. Save and load are the inner optimizer's:
// a training state written with offload loads without it, and the other way round.

#include "engine/config/ExperimentConfig.h"

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

namespace hearth {

class OffloadedOptimizer final : public torch::optim::Optimizer {
public:
    // The optimizer `config` asks for, over host copies of `device_tensors` (leaf tensors with
    // requires_grad, as any optimizer's parameters). Throws ConfigError as createOptimizer does.
    static std::unique_ptr<OffloadedOptimizer> create(const OptimizerConfig& config,
                                                      std::vector<torch::Tensor> device_tensors);

    // Copies the gradients to the host (a tensor without one is skipped, as by any optimizer),
    // steps there and copies the values back (asynchronously from pinned memory on a GPU: later
    // work on the device's stream sees them).
    torch::Tensor step(LossClosure closure = nullptr) override;
    void save(torch::serialize::OutputArchive& archive) const override;
    void load(torch::serialize::InputArchive& archive) override;

    // For whoever writes the device tensors outside step() (a resume, a finder's restore): the host
    // copies take their values again, while this optimizer lives (nothing after: a strategy may
    // outlive the optimizers it made).
    std::function<void()> followDevice() const;

    torch::optim::Optimizer& inner() { return *inner_; }
    const std::vector<torch::Tensor>& hostTensors() const { return copies_->host; }
    bool pinned() const { return pinned_; }
    // Wall time of the steps so far (copies in both directions and the host step), milliseconds.
    double stepMsTotal() const { return step_ms_total_; }
    int64_t steps() const { return steps_; }

private:
    OffloadedOptimizer(std::vector<torch::Tensor> device_tensors, std::vector<torch::Tensor> host,
                       std::unique_ptr<torch::optim::Optimizer> inner, bool pinned);

    struct Copies {
        std::vector<torch::Tensor> device;
        std::vector<torch::Tensor> host;     // leaf tensors the inner optimizer steps
        void valuesFromDevice() const;
    };
    std::shared_ptr<Copies> copies_;
    std::vector<torch::Tensor> host_grads_;  // their gradient buffers, allocated once
    std::unique_ptr<torch::optim::Optimizer> inner_;
    bool pinned_ = false;
    double step_ms_total_ = 0.0;
    int64_t steps_ = 0;
};

// `optimizer` as an OffloadedOptimizer, else null.
OffloadedOptimizer* offloaded(torch::optim::Optimizer& optimizer);

}  // namespace hearth
