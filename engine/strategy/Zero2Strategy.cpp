#include "engine/strategy/Zero2Strategy.h"

#include "engine/optim/Optimizers.h"

#include <algorithm>
#include <deque>
#include <optional>


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
    return shardOptimizer(config, {master_});
}

void Zero2Strategy::weightsReplaced() {
    // In place: the optimizer holds master_ itself.
    torch::NoGradGuard no_grad;
    master_.detach().copy_(flatten().narrow(0, rank() * slice_size_, slice_size_));
    DistributedStrategy::weightsReplaced();
}

void Zero2Strategy::backward(const torch::Tensor& loss, bool closes_group) {
    Strategy::backward(loss, closes_group);
    // Every micro-batch (also inside an accumulation group): the gradients, taken in flat order a
    // bucket at a time (whole parameters, trainer.ddp.bucket_cap_mb), each bucket's part of every
    // rank's slice summed onto that rank, which adds the average into its gradient shard; each
    // bucket's gradients are freed as soon as they are copied out. No full-size copy of the
    // gradients is ever made: besides them the step holds two buckets in flight. (The collective
    // time counted includes the copies into the buckets.)
    torch::NoGradGuard no_grad;
    if (!master_.grad().defined()) master_.mutable_grad() = torch::zeros_like(master_);
    struct InFlight {
        std::vector<std::unique_ptr<dist::ProcessGroup::Pending>> reduces;  // one per owner in the bucket
        std::optional<size_t> mine;  // which of them sums onto this rank
        int64_t shard_offset = 0;    // where that part goes in this rank's shard
    };
    auto finish = [&](InFlight& f) {
        for (size_t i = 0; i < f.reduces.size(); ++i) {
            auto summed = f.reduces[i]->wait();
            if (f.mine == i)
                master_.mutable_grad().narrow(0, f.shard_offset, summed.numel())
                    .add_(summed.div_(static_cast<double>(worldSize())));
        }
    };
    timeCollective([&] {
        std::deque<InFlight> flight;
        for (const auto& [first, last, start, end] : buckets()) {
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
            flight.push_back(std::move(f));
            if (flight.size() > 2) {  // the next bucket's copy overlaps these reduces
                finish(flight.front());
                flight.pop_front();
            }
        }
        for (auto& f : flight) finish(f);
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
