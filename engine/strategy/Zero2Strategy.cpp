#include "engine/strategy/Zero2Strategy.h"

#include "engine/optim/Optimizers.h"


namespace hearth {

Zero2Strategy::Zero2Strategy(std::shared_ptr<dist::ProcessGroup> group, torch::Device device,
                             const std::string& precision)
    : DistributedStrategy(std::move(group), device, precision) {}

Zero2Strategy::~Zero2Strategy() = default;

std::string Zero2Strategy::describe() const {
    return "zero2 (gradients and optimizer state sharded, " + std::to_string(slice_size_) + " of " +
           std::to_string(flat_size_) + " elements per rank) over " + groupDescription() + offloadDescription();
}

void Zero2Strategy::setupModel(ClassifierImpl& model, bool channels_last) {
    DistributedStrategy::setupModel(model, channels_last);
    takeRankZerosWeights();
    flat_size_ = 0;
    for (const auto& p : params_) flat_size_ += p.numel();
    slice_size_ = (flat_size_ + worldSize() - 1) / worldSize();
}

// Every parameter (grads: its gradient, zeros where it has none) laid end to end, padded to
// world x slice; in the parameters' precision (float32, or float64 in the tests).
torch::Tensor Zero2Strategy::flatten(bool grads) const {
    return flattenPadded(params_, slice_size_ * worldSize(), grads);
}

void Zero2Strategy::scatterParameters(const torch::Tensor& flat) {
    int64_t offset = 0;
    for (auto& p : params_) {
        // copy_ goes by logical index, so a channels-last weight keeps its layout.
        p.detach().copy_(flat.narrow(0, offset, p.numel()).view(p.sizes()));
        offset += p.numel();
    }
}

std::unique_ptr<torch::optim::Optimizer> Zero2Strategy::setupOptimizer(const OptimizerConfig& config,
                                                                       ClassifierImpl& /*model*/) {
    torch::NoGradGuard no_grad;
    const auto flat = flatten(/*grads=*/false);
    master_ = flat.narrow(0, rank() * slice_size_, slice_size_).clone().set_requires_grad(true);
    return shardOptimizer(config, {master_});
}

void Zero2Strategy::weightsReplaced() {
    // In place: the optimizer holds master_ itself.
    torch::NoGradGuard no_grad;
    master_.detach().copy_(flatten(/*grads=*/false).narrow(0, rank() * slice_size_, slice_size_));
    DistributedStrategy::weightsReplaced();
}

void Zero2Strategy::backward(const torch::Tensor& loss, bool closes_group) {
    Strategy::backward(loss, closes_group);
    // Every micro-batch (also inside an accumulation group): reduce each slice onto its owner, keep
    // the average of this rank's slice, and free the full gradients.
    torch::NoGradGuard no_grad;
    auto flat = flatten(/*grads=*/true);
    torch::Tensor mine;
    timeCollective([&] { mine = group_->reduceScatterSum(flat).div_(static_cast<double>(worldSize())); });
    if (master_.grad().defined()) {
        master_.mutable_grad().add_(mine);
    } else {
        master_.mutable_grad() = mine.clone();
    }
    for (auto& p : params_) {
        if (gradsToNone()) {
            p.mutable_grad() = torch::Tensor();
        } else if (p.grad().defined()) {
            p.mutable_grad().zero_();
        }
    }
}

void Zero2Strategy::optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) {
    precision().optimizerStep(optimizer, clip_val, sumAcrossRanks());
    zeroGrad(optimizer);
    torch::NoGradGuard no_grad;
    torch::Tensor gathered;
    timeCollective([&] { gathered = group_->allgatherFlat(master_.detach()); });
    stepTimed();
    scatterParameters(gathered);
}

void Zero2Strategy::zeroGrad(torch::optim::Optimizer& /*optimizer*/) {
    torch::NoGradGuard no_grad;
    if (master_.grad().defined()) master_.mutable_grad().zero_();
    for (auto& p : params_) {
        if (gradsToNone()) {
            p.mutable_grad() = torch::Tensor();
        } else if (p.grad().defined()) {
            p.mutable_grad().zero_();
        }
    }
}

}  // namespace hearth
