#include "engine/strategy/DdpStrategy.h"

#include "engine/optim/Optimizers.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace hearth {

DdpStrategy::DdpStrategy(std::shared_ptr<dist::ProcessGroup> group, torch::Device device,
                         const std::string& precision, dist::ReducerOptions options, bool shard_optimizer)
    : DistributedStrategy(std::move(group), device, precision), options_(options), shard_optimizer_(shard_optimizer) {}

DdpStrategy::~DdpStrategy() = default;

std::string DdpStrategy::describe() const {
    std::ostringstream s;
    s << (shard_optimizer_ ? "zero1 (optimizer state sharded) over " : "ddp over ") << groupDescription()
      << offloadDescription();
    if (!reduces()) {
        // Nothing to average: backward's gradients are the world's (see setupModel).
        s << ", one process: no gradient reduction";
        return s.str();
    }
    if (options_.find_unused_parameters) s << ", find_unused_parameters";
    if (options_.gradient_as_bucket_view) s << ", gradient_as_bucket_view";
    return s.str();
}

void DdpStrategy::setupModel(ClassifierImpl& model, bool channels_last) {
    DistributedStrategy::setupModel(model, channels_last);
    // In a world of one there is nothing to average and no peer to start from: no reducer. Its
    // autograd hook per parameter, bucket copies and bookkeeping buy nothing there, and on an H200
    // ddp in a world of one ran 7-26% behind one device, the difference in backward
    // (docs/benchmarks/gpu.md). The step is then one device's.
    if (!reduces()) return;
    // The reducer broadcasts rank 0's parameters; the buffers follow here.
    reducer_ = std::make_unique<dist::GradientReducer>(*group_, params_, options_);
    if (!buffers_.empty()) {
        torch::NoGradGuard no_grad;
        group_->broadcast(buffers_, 0);
    }
}

std::vector<torch::Tensor> DdpStrategy::gradientBuffers() const {
    return reducer_ ? reducer_->buckets() : std::vector<torch::Tensor>{};
}

void DdpStrategy::beforeTrainingForward() {
    if (reducer_) reducer_->prepareForward();
}

void DdpStrategy::backward(const torch::Tensor& loss, bool closes_group) {
    if (!reducer_) {
        Strategy::backward(loss, closes_group);
        return;
    }
    reducer_->prepareBackward(loss, /*sync=*/closes_group);
    try {
        Strategy::backward(loss, closes_group);
    } catch (const std::exception& e) {
        // The Reducer's allreduce runs inside backward: a transport error there means a peer left.
        const std::string what = e.what();
        if (what.find("gloo") == std::string::npos && what.find("NCCL") == std::string::npos) throw;
        throw std::runtime_error("the gradient allreduce across " + std::to_string(worldSize()) +
                                 " processes failed (another rank stopped or timed out): " + what);
    }
}

std::unique_ptr<torch::optim::Optimizer> DdpStrategy::setupOptimizer(const OptimizerConfig& config,
                                                                     ClassifierImpl& model) {
    if (!shard_optimizer_) {
        return Strategy::setupOptimizer(config, model);
    }
    // Greedy by size, in parameter order: each parameter goes to the least-loaded rank.
    std::vector<int64_t> load(static_cast<size_t>(worldSize()), 0);
    owners_.clear();
    std::vector<torch::Tensor> own;
    for (const auto& p : params_) {
        const auto owner = static_cast<int64_t>(std::min_element(load.begin(), load.end()) - load.begin());
        load[static_cast<size_t>(owner)] += p.numel();
        owners_.push_back(owner);
        if (owner == rank()) own.push_back(p);
    }
    return shardOptimizer(config, own);
}

void DdpStrategy::optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) {
    if (!shard_optimizer_) {
        Strategy::optimizerStep(optimizer, clip_val);
        return;
    }
    // Each rank unscales and clips its own parameters; the inf check and the norm cover all.
    precision().optimizerStep(optimizer, clip_val, sumAcrossRanks());
    zeroGrad(optimizer);
    // Each owner's updated parameters reach every rank: one coalesced broadcast per owner.
    torch::NoGradGuard no_grad;
    for (int64_t owner = 0; owner < worldSize(); ++owner) {
        std::vector<torch::Tensor> owned;
        for (size_t i = 0; i < params_.size(); ++i) {
            if (owners_[i] == owner) owned.push_back(params_[i].detach());
        }
        group_->broadcast(owned, owner);
    }
}

void DdpStrategy::zeroGrad(torch::optim::Optimizer& /*optimizer*/) {
    // Every trainable parameter (under zero1 the optimizer holds only this rank's share).
    torch::NoGradGuard no_grad;
    if (gradsToNone()) {
        // As Python's DDP after zero_grad(set_to_none=True): backward's gradient is then copied
        // into its bucket, where the Reducer points the parameter's gradient again; zeroing the
        // buckets and adding into them is two passes more over every gradient. The buckets keep
        // their memory either way.
        for (auto& p : params_) p.mutable_grad() = torch::Tensor();
        return;
    }
    // In place: with gradient_as_bucket_view the gradients are views into the reducer's buckets.
    std::vector<torch::Tensor> grads;
    grads.reserve(params_.size());
    for (auto& p : params_) {
        if (p.grad().defined()) grads.push_back(p.mutable_grad());
    }
    if (!grads.empty()) at::_foreach_zero_(grads);   // one multi-tensor kernel, not one per parameter
}

}  // namespace hearth
