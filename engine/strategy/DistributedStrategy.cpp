#include "engine/strategy/DistributedStrategy.h"

#include "engine/monitor/Elapsed.h"
#include "engine/optim/OffloadedOptimizer.h"
#include "engine/optim/Optimizers.h"
#include "engine/strategy/CheckpointFile.h"

#include <algorithm>
#include <chrono>

namespace hearth {

DistributedStrategy::DistributedStrategy(std::shared_ptr<dist::ProcessGroup> group, torch::Device device,
                                         const std::string& precision)
    : Strategy(std::make_unique<Precision>(precision, device)), group_(std::move(group)), device_(device) {}

DistributedStrategy::~DistributedStrategy() = default;

std::string DistributedStrategy::groupDescription() const {
    return group_->backend() + ", rank " + std::to_string(rank()) + " of " + std::to_string(worldSize()) + " (" +
           device_.str() + ")";
}

void DistributedStrategy::setupModel(ClassifierImpl& model, bool channels_last) {
    Strategy::setupModel(model, channels_last);
    buffers_.clear();
    for (auto& b : model.buffers()) buffers_.push_back(b);
    params_.clear();
    for (auto& p : model.parameters()) {
        if (p.requires_grad()) params_.push_back(p);
    }
}

void DistributedStrategy::takeRankZerosWeights() {
    torch::NoGradGuard no_grad;
    // Every rank must hold the same parameters in the same order; then rank 0's values win.
    std::vector<int64_t> shape_check{static_cast<int64_t>(params_.size())};
    for (const auto& p : params_) shape_check.push_back(p.numel());
    const auto mine = torch::tensor(shape_check, torch::kInt64);
    const auto all = group_->allgather(mine);
    for (size_t r = 0; r < all.size(); ++r) {
        if (!all[r].equal(mine)) {
            throw std::runtime_error(name() + ": rank " + std::to_string(r) + " built a model with different "
                                     "parameters than rank " + std::to_string(rank()) +
                                     " (same model settings on every rank?)");
        }
    }
    std::vector<torch::Tensor> state;
    for (const auto& p : params_) state.push_back(p.detach());
    for (const auto& b : buffers_) state.push_back(b);
    group_->broadcast(state, 0);
}

std::unique_ptr<torch::optim::Optimizer> DistributedStrategy::shardOptimizer(const OptimizerConfig& config,
                                                                           const std::vector<torch::Tensor>& tensors) {
    follow_device_ = nullptr;
    if (!offload_) return createOptimizer(config, tensors);
    auto optimizer = OffloadedOptimizer::create(config, tensors);
    follow_device_ = optimizer->followDevice();
    return optimizer;
}

std::string DistributedStrategy::offloadDescription() const {
    if (!offload_) return "";
    return device_.is_cuda() ? ", optimizer state and master copy offloaded to pinned host memory (stepped on the CPU)"
                             : ", optimizer stepped on separate host copies (offload; a CPU run has no device memory to save)";
}

void DistributedStrategy::weightsReplaced() {
    if (follow_device_) follow_device_();
}

void DistributedStrategy::releaseWeights(bool changed) {
    if (changed) weightsReplaced();
}

void DistributedStrategy::timeCollective(const std::function<void()>& collective) {
    const auto start = std::chrono::steady_clock::now();
    collective();
    comm_ms_total_ += millisecondsSince(start);
}

dist::CommStats DistributedStrategy::commStats() const {
    dist::CommStats s;
    s.steps = timed_steps_;
    s.comm_ms = timed_steps_ > 0 ? comm_ms_total_ / static_cast<double>(timed_steps_) : 0.0;
    return s;
}

torch::Tensor DistributedStrategy::flattenPadded(const std::vector<torch::Tensor>& tensors, int64_t size,
                                                 bool grads) const {
    const auto dtype = tensors.empty() ? torch::kFloat32 : tensors.front().scalar_type();
    auto flat = torch::zeros({size}, torch::dtype(dtype).device(device_));
    int64_t offset = 0;
    for (const auto& t : tensors) {
        const torch::Tensor source = grads ? t.grad() : t.detach();
        if (source.defined()) flat.narrow(0, offset, t.numel()).copy_(source.reshape({-1}));
        offset += t.numel();
    }
    return flat;
}

void DistributedStrategy::broadcastBuffers() {
    // In a world of one it would copy rank 0's onto itself.
    if (buffers_.empty() || worldSize() == 1) return;
    torch::NoGradGuard no_grad;
    group_->broadcast(buffers_, 0);
}

torch::Tensor DistributedStrategy::forward(ClassifierImpl& model, const Batch& batch) {
    if (torch::GradMode::is_enabled() && model.is_training()) {
        broadcastBuffers();
        beforeTrainingForward();
    }
    return Strategy::forward(model, batch);
}

void DistributedStrategy::reduceSum(std::vector<double>& values) const {
    if (values.empty()) return;
    std::vector<torch::Tensor> t{torch::tensor(values, torch::kFloat64)};
    group_->allreduceSum(t);
    const auto summed = t[0].contiguous();
    std::copy(summed.data_ptr<double>(), summed.data_ptr<double>() + summed.numel(), values.begin());
}

bool DistributedStrategy::agreeToStop(bool local) const {
    // In a world of one (the Trainer asks on every step there) there is no one to agree with.
    if (worldSize() == 1) return local;
    std::vector<torch::Tensor> t{torch::tensor({local ? 1.0 : 0.0}, torch::kFloat64)};
    group_->allreduceSum(t);
    return t[0].item<double>() > 0.0;
}

bool DistributedStrategy::watchLoss(const torch::Tensor& loss, int64_t step) {
    // A world of one has no one waiting: one device's watch (on the host, read at once).
    if (worldSize() == 1) return Strategy::watchLoss(loss, step);
    // Recorded only: a rank must not fail alone while the others wait in a collective. The
    // ranks agree on the first bad step at the next metric sync (firstNonFiniteStep).
    if (precision().scalesLoss()) return false;
    torch::NoGradGuard no_grad;
    first_bad_step_.masked_fill_(firstNonFinite(loss), step);
    return false;
}

int64_t DistributedStrategy::firstNonFiniteStep() {
    if (worldSize() == 1) return Strategy::firstNonFiniteStep();
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

std::vector<torch::Tensor> DistributedStrategy::gatherRows(const torch::Tensor& rows) const {
    // Row counts differ by rank: gather the counts, pad every rank's rows to the longest, gather,
    // then trim each back to its count.
    const auto local = rows.to(torch::kCPU).contiguous();
    const auto counts = group_->allgather(torch::tensor({local.size(0)}, torch::kInt64));
    int64_t longest = 0;
    for (const auto& c : counts) longest = std::max(longest, c.item<int64_t>());
    auto shape = local.sizes().vec();
    shape[0] = longest;
    auto padded = torch::zeros(shape, local.options());
    if (local.size(0) > 0) padded.narrow(0, 0, local.size(0)).copy_(local);
    auto all = group_->allgather(padded);
    for (size_t r = 0; r < all.size(); ++r) all[r] = all[r].narrow(0, 0, counts[r].item<int64_t>());
    return all;
}

std::vector<torch::Tensor> DistributedStrategy::gatherRowsToRoot(const torch::Tensor& rows) const {
    // The counts go to everyone (a few bytes); the rows only to rank 0, point to point, each from
    // its rank: no rank but 0 ever holds another's rows, and none a padded copy.
    constexpr int kTag = 1 << 24;   // apart from the pipeline's micro-batch tags
    const auto local = rows.to(torch::kCPU).contiguous();
    const auto counts = group_->allgather(torch::tensor({local.size(0)}, torch::kInt64));
    if (rank() != 0) {
        if (local.size(0) > 0) group_->sendAsync(local, 0, kTag)->wait();
        return {};
    }
    std::vector<torch::Tensor> all{local};
    for (int64_t r = 1; r < worldSize(); ++r) {
        auto shape = local.sizes().vec();
        shape[0] = counts[static_cast<size_t>(r)].item<int64_t>();
        auto received = torch::empty(shape, local.options());
        if (shape[0] > 0) group_->recv(received, r, kTag);
        all.push_back(received);
    }
    return all;
}

SumAcrossRanks DistributedStrategy::sumAcrossRanks() const {
    return [group = group_](torch::Tensor& t) {
        std::vector<torch::Tensor> one{t.device().is_cpu() ? t : t.to(torch::kCPU)};
        group->allreduceSum(one);
        if (!t.device().is_cpu()) t.copy_(one[0]);
    };
}

void DistributedStrategy::saveCheckpoint(const std::string& path, const torch::nn::Module& model,
                                         torch::optim::Optimizer* optimizer) const {
    if (!shardsOptimizer() || !optimizer) {
        Strategy::saveCheckpoint(path, model, optimizer);
        return;
    }
    // A collective: every rank sends its serialised share and what it covers to rank 0, which writes.
    std::vector<int64_t> numels;
    for (auto& group : optimizer->param_groups())
        for (auto& p : group.params()) numels.push_back(p.numel());
    OptimizerShards shards;
    shards.strategy = name();
    shards.states = gatherRowsToRoot(optimizerBytes(*optimizer));
    shards.numels = gatherRowsToRoot(torch::tensor(numels, torch::kInt64));
    if (!path.empty()) saveCheckpointFile(path, model, optimizer, &shards);
}

}  // namespace hearth
