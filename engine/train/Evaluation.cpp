#include "engine/train/Evaluation.h"

namespace hearth {
namespace {

// Restores train/eval mode when the pass ends, also on exceptions.
class EvalModeGuard {
public:
    explicit EvalModeGuard(torch::nn::Module& m) : module_(m), was_training_(m.is_training()) { module_.eval(); }
    ~EvalModeGuard() { module_.train(was_training_); }
    EvalModeGuard(const EvalModeGuard&) = delete;
    EvalModeGuard& operator=(const EvalModeGuard&) = delete;

private:
    torch::nn::Module& module_;
    bool was_training_;
};

}  // namespace

namespace {

// Columns of one evaluated sample; float64 holds every value exactly (indices below 2^53).
enum PredictionColumn : int64_t { kSampleIndex, kTrue, kPredicted, kConfidence, kLoss, kPredictionColumns };

// Every rank's rows in the split's order. The loader dealt position p of the split to rank
// p % world as that rank's (p / world)-th sample, cycling back to the start to even out the
// shards (DistributedSampler): positions from `split_size` on are those repeats, dropped here.
torch::Tensor inSplitOrder(const std::vector<torch::Tensor>& per_rank, int64_t split_size) {
    if (per_rank.size() == 1) {
        return per_rank.front();
    }
    const auto world = static_cast<int64_t>(per_rank.size());
    std::vector<int64_t> offsets{0};
    for (const auto& rows : per_rank) offsets.push_back(offsets.back() + rows.size(0));
    std::vector<int64_t> pick;
    pick.reserve(static_cast<size_t>(split_size));
    for (int64_t p = 0; p < split_size; ++p) {
        const int64_t r = p % world, i = p / world;
        if (i < per_rank[static_cast<size_t>(r)].size(0)) pick.push_back(offsets[static_cast<size_t>(r)] + i);
    }
    return torch::cat(per_rank).index_select(0, torch::tensor(pick, torch::kInt64));
}

}  // namespace

EvalResult evaluate(ClassifierImpl& model, Loader& loader, const Dataset& dataset, Strategy& strategy,
                    const Task& task, bool keep_predictions, const std::function<bool()>& between_batches) {
    EvalModeGuard mode(model);
    torch::NoGradGuard no_grad;
    strategy.beforeEvaluation();
    EvalResult result;
    std::vector<torch::Tensor> local;  // this rank's rows, one tensor per batch
    loader.startEpoch(0);
    while (auto host_batch = loader.next()) {
        const Batch batch = strategy.toDevice(*host_batch, loader.pinsMemory());
        const auto output = strategy.forward(model, batch);
        const auto [classes, confidence] = task.predictWithConfidence(output);
        local.push_back(torch::stack({batch.indices.to(torch::kFloat64),
                                      task.targets(batch).to(torch::kCPU, torch::kFloat64),
                                      classes.to(torch::kCPU, torch::kFloat64),
                                      confidence.to(torch::kCPU, torch::kFloat64),
                                      task.sampleLosses(output, batch).to(torch::kCPU, torch::kFloat64)},
                                     1));
        if (between_batches && !between_batches()) {
            result.interrupted = true;
            return result;
        }
    }
    const auto mine = local.empty() ? torch::zeros({0, kPredictionColumns}, torch::kFloat64) : torch::cat(local);
    // Each rank's share in split order; where every rank read every sample, its own rows are all.
    const auto rows = (strategy.shardsData() ? inSplitOrder(strategy.gatherRows(mine), dataset.size()) : mine).contiguous();
    result.samples = rows.size(0);
    const auto* r = rows.data_ptr<double>();
    double loss_sum = 0.0;
    int64_t correct = 0;
    result.y_true.reserve(static_cast<size_t>(result.samples));
    result.y_pred.reserve(static_cast<size_t>(result.samples));
    for (int64_t i = 0; i < result.samples; ++i, r += kPredictionColumns) {
        const auto y = static_cast<int64_t>(r[kTrue]);
        const auto p = static_cast<int64_t>(r[kPredicted]);
        result.y_true.push_back(y);
        result.y_pred.push_back(p);
        correct += (p == y) ? 1 : 0;
        loss_sum += r[kLoss];
        if (keep_predictions) {
            result.predictions.push_back(
                Prediction{dataset.sourceIndex(static_cast<int64_t>(r[kSampleIndex])), y, p, r[kConfidence]});
        }
    }
    if (result.samples > 0) {
        result.loss = loss_sum / static_cast<double>(result.samples);
        result.accuracy = static_cast<double>(correct) / static_cast<double>(result.samples);
    }
    return result;
}

}  // namespace hearth
