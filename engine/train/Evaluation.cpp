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

EvalResult evaluate(ClassifierImpl& model, Loader& loader, const Dataset& dataset, Strategy& strategy,
                    const Task& task, bool keep_predictions, const std::function<bool()>& between_batches) {
    EvalModeGuard mode(model);
    torch::NoGradGuard no_grad;
    EvalResult result;
    torch::Tensor loss_sum = torch::zeros({}, torch::kFloat64);
    int64_t correct = 0;
    loader.startEpoch(0);
    while (auto host_batch = loader.next()) {
        const Batch batch = strategy.toDevice(*host_batch, loader.pinsMemory());
        const auto output = strategy.forward(model, batch);
        loss_sum += task.loss(output, batch, /*sum=*/true).to(torch::kCPU, torch::kFloat64);
        const auto [classes, confidence] = task.predictWithConfidence(output);
        const auto pred = classes.to(torch::kCPU).contiguous();
        const auto conf = confidence.to(torch::kCPU, torch::kFloat64).contiguous();
        const auto labels = task.targets(batch).to(torch::kCPU).contiguous();
        const auto indices = batch.indices.to(torch::kCPU).contiguous();
        const int64_t n = labels.size(0);
        const auto* p = pred.data_ptr<int64_t>();
        const auto* y = labels.data_ptr<int64_t>();
        const auto* c = conf.data_ptr<double>();
        const auto* ix = indices.data_ptr<int64_t>();
        for (int64_t i = 0; i < n; ++i) {
            result.y_true.push_back(y[i]);
            result.y_pred.push_back(p[i]);
            correct += (p[i] == y[i]) ? 1 : 0;
            if (keep_predictions) {
                result.predictions.push_back(Prediction{dataset.sourceIndex(ix[i]), y[i], p[i], c[i]});
            }
        }
        result.samples += n;
        if (between_batches && !between_batches()) {
            result.interrupted = true;
            break;
        }
    }
    if (result.samples > 0) {
        result.loss = loss_sum.item<double>() / static_cast<double>(result.samples);
        result.accuracy = static_cast<double>(correct) / static_cast<double>(result.samples);
    }
    return result;
}

}  // namespace hearth
