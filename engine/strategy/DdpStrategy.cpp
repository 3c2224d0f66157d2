#include "engine/strategy/DdpStrategy.h"

#include "engine/train/Optimizers.h"

#include <algorithm>
#include <sstream>

namespace hearth {

DdpStrategy::DdpStrategy(std::shared_ptr<dist::ProcessGroup> group, torch::Device device,
                         const std::string& precision, dist::ReducerOptions options, bool shard_optimizer)
    : Strategy(std::make_unique<Precision>(precision, device)),
      group_(std::move(group)),
      device_(device),
      options_(options),
      shard_optimizer_(shard_optimizer) {}

DdpStrategy::~DdpStrategy() = default;

std::string DdpStrategy::describe() const {
    std::ostringstream s;
    s << (shard_optimizer_ ? "zero1 (optimizer state sharded) over " : "ddp over ") << group_->backend() << ", rank " << rank() << " of " << worldSize() << " (" << device_.str()
      << ")";
    if (options_.find_unused_parameters) s << ", find_unused_parameters";
    if (options_.gradient_as_bucket_view) s << ", gradient_as_bucket_view";
    return s.str();
}

void DdpStrategy::setupModel(ClassifierImpl& model, bool channels_last) {
    Strategy::setupModel(model, channels_last);
    buffers_.clear();
    for (auto& b : model.buffers()) buffers_.push_back(b);
    params_.clear();
    for (auto& p : model.parameters()) {
        if (p.requires_grad()) params_.push_back(p);
    }
    // The reducer broadcasts rank 0's parameters; the buffers follow here.
    reducer_ = std::make_unique<dist::GradientReducer>(*group_, params_, options_);
    if (!buffers_.empty()) {
        torch::NoGradGuard no_grad;
        group_->broadcast(buffers_, 0);
    }
}

torch::Tensor DdpStrategy::forward(ClassifierImpl& model, const Batch& batch) {
    if (torch::GradMode::is_enabled() && model.is_training()) {
        if (!buffers_.empty()) {
            torch::NoGradGuard no_grad;
            group_->broadcast(buffers_, 0);  // broadcast_buffers
        }
        reducer_->prepareForward();
    }
    return Strategy::forward(model, batch);
}

void DdpStrategy::backward(const torch::Tensor& loss, bool closes_group) {
    reducer_->prepareBackward(loss, /*sync=*/closes_group);
    Strategy::backward(loss, closes_group);
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
    return createOptimizer(config, own);
}

bool DdpStrategy::optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) {
    if (!shard_optimizer_) {
        return Strategy::optimizerStep(optimizer, clip_val);
    }
    // Every rank holds the same averaged gradients, so the global norm is computed locally.
    if (clip_val) {
        std::vector<torch::Tensor> with_grad;
        for (const auto& p : params_) {
            if (p.grad().defined()) with_grad.push_back(p);
        }
        torch::nn::utils::clip_grad_norm_(with_grad, *clip_val);
    }
    const bool stepped = precision().optimizerStep(optimizer, std::nullopt);
    zeroGrad(optimizer);
    // Each owner's updated parameters reach every rank.
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < params_.size(); ++i) {
        std::vector<torch::Tensor> one{params_[i].detach()};
        group_->broadcast(one, owners_[i]);
    }
    return stepped;
}

void DdpStrategy::zeroGrad(torch::optim::Optimizer& /*optimizer*/) {
    // In place: with gradient_as_bucket_view the gradients are views into the reducer's buckets.
    // Every trainable parameter (under zero1 the optimizer holds only this rank's share).
    torch::NoGradGuard no_grad;
    for (auto& p : params_) {
        if (p.grad().defined()) p.mutable_grad().zero_();
    }
}

void DdpStrategy::reduceSum(std::vector<double>& values) const {
    if (values.empty()) return;
    std::vector<torch::Tensor> t{torch::tensor(values, torch::kFloat64)};
    group_->allreduceSum(t);
    const auto summed = t[0].contiguous();
    std::copy(summed.data_ptr<double>(), summed.data_ptr<double>() + summed.numel(), values.begin());
}

bool DdpStrategy::agreeToStop(bool local) const {
    std::vector<torch::Tensor> t{torch::tensor({local ? 1.0 : 0.0}, torch::kFloat64)};
    group_->allreduceSum(t);
    return t[0].item<double>() > 0.0;
}

bool DdpStrategy::watchLoss(const torch::Tensor& loss, int64_t step) {
    // Recorded only: a rank must not fail alone while the others wait in a collective. The
    // ranks agree on the first bad step at the next metric sync (firstNonFiniteStep).
    if (precision().scalesLoss()) return false;
    torch::NoGradGuard no_grad;
    const auto bad = torch::logical_and(torch::logical_not(torch::isfinite(loss.detach())), first_bad_step_.eq(0));
    first_bad_step_.masked_fill_(bad, step);
    return false;
}

int64_t DdpStrategy::firstNonFiniteStep() {
    if (precision().scalesLoss() || !first_bad_step_.defined()) return 0;
    // The earliest bad step on any rank (0 = none), in one collective.
    const auto all = group_->allgather(first_bad_step_.to(torch::kCPU));
    int64_t first = 0;
    for (const auto& v : all) {
        const int64_t x = v.item<int64_t>();
        if (x > 0 && (first == 0 || x < first)) first = x;
    }
    return first;
}

}  // namespace hearth
