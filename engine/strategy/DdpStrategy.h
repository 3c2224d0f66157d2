#pragma once
// DdpStrategy: data-parallel training over a c10d process group, one process per device, as
// Python's DistributedDataParallel does it: the same starting weights on every rank, c10d's
// Reducer averaging gradient buckets during backward (skipped on accumulation micro-steps, like
// no_sync), buffers (BatchNorm statistics) broadcast from rank 0 before each training forward,
// gradients zeroed in place (the Reducer's bucket views stay valid), metrics summed across ranks,
// and one rank's stop or non-finite loss agreed by every rank at the same point of the loop.
// With shard_optimizer (trainer.strategy zero1, as torch's ZeroRedundancyOptimizer) each rank's
// optimizer holds only the parameters it owns (assigned greedily by size), steps them, and each
// owner broadcasts its updated parameters: optimizer state per rank is about 1/world.

#include "engine/dist/C10d.h"
#include "engine/strategy/Strategy.h"

#include <memory>

namespace hearth {

class DdpStrategy final : public Strategy {
public:
    // Throws ConfigError("trainer.precision") when the device cannot run `precision`.
    DdpStrategy(std::shared_ptr<dist::ProcessGroup> group, torch::Device device, const std::string& precision,
                dist::ReducerOptions options, bool shard_optimizer = false);
    ~DdpStrategy() override;

    std::string name() const override { return shard_optimizer_ ? "zero1" : "ddp"; }
    std::string describe() const override;
    torch::Device device() const override { return device_; }
    int64_t rank() const override { return group_->rank(); }
    int64_t worldSize() const override { return group_->worldSize(); }

    void setupModel(ClassifierImpl& model, bool channels_last) override;
    std::unique_ptr<torch::optim::Optimizer> setupOptimizer(const OptimizerConfig& config,
                                                            ClassifierImpl& model) override;
    bool optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) override;
    // zero1: the rank that owns each parameter (in model.parameters() order).
    const std::vector<int64_t>& owners() const { return owners_; }
    torch::Tensor forward(ClassifierImpl& model, const Batch& batch) override;
    void backward(const torch::Tensor& loss, bool closes_group) override;
    void zeroGrad(torch::optim::Optimizer& optimizer) override;
    void reduceSum(std::vector<double>& values) const override;
    bool agreeToStop(bool local) const override;
    bool watchLoss(const torch::Tensor& loss, int64_t step) override;
    int64_t firstNonFiniteStep() override;

private:
    std::shared_ptr<dist::ProcessGroup> group_;
    torch::Device device_;
    dist::ReducerOptions options_;
    std::unique_ptr<dist::GradientReducer> reducer_;
    std::vector<torch::Tensor> buffers_;
    bool shard_optimizer_ = false;
    std::vector<torch::Tensor> params_;  // every trainable parameter, in order
    std::vector<int64_t> owners_;        // zero1: owner rank per parameter
};

}  // namespace hearth
