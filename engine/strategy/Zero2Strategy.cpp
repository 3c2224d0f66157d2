#include "engine/strategy/Zero2Strategy.h"

#include "engine/optim/Optimizers.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <stdexcept>

namespace hearth {

Zero2Strategy::Zero2Strategy(std::shared_ptr<dist::ProcessGroup> group, torch::Device device,
                             const std::string& precision)
    : DistributedStrategy(std::move(group), device, precision) {}

Zero2Strategy::~Zero2Strategy() {
    for (auto& [node, key] : hooks_) static_cast<torch::autograd::Node*>(node.get())->del_post_hook(key);
}

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

// Every parameter laid end to end, padded to world x slice; in the parameters' precision
// (float32, or float64 in the tests).
torch::Tensor Zero2Strategy::flatten() const {
    return flattenPadded(params_, slice_size_ * worldSize(), /*grads=*/false);
}

// Parameters [first, last): their gradients released (trainer.set_grads_to_none) or zeroed.
void Zero2Strategy::releaseGrads(size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
        auto& p = params_[i];
        if (gradsToNone()) {
            p.mutable_grad() = torch::Tensor();
        } else if (p.grad().defined()) {
            p.mutable_grad().zero_();
        }
    }
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
    const auto flat = flatten();
    master_ = flat.narrow(0, rank() * slice_size_, slice_size_).clone().set_requires_grad(true);
    watchGradients();
    return shardOptimizer(config, {master_});
}

void Zero2Strategy::watchGradients() {
    for (auto& [node, key] : hooks_) static_cast<torch::autograd::Node*>(node.get())->del_post_hook(key);
    hooks_.clear();
    plan_ = buckets();
    bucket_of_.assign(params_.size(), 0);
    for (size_t b = 0; b < plan_.size(); ++b)
        for (size_t i = plan_[b].first; i < plan_[b].last; ++i) bucket_of_[i] = b;
    for (size_t i = 0; i < params_.size(); ++i) {
        std::shared_ptr<torch::autograd::Node> accumulator = torch::autograd::impl::grad_accumulator(params_[i]);
        if (!accumulator) continue;   // never gets a gradient: its bucket goes when backward ends
        const uintptr_t key = accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
            [this, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
                gradientReady(i);
                return outputs;
            }));
        hooks_.emplace_back(std::move(accumulator), key);
    }
}

void Zero2Strategy::gradientReady(size_t param) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!in_backward_) return;   // a backward of its own (a finder's probe): nothing to reduce
    if (ready_[param])
        throw std::runtime_error("zero2: parameter " + std::to_string(param) + " of " + std::to_string(params_.size()) +
                                 " received a second gradient in one backward after its bucket was reduced (a "
                                 "weight used both inside and outside a recomputed block?); use trainer.strategy "
                                 "ddp or zero3 for this model");
    ready_[param] = 1;
    const size_t b = bucket_of_[param];
    if (--waiting_[b] == 0) {
        torch::NoGradGuard no_grad;
        launch(b);
    }
}

void Zero2Strategy::launch(size_t b) {
    const auto& [first, last, start, end] = plan_[b];
    launched_[b] = 1;
    const std::vector<torch::Tensor> members(params_.begin() + static_cast<std::ptrdiff_t>(first),
                                             params_.begin() + static_cast<std::ptrdiff_t>(last));
    const auto bucket = flattenPadded(members, end - start, /*grads=*/true);
    releaseGrads(first, last);
    InFlight f;
    for (int64_t owner = start / slice_size_; owner < worldSize() && owner * slice_size_ < end; ++owner) {
        const int64_t lo = std::max(start, owner * slice_size_);
        const int64_t hi = std::min(end, (owner + 1) * slice_size_);
        if (owner == rank()) {
            f.mine = f.reduces.size();
            f.shard_offset = lo - owner * slice_size_;
        }
        f.reduces.push_back(group_->reduceSumAsync(bucket.narrow(0, lo - start, hi - lo), owner));
    }
    flight_.push_back(std::move(f));
    if (flight_.size() > 2) finishOldest();   // the next bucket's copy overlaps these reduces
}

void Zero2Strategy::finishOldest() {
    InFlight& f = flight_.front();
    for (size_t i = 0; i < f.reduces.size(); ++i) {
        auto summed = f.reduces[i]->wait();
        if (f.mine == i)
            master_.mutable_grad().narrow(0, f.shard_offset, summed.numel()).add_(summed.div_(static_cast<double>(worldSize())));
    }
    flight_.pop_front();
}

void Zero2Strategy::weightsReplaced() {
    // In place: the optimizer holds master_ itself.
    torch::NoGradGuard no_grad;
    master_.detach().copy_(flatten().narrow(0, rank() * slice_size_, slice_size_));
    DistributedStrategy::weightsReplaced();
}

void Zero2Strategy::backward(const torch::Tensor& loss, bool closes_group) {
    // Every micro-batch (also inside an accumulation group): the buckets reduced as their
    // gradients arrive (gradientReady), then the ones still waiting (parameters without a
    // gradient), then every reduce finished. The collective time counted here is what backward
    // left: the last buckets and the waits (the ones started during backward overlap it).
    {
        torch::NoGradGuard no_grad;
        if (!master_.grad().defined()) master_.mutable_grad() = torch::zeros_like(master_);
        const std::lock_guard<std::mutex> lock(mutex_);
        waiting_.clear();
        for (const auto& bucket : plan_) waiting_.push_back(bucket.last - bucket.first);
        ready_.assign(params_.size(), 0);
        launched_.assign(plan_.size(), 0);
        in_backward_ = true;
    }
    try {
        Strategy::backward(loss, closes_group);
    } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex_);
        in_backward_ = false;
        flight_.clear();
        throw;
    }
    torch::NoGradGuard no_grad;
    const std::lock_guard<std::mutex> lock(mutex_);
    in_backward_ = false;
    timeCollective([&] {
        for (size_t b = 0; b < plan_.size(); ++b)
            if (!launched_[b]) launch(b);
        while (!flight_.empty()) finishOldest();
    });
}

std::vector<Zero2Strategy::Bucket> Zero2Strategy::buckets() const {
    std::vector<Bucket> out;
    const int64_t padded = slice_size_ * worldSize();
    if (params_.empty()) return out;
    const int64_t cap = std::max<int64_t>(1, reduce_bucket_bytes_ / static_cast<int64_t>(params_.front().element_size()));
    size_t first = 0;
    int64_t start = 0;
    while (first < params_.size()) {
        // Whole parameters up to the cap (at least one); the last bucket takes the padding.
        size_t last = first;
        int64_t end = start;
        while (last < params_.size() && (last == first || end + params_[last].numel() - start <= cap))
            end += params_[last++].numel();
        if (last == params_.size()) end = padded;
        out.push_back({first, last, start, end});
        first = last;
        start = end;
    }
    return out;
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
    releaseGrads(0, params_.size());
}

}  // namespace hearth
