#pragma once
// RunningMeter: sums of loss, correct predictions and samples kept on the training device, so
// logging every n steps costs one host sync instead of one per micro-batch.

#include <torch/torch.h>

#include <cstdint>

namespace hearth {

// Host-side totals read from a RunningMeter (and summed over an epoch).
struct MeterTotals {
    double loss_sum = 0.0;  // sum of per-sample losses
    int64_t correct = 0;
    int64_t samples = 0;
    int64_t batches = 0;

    double meanLoss() const { return samples ? loss_sum / static_cast<double>(samples) : 0.0; }
    double accuracy() const { return samples ? static_cast<double>(correct) / static_cast<double>(samples) : 0.0; }
    void add(const MeterTotals& o) {
        loss_sum += o.loss_sum;
        correct += o.correct;
        samples += o.samples;
        batches += o.batches;
    }
};

class RunningMeter final {
public:
    // loss: the batch's mean loss; predicted and targets: classes [B]. A handful of device ops,
    // no sync: accumulate() then count().
    void add(const torch::Tensor& loss, const torch::Tensor& predicted, const torch::Tensor& targets) {
        accumulate(loss, predicted, targets);
        count(targets.size(0));
    }
    // The device half of add(): in place into sums that live as long as the meter (a captured
    // step adds into them at every replay). Create them with start() before capturing.
    void accumulate(const torch::Tensor& loss, const torch::Tensor& predicted, const torch::Tensor& targets) {
        torch::NoGradGuard no_grad;
        start(loss.device());
        loss_sum_.add_(loss.detach(), static_cast<double>(targets.size(0)));
        correct_.add_(predicted.eq(targets).sum());
    }
    // The host half: one micro-batch of n samples.
    void count(int64_t n) {
        samples_ += n;
        batches_ += 1;
    }
    void start(const torch::Device& device) {
        if (loss_sum_.defined()) return;
        loss_sum_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat64).device(device));
        correct_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kInt64).device(device));
    }
    bool empty() const { return samples_ == 0; }
    int64_t samples() const { return samples_; }
    // The totals on the host (one sync).
    MeterTotals read() const {
        MeterTotals t;
        if (!empty()) {
            t.loss_sum = loss_sum_.item<double>();
            t.correct = correct_.item<int64_t>();
        }
        t.samples = samples_;
        t.batches = batches_;
        return t;
    }
    // Zeroes the sums in place (no sync; they stay where a captured step adds).
    void reset() {
        if (loss_sum_.defined()) {
            loss_sum_.zero_();
            correct_.zero_();
        }
        samples_ = 0;
        batches_ = 0;
    }

private:
    torch::Tensor loss_sum_;  // float64 scalar on the device
    torch::Tensor correct_;   // int64 scalar on the device
    int64_t samples_ = 0;
    int64_t batches_ = 0;
};

}  // namespace hearth
