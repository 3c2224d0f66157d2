#include "engine/strategy/Zero3Strategy.h"

#include "engine/optim/Optimizers.h"
#include "engine/strategy/ParameterStorage.h"

#include <algorithm>
#include <unordered_map>

namespace hearth {

Zero3Strategy::Zero3Strategy(std::shared_ptr<dist::ProcessGroup> group, torch::Device device,
                             const std::string& precision, int64_t blocks_per_unit, bool prefetch)
    : DistributedStrategy(std::move(group), device, precision),
      blocks_per_unit_(static_cast<size_t>(std::max<int64_t>(blocks_per_unit, 1))), prefetch_enabled_(prefetch) {}

Zero3Strategy::~Zero3Strategy() {
    if (model_) model_->setBlockHooks(nullptr);
}

std::string Zero3Strategy::describe() const {
    int64_t elements = 0;
    for (const auto& u : units_) elements += u.numel;
    return "zero3 (parameters, gradients and optimizer state sharded: " +
           std::to_string(master_.defined() ? master_.numel() : 0) + " of " + std::to_string(elements) +
           " elements per rank, gathered in " + std::to_string(units_.empty() ? 0 : units_.size() - 1) +
           " units of up to " + std::to_string(blocks_per_unit_) + " block(s) and a root unit" +
           (prefetch_enabled_ ? ", the next prefetched" : "") + ") over " +
           groupDescription() + offloadDescription();
}

void Zero3Strategy::setupModel(ClassifierImpl& model, bool channels_last) {
    DistributedStrategy::setupModel(model, channels_last);
    takeRankZerosWeights();
    torch::NoGradGuard no_grad;
    // Units: each trainable parameter in its block's unit, the rest in the root unit; params_ order.
    const auto blocks = model.blockParameters();
    blocks_ = blocks.size();
    std::unordered_map<const void*, size_t> unit_of;
    for (size_t b = 0; b < blocks.size(); ++b)
        for (const auto& p : blocks[b]) unit_of[p.unsafeGetTensorImpl()] = unitOf(b);
    units_.assign(blocks_ == 0 ? 1 : unitOf(blocks_ - 1) + 1, Unit{});
    for (const auto& p : params_) {
        const auto it = unit_of.find(p.unsafeGetTensorImpl());
        Unit& unit = units_[it == unit_of.end() ? 0 : it->second];
        unit.params.push_back(p);
        unit.bytes.push_back(p.storage().nbytes());
        unit.numel += p.numel();
    }
    const auto dtype = params_.empty() ? torch::kFloat32 : params_.front().scalar_type();
    int64_t offset = 0;
    for (auto& u : units_) {
        u.slice = (u.numel + worldSize() - 1) / worldSize();
        u.offset = offset;
        offset += u.slice;
    }
    master_ = torch::zeros({offset}, torch::dtype(dtype).device(device_));
    for (auto& u : units_) u.whole = true;
    takeShards();
    for (auto& u : units_) release(u);
    master_.set_requires_grad(true);
    model.setBlockHooks(this);
    model_ = &model;
}

void Zero3Strategy::takeShards() {
    torch::NoGradGuard no_grad;
    for (const auto& u : units_) {
        if (u.numel == 0) continue;
        const auto flat = flattenPadded(u.params, u.slice * worldSize(), /*grads=*/false);
        master_.detach().narrow(0, u.offset, u.slice).copy_(flat.narrow(0, rank() * u.slice, u.slice));
    }
}

std::unique_ptr<torch::optim::Optimizer> Zero3Strategy::setupOptimizer(const OptimizerConfig& config,
                                                                       ClassifierImpl& /*model*/) {
    return shardOptimizer(config, {master_});
}

void Zero3Strategy::prefetch(size_t index) {
    if (!prefetch_enabled_ || prefetched_ || index == 0 || index >= units_.size()) return;
    const Unit& unit = units_[index];
    if (unit.whole || unit.numel == 0) return;
    prefetched_ = group_->allgatherFlatAsync(master_.detach().narrow(0, unit.offset, unit.slice));
    prefetched_unit_ = index;
}

void Zero3Strategy::dropPrefetch() {
    if (!prefetched_) return;
    prefetched_->wait();
    prefetched_.reset();
}

void Zero3Strategy::gather(size_t index) {
    Unit& unit = units_.at(index);
    if (unit.whole) return;
    unit.whole = true;
    if (unit.numel == 0) return;
    torch::NoGradGuard no_grad;
    torch::Tensor full;
    // Only what is left to wait for counts when the gather was prefetched.
    const auto all_gather = [&] {
        if (prefetched_ && prefetched_unit_ == index) {
            full = prefetched_->wait();
            prefetched_.reset();
        } else {
            full = group_->allgatherFlat(master_.detach().narrow(0, unit.offset, unit.slice));
        }
    };
    // A training step's gathers are its communication; evaluation's and checkpoints' are not.
    if (tracking_backward_) timeCollective(all_gather);
    else all_gather();
    int64_t at = 0;
    for (size_t i = 0; i < unit.params.size(); ++i) {
        const auto& p = unit.params[i];
        allocateStorage(p, unit.bytes[i]);
        // variable_data(): the copy leaves the parameter's version counter alone, so the graph that
        // saved it before it was freed still accepts it. copy_ goes by logical index (channels_last).
        p.variable_data().copy_(full.narrow(0, at, p.numel()).view(p.sizes()));
        at += p.numel();
    }
}

void Zero3Strategy::release(Unit& unit) {
    if (!unit.whole || weights_held_ > 0) return;
    for (const auto& p : unit.params) freeStorage(p);
    unit.whole = false;
}

void Zero3Strategy::reduceGradients(size_t index) {
    Unit& unit = units_.at(index);
    if (!unit.pending) return;
    unit.pending = false;
    finishReduce();
    torch::NoGradGuard no_grad;
    auto flat = flattenPadded(unit.params, unit.slice * worldSize(), /*grads=*/true);
    for (auto& p : unit.params) p.mutable_grad() = torch::Tensor();
    timeCollective([&] { reducing_ = group_->reduceScatterSumAsync(flat); });
    reducing_unit_ = index;
}

void Zero3Strategy::finishReduce() {
    if (!reducing_) return;
    torch::NoGradGuard no_grad;
    const Unit& unit = units_.at(reducing_unit_);
    torch::Tensor mine;
    // What is left to wait for: the rest ran while backward computed.
    timeCollective([&] { mine = reducing_->wait().div_(static_cast<double>(worldSize())); });
    reducing_.reset();
    if (!master_.grad().defined()) master_.mutable_grad() = torch::zeros_like(master_.detach());
    master_.mutable_grad().narrow(0, unit.offset, unit.slice).add_(mine);
}

torch::Tensor Zero3Strategy::forward(ClassifierImpl& model, const Batch& batch) {
    tracking_backward_ = torch::GradMode::is_enabled() && model.is_training();
    gather(0);
    units_.front().pending = tracking_backward_;
    prefetch(1);
    auto output = DistributedStrategy::forward(model, batch);
    dropPrefetch();   // none is left after the last block; a model that skipped a block may leave one
    if (!tracking_backward_) release(units_.front());
    return output;
}

void Zero3Strategy::beforeBlock(size_t index) {
    const size_t unit = unitOf(index);
    gather(unit);
    if (index % blocks_per_unit_ == 0) prefetch(unit + 1);
}

torch::Tensor Zero3Strategy::afterBlock(size_t index, torch::Tensor output) {
    // A unit lives from its first block's forward to its last block's end, and again in backward
    // from its last block's output gradient.
    if (!endsUnit(index)) return output;
    const size_t unit = unitOf(index);
    if (tracking_backward_ && output.requires_grad() && torch::GradMode::is_enabled()) {
        output.register_hook([this, unit](const torch::Tensor&) { beforeUnitBackward(unit); });
        units_.at(unit).pending = true;
    }
    release(units_.at(unit));
    return output;
}

void Zero3Strategy::beforeUnitBackward(size_t unit) {
    gather(unit);
    prefetch(unit - 1);   // the unit whose backward comes next (none before the first: the root stays whole)
    // The unit after this one has finished its backward (the gradient reaching this unit's output
    // came out of it, and parameters' gradients are accumulated as soon as they are ready).
    if (unit + 1 < units_.size()) {
        reduceGradients(unit + 1);
        release(units_[unit + 1]);
    }
}

void Zero3Strategy::backward(const torch::Tensor& loss, bool closes_group) {
    Strategy::backward(loss, closes_group);
    dropPrefetch();   // a unit whose backward never came (its output needed no gradient)
    // Every micro-batch (also inside an accumulation group): what no hook handed over yet (the
    // first block, the root unit) goes to its owners now.
    for (size_t u = units_.size(); u-- > 0;) {   // in backward's order, as the hooks went
        reduceGradients(u);
        release(units_[u]);
    }
    finishReduce();
    tracking_backward_ = false;
}

void Zero3Strategy::optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) {
    // The global norm and the loss scaler's inf check cover every rank's shards.
    precision().optimizerStep(optimizer, clip_val, sumAcrossRanks());
    zeroGrad(optimizer);
    stepTimed();
    // The parameters stay sharded: the next forward gathers the updated slices block by block.
}

void Zero3Strategy::zeroGrad(torch::optim::Optimizer& /*optimizer*/) {
    torch::NoGradGuard no_grad;
    if (master_.grad().defined()) {
        if (gradsToNone()) master_.mutable_grad() = torch::Tensor();
        else master_.mutable_grad().zero_();
    }
    for (auto& p : params_) p.mutable_grad() = torch::Tensor();
}

void Zero3Strategy::gatherWeights() {
    if (weights_held_++ > 0) return;
    for (size_t u = 0; u < units_.size(); ++u) gather(u);
}

void Zero3Strategy::releaseWeights(bool changed) {
    if (weights_held_ == 0 || --weights_held_ > 0) return;
    if (changed) {
        takeShards();
        weightsReplaced();   // an offloaded optimizer's host copies of the shards follow
    }
    for (auto& u : units_) release(u);
}

}  // namespace hearth
