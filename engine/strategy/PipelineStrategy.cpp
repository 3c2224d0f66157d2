#include "engine/strategy/PipelineStrategy.h"

#include "engine/TorchCompat.h"
#include "engine/strategy/ParameterStorage.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>

namespace hearth {
namespace {

// An activation's header: dtype, rank, then up to kMaxDims sizes.
constexpr int64_t kMaxDims = 8;
constexpr int64_t kHeader = 2 + kMaxDims;

// Tags: a micro-batch's header and activation forward; its gradient backward (the other direction).
int headerTag(int micro) { return 2 * micro; }
int activationTag(int micro) { return 2 * micro + 1; }
int gradientTag(int micro) { return micro; }

// A nominal sequence length at which to weigh a transformer's parts: its layers cost the same at
// any length, and the stem and head are small beside them.
constexpr int64_t kNominalTokens = 256;

double elementsOf(const std::vector<torch::Tensor>& tensors) {
    double n = 0.0;
    for (const auto& t : tensors) n += static_cast<double>(t.numel());
    return n;
}

}  // namespace

std::vector<size_t> balancedStageBounds(const std::vector<double>& block_costs, double first_extra, double last_extra,
                                        size_t stages) {
    const size_t n = block_costs.size();
    if (stages == 0 || stages > n)
        throw ConfigError("trainer.pipeline.stages", std::to_string(stages) + " stages but the model has " +
                                                         std::to_string(n) + " block(s) to cut between");
    std::vector<double> prefix(n + 1, 0.0);
    for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + block_costs[i];
    const auto cost = [&](size_t stage, size_t from, size_t to) {
        return prefix[to] - prefix[from] + (stage == 0 ? first_extra : 0.0) + (stage + 1 == stages ? last_extra : 0.0);
    };
    // best[s][i]: the smallest largest-stage cost of stages 0..s over blocks [0, i); cut[s][i] the
    // block where stage s begins in it.
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<std::vector<double>> best(stages, std::vector<double>(n + 1, inf));
    std::vector<std::vector<size_t>> cut(stages, std::vector<size_t>(n + 1, 0));
    for (size_t i = 1; i <= n; ++i) best[0][i] = cost(0, 0, i);
    for (size_t s = 1; s < stages; ++s)
        for (size_t i = s + 1; i <= n; ++i)
            for (size_t j = s; j < i; ++j) {
                const double worst = std::max(best[s - 1][j], cost(s, j, i));
                if (worst < best[s][i]) best[s][i] = worst, cut[s][i] = j;
            }
    std::vector<size_t> bounds(stages + 1, 0);
    bounds[stages] = n;
    for (size_t s = stages - 1; s > 0; --s) bounds[s] = cut[s][bounds[s + 1]];
    return bounds;
}

PipelineStrategy::PipelineStrategy(std::shared_ptr<dist::ProcessGroup> group, torch::Device device,
                                   const std::string& precision, int64_t micro_batches, std::vector<int64_t> stage_blocks)
    : DistributedStrategy(std::move(group), device, precision),
      micro_batches_(std::max<int64_t>(micro_batches, 1)),
      stage_blocks_(std::move(stage_blocks)) {}

std::string PipelineStrategy::describe() const {
    const auto stages = static_cast<double>(worldSize());
    const auto micro = static_cast<double>(micro_batches_);
    char bubble[16], share[16];
    std::snprintf(bubble, sizeof bubble, "%.0f%%", 100.0 * (stages - 1.0) / (micro + stages - 1.0));
    std::snprintf(share, sizeof share, "%.0f%%", 100.0 * cost_share_);
    const std::string blocks = end_ == begin_ + 1 ? "block " + std::to_string(end_)
                                                  : "blocks " + std::to_string(begin_ + 1) + "-" + std::to_string(end_);
    return "pipeline (stage " + std::to_string(rank() + 1) + " of " + std::to_string(worldSize()) + ": " +
           (isFirst() && has_stem_ ? "the stem and " : "") + blocks + " of " + std::to_string(blocks_) +
           (isLast() && has_head_ ? " and the head" : "") + ", " + share + " of the model's " +
           (costs_are_flops_ ? "forward FLOPs" : "parameters") +
           (stage_blocks_.empty() ? ", cut to even them out" : ", cut as trainer.pipeline.stage_blocks says") + "; " +
           std::to_string(micro_batches_) +
           " micro-batches per batch, GPipe schedule, bubble " + bubble + " of a step) over " + groupDescription();
}

void PipelineStrategy::setupModel(ClassifierImpl& model, bool channels_last) {
    DistributedStrategy::setupModel(model, channels_last);
    if (!model.cutsAtBlocks())
        throw ConfigError("model.path", "the pipeline cuts a TorchScript module between the children of a scripted "
                                        "nn.Sequential taking one tensor; this module is not one (script an "
                                        "nn.Sequential of its parts, or use zero3 to spread its memory)");
    takeRankZerosWeights();
    const auto blocks = model.blockParameters();
    const auto block_buffers = model.blockBuffers();
    const auto stem = model.stemParameters();
    blocks_ = blocks.size();
    const auto stages = static_cast<size_t>(worldSize());
    // Balance the stages' forward FLOPs where the model counts them, else their parameters.
    const PartFlops flops = model.partFlops();
    const auto weigh = [](const ForwardFlops& f) { return f.forward(1, kNominalTokens); };
    std::vector<double> costs;
    double first = 0.0, last = 0.0;
    costs_are_flops_ = flops.blocks.size() == blocks_ && flops.total().known();
    if (costs_are_flops_) {
        for (const auto& f : flops.blocks) costs.push_back(weigh(f));
        first = weigh(flops.stem);
        last = weigh(flops.head);
    } else {
        for (const auto& b : blocks) costs.push_back(elementsOf(b));
        first = elementsOf(stem);
        last = elementsOf(model.parameters()) - first - std::accumulate(costs.begin(), costs.end(), 0.0);
    }
    std::vector<size_t> bounds;
    if (stage_blocks_.empty()) {
        bounds = balancedStageBounds(costs, first, last, stages);
    } else {
        const auto sum = static_cast<size_t>(std::accumulate(stage_blocks_.begin(), stage_blocks_.end(), int64_t{0}));
        if (stage_blocks_.size() != stages || sum != blocks_)
            throw ConfigError("trainer.pipeline.stage_blocks",
                              std::to_string(stage_blocks_.size()) + " stage(s) of " + std::to_string(sum) +
                                  " block(s) in all, but the run has " + std::to_string(stages) +
                                  " stage(s) and the model " + std::to_string(blocks_) + " block(s)");
        bounds.push_back(0);
        for (const int64_t n : stage_blocks_) bounds.push_back(bounds.back() + static_cast<size_t>(n));
    }
    const auto me = static_cast<size_t>(rank());
    begin_ = bounds[me];
    end_ = bounds[me + 1];
    const double total = std::accumulate(costs.begin(), costs.end(), first + last);
    const double mine = std::accumulate(costs.begin() + static_cast<std::ptrdiff_t>(begin_),
                                        costs.begin() + static_cast<std::ptrdiff_t>(end_),
                                        (isFirst() ? first : 0.0) + (isLast() ? last : 0.0));
    cost_share_ = total > 0.0 ? mine / total : 0.0;
    const auto stageOf = [&](size_t block) {
        return static_cast<size_t>(std::upper_bound(bounds.begin(), bounds.end(), block) - bounds.begin()) - 1;
    };
    // Every parameter and buffer to its stage: a block's to the block's, the stem's to the first,
    // the rest (the head's) to the last.
    std::unordered_map<const void*, size_t> stage_of;
    for (size_t b = 0; b < blocks_; ++b) {
        for (const auto& p : blocks[b]) stage_of[p.unsafeGetTensorImpl()] = stageOf(b);
        if (b < block_buffers.size())
            for (const auto& buffer : block_buffers[b]) stage_of[buffer.unsafeGetTensorImpl()] = stageOf(b);
    }
    has_stem_ = !stem.empty();
    for (const auto& p : stem) stage_of[p.unsafeGetTensorImpl()] = 0;
    for (const auto& buffer : model.stemBuffers()) stage_of[buffer.unsafeGetTensorImpl()] = 0;
    const auto stageOfTensor = [&](const torch::Tensor& t) {
        const auto it = stage_of.find(t.unsafeGetTensorImpl());
        return it == stage_of.end() ? stages - 1 : it->second;
    };
    stage_buffers_.assign(stages, {});
    for (const auto& buffer : model.buffers()) stage_buffers_[stageOfTensor(buffer)].push_back(buffer);
    stage_params_.assign(stages, {});
    mine_.clear();
    others_.clear();
    has_head_ = false;
    for (const auto& p : model.parameters()) {
        has_head_ = has_head_ || !stage_of.count(p.unsafeGetTensorImpl());
        const size_t stage = stageOfTensor(p);
        stage_params_[stage].push_back(p.detach());
        if (stage == me) {
            if (p.requires_grad()) mine_.push_back(p);
        } else {
            others_.emplace_back(p, p.storage().nbytes());
        }
    }
    for (const auto& [p, bytes] : others_) freeStorage(p);
}

std::unique_ptr<torch::optim::Optimizer> PipelineStrategy::setupOptimizer(const OptimizerConfig& config,
                                                                          ClassifierImpl& /*model*/) {
    return shardOptimizer(config, mine_);
}

LoaderOptions PipelineStrategy::loaderOptions(const TrainerConfig& trainer, bool shuffle, uint64_t seed) const {
    LoaderOptions o = Strategy::loaderOptions(trainer, shuffle, seed);
    o.rank = 0;
    o.world_size = 1;
    return o;
}

torch::Tensor PipelineStrategy::receiveActivation(int micro) {
    auto header = torch::empty({kHeader}, torch::kInt64);
    timeCollective([&] { group_->recv(header, rank() - 1, headerTag(micro)); });
    const auto* h = header.data_ptr<int64_t>();
    std::vector<int64_t> sizes(h + 2, h + 2 + h[1]);
    auto activation = torch::empty(sizes, torch::dtype(static_cast<torch::ScalarType>(h[0])).device(device_));
    timeCollective([&] { group_->recv(activation, rank() - 1, activationTag(micro)); });
    return activation;
}

std::unique_ptr<dist::ProcessGroup::Pending> PipelineStrategy::sendActivation(const torch::Tensor& activation,
                                                                             int micro) {
    if (activation.dim() > kMaxDims)
        throw std::runtime_error("pipeline: a stage output of " + std::to_string(activation.dim()) + " dimensions");
    auto header = torch::zeros({kHeader}, torch::kInt64);
    auto* h = header.data_ptr<int64_t>();
    h[0] = static_cast<int64_t>(activation.scalar_type());
    h[1] = activation.dim();
    for (int64_t d = 0; d < activation.dim(); ++d) h[2 + d] = activation.size(d);
    // The header is small: sent and waited for here; the activation travels while the next
    // micro-batch computes.
    group_->sendAsync(header, rank() + 1, headerTag(micro))->wait();
    return group_->sendAsync(activation.contiguous(), rank() + 1, activationTag(micro));
}

torch::Tensor PipelineStrategy::shareLogits(const torch::Tensor& logits) {
    // Rows, classes, dtype; then the values.
    auto shape = isLast() ? torch::tensor({logits.size(0), logits.size(1), static_cast<int64_t>(logits.scalar_type())},
                                          torch::kInt64)
                          : torch::empty({3}, torch::kInt64);
    std::vector<torch::Tensor> one{shape};
    group_->broadcast(one, worldSize() - 1);
    const auto* s = shape.data_ptr<int64_t>();
    std::vector<torch::Tensor> values{
        isLast() ? logits.detach().clone()
                 : torch::empty({s[0], s[1]}, torch::dtype(static_cast<torch::ScalarType>(s[2])).device(device_))};
    group_->broadcast(values, worldSize() - 1);
    return isLast() ? logits : values[0];
}

torch::Tensor PipelineStrategy::forward(ClassifierImpl& model, const Batch& batch) {
    const bool training = torch::GradMode::is_enabled() && model.is_training();
    inputs_.clear();
    outputs_.clear();
    const std::vector<Batch> micro_batches = split(batch, micro_batches_);
    std::vector<std::unique_ptr<dist::ProcessGroup::Pending>> sends;
    std::vector<torch::Tensor> logits;
    const std::optional<torch::ScalarType> autocast = precision().autocastDtype();
    for (int m = 0; m < static_cast<int>(micro_batches.size()); ++m) {
        const Batch& micro = micro_batches[static_cast<size_t>(m)];
        torch::Tensor x;
        if (!isFirst()) {
            x = receiveActivation(m);
            if (training) x.requires_grad_(true);
        }
        torch::Tensor y;
        if (autocast) {
            compat::AutocastGuard guard(device_.type(), *autocast);
            y = model.forwardStage(micro, x, begin_, end_, isLast());
        } else {
            y = model.forwardStage(micro, x, begin_, end_, isLast());
        }
        if (isLast()) logits.push_back(autocast ? y.to(torch::kFloat32) : y);   // the loss in full precision
        else sends.push_back(sendActivation(y.detach(), m));
        if (training) {
            inputs_.push_back(x);
            outputs_.push_back(y);
        }
    }
    for (auto& send : sends) timeCollective([&] { send->wait(); });
    return shareLogits(isLast() ? torch::cat(logits) : torch::Tensor());
}

void PipelineStrategy::backward(const torch::Tensor& loss, bool /*closes_group*/) {
    // Every micro-batch at once on the last stage: each one's graph starts at its received input.
    if (isLast()) precision().backward(loss);
    std::vector<std::unique_ptr<dist::ProcessGroup::Pending>> sends;
    for (size_t i = outputs_.size(); i-- > 0;) {
        const int m = static_cast<int>(i);
        if (!isLast()) {
            auto grad = torch::empty_like(outputs_[i]);
            timeCollective([&] { group_->recv(grad, rank() + 1, gradientTag(m)); });
            if (outputs_[i].requires_grad()) torch::autograd::backward({outputs_[i]}, {grad});
        }
        if (!isFirst()) {
            const torch::Tensor& g = inputs_[i].grad();
            sends.push_back(group_->sendAsync(g.defined() ? g : torch::zeros_like(inputs_[i]), rank() - 1, gradientTag(m)));
        }
    }
    for (auto& send : sends) timeCollective([&] { send->wait(); });
    inputs_.clear();
    outputs_.clear();
}

void PipelineStrategy::optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) {
    // Each stage steps its own parameters; the clipping norm and the loss scaler's inf check cover
    // every stage's.
    precision().optimizerStep(optimizer, clip_val, sumAcrossRanks());
    zeroGrad(optimizer);
    stepTimed();
}

void PipelineStrategy::zeroGrad(torch::optim::Optimizer& /*optimizer*/) {
    torch::NoGradGuard no_grad;
    for (auto& p : mine_) {
        if (gradsToNone()) p.mutable_grad() = torch::Tensor();
        else if (p.grad().defined()) p.mutable_grad().zero_();
    }
}

void PipelineStrategy::gatherWeights() {
    if (weights_held_++ > 0) return;
    torch::NoGradGuard no_grad;
    for (const auto& [p, bytes] : others_) allocateStorage(p, bytes);
    for (size_t s = 0; s < stage_params_.size(); ++s) {
        std::vector<torch::Tensor> state = stage_params_[s];
        state.insert(state.end(), stage_buffers_[s].begin(), stage_buffers_[s].end());
        group_->broadcast(state, static_cast<int64_t>(s));
    }
}

void PipelineStrategy::releaseWeights(bool /*changed*/) {
    // After a write (a resume) every process holds the same weights; each keeps its own stage's.
    if (weights_held_ == 0 || --weights_held_ > 0) return;
    for (const auto& [p, bytes] : others_) freeStorage(p);
}

}  // namespace hearth
