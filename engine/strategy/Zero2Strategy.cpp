#include "engine/strategy/Zero2Strategy.h"

#include "engine/optim/Optimizers.h"

#include <algorithm>
#include <deque>


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
    // Every micro-batch (also inside an accumulation group): the gradients, taken in flat order a
    // bucket at a time (whole parameters, trainer.ddp.bucket_cap_mb), each bucket's part of every
    // rank's slice summed onto that rank, which adds the average into its gradient shard; each
    // bucket's gradients are freed as soon as they are copied out. No full-size copy of the
    // gradients is ever made: besides them the step holds a bucket or two in flight.
    torch::NoGradGuard no_grad;
    if (!master_.grad().defined()) master_.mutable_grad() = torch::zeros_like(master_);
    struct InFlight {
        std::vector<std::unique_ptr<dist::ProcessGroup::Pending>> reduces;  // one per owner in the bucket
        int64_t mine = -1;         // which of them sums onto this rank
        int64_t shard_offset = 0;  // where that part goes in this rank's shard
    };
    const int64_t me = rank();
    const int64_t world = worldSize();
    const double divisor = static_cast<double>(world);
    auto finish = [&](InFlight& f) {
        for (size_t i = 0; i < f.reduces.size(); ++i) {
            auto summed = f.reduces[i]->wait();
            if (static_cast<int64_t>(i) != f.mine) continue;
            master_.mutable_grad().narrow(0, f.shard_offset, summed.numel()).add_(summed.div_(divisor));
        }
    };
    timeCollective([&] {
        std::deque<InFlight> flight;
        const int64_t element = params_.empty() ? 4 : static_cast<int64_t>(params_.front().element_size());
        const int64_t cap = std::max<int64_t>(1, reduce_bucket_bytes_ / element);
        const int64_t padded = slice_size_ * world;
        size_t first = 0;
        int64_t start = 0;  // flat index of the bucket's first element
        while (start < padded) {
            // Whole parameters up to the cap (at least one); the last bucket takes the padding.
            size_t last = first;
            int64_t end = start;
            while (last < params_.size() && (last == first || end + params_[last].numel() - start <= cap)) {
                end += params_[last].numel();
                ++last;
            }
            if (last == params_.size()) end = padded;
            std::vector<torch::Tensor> members(params_.begin() + static_cast<std::ptrdiff_t>(first),
                                               params_.begin() + static_cast<std::ptrdiff_t>(last));
            const auto bucket = flattenPadded(members, end - start, /*grads=*/true);
            for (size_t i = first; i < last; ++i) {
                auto& p = params_[i];
                if (gradsToNone()) {
                    p.mutable_grad() = torch::Tensor();
                } else if (p.grad().defined()) {
                    p.mutable_grad().zero_();
                }
            }
            InFlight f;
            for (int64_t owner = start / slice_size_; owner < world && owner * slice_size_ < end; ++owner) {
                const int64_t lo = std::max(start, owner * slice_size_);
                const int64_t hi = std::min(end, (owner + 1) * slice_size_);
                f.reduces.push_back(group_->reduceSumAsync(bucket.narrow(0, lo - start, hi - lo), owner));
                if (owner != me) continue;
                f.mine = static_cast<int64_t>(f.reduces.size()) - 1;
                f.shard_offset = lo - owner * slice_size_;
            }
            // Two buckets in flight: the next one's copy overlaps this one's reduces.
            flight.push_back(std::move(f));
            if (flight.size() > 2) {
                finish(flight.front());
                flight.pop_front();
            }
            first = last;
            start = end;
        }
        while (!flight.empty()) {
            finish(flight.front());
            flight.pop_front();
        }
    });
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
