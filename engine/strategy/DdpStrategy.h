#pragma once
// DdpStrategy: data-parallel training as Python's DistributedDataParallel does it: the same
// starting weights on every rank, c10d's Reducer averaging gradient buckets during backward
// (skipped on accumulation micro-steps, like no_sync), gradients zeroed in place (the Reducer's
// bucket views stay valid). With shard_optimizer (trainer.strategy zero1, as torch's
// ZeroRedundancyOptimizer) each rank's optimizer holds only the parameters it owns (assigned
// greedily by size), steps them, and each owner broadcasts its updated parameters: optimizer
// state per rank is about 1/world. In a world of one there is no Reducer: the step is one
// device's (the process group still carries the run's own collectives, which launch nothing).

#include "engine/strategy/DistributedStrategy.h"

#include <memory>

namespace hearth {

class DdpStrategy final : public DistributedStrategy {
public:
    // Throws ConfigError("trainer.precision") when the device cannot run `precision`.
    DdpStrategy(std::shared_ptr<dist::ProcessGroup> group, torch::Device device, const std::string& precision,
                dist::ReducerOptions options, bool shard_optimizer = false);
    ~DdpStrategy() override;

    std::string name() const override { return shard_optimizer_ ? "zero1" : "ddp"; }
    std::string describe() const override;

    void setupModel(ClassifierImpl& model, bool channels_last) override;
    std::unique_ptr<torch::optim::Optimizer> setupOptimizer(const OptimizerConfig& config,
                                                            ClassifierImpl& model) override;
    void optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) override;
    void backward(const torch::Tensor& loss, bool closes_group) override;
    void zeroGrad(torch::optim::Optimizer& optimizer) override;
    dist::CommStats commStats() const override { return reducer_ ? reducer_->commStats() : dist::CommStats{}; }
    std::vector<torch::Tensor> gradientBuffers() const override;

private:
    void beforeTrainingForward() override;
    bool shardsOptimizer() const override { return shard_optimizer_; }
    bool reduces() const { return worldSize() > 1; }

    dist::ReducerOptions options_;
    std::unique_ptr<dist::GradientReducer> reducer_;
    bool shard_optimizer_ = false;
    std::vector<int64_t> owners_;  // zero1: owner rank per parameter
};

}  // namespace hearth
