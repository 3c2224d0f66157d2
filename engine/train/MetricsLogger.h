#pragma once
// MetricsLogger: what the training loop reports, assembled in one place. It keeps the step-metric
// interval (the running meter on the device, the loader's wait, the interval's clock) and the
// fit's clock, and builds StepMetrics (with the ETA) and EpochMetrics from the loop's progress.
// The loop does the reading back and the reductions across ranks (they go through its strategy).

#include "engine/callbacks/Callback.h"
#include "engine/events/Events.h"
#include "engine/train/FitProgress.h"
#include "engine/train/RunningMeter.h"

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <utility>

namespace hearth {

class Strategy;

class MetricsLogger final {
public:
    using Clock = std::chrono::steady_clock;

    // A fit starts now, `elapsed_s` already trained (a resumed fit's clock continues).
    void startFit(double elapsed_s = 0.0);
    double elapsedSeconds() const;

    // One micro-batch: its mean loss, predicted and true classes (device ops, no sync), and the
    // time it waited for the loader.
    void add(const torch::Tensor& loss, const torch::Tensor& predicted, const torch::Tensor& targets) {
        meter_.add(loss, predicted, targets);
    }
    // add() in two halves, for a captured step: the device sums (recorded once, replayed) and the
    // host count of each micro-batch it ran. start() creates the sums before a capture.
    void accumulate(const torch::Tensor& loss, const torch::Tensor& predicted, const torch::Tensor& targets) {
        meter_.accumulate(loss, predicted, targets);
    }
    void count(int64_t samples) { meter_.count(samples); }
    void start(const torch::Device& device) { meter_.start(device); }
    void addWait(double ms) { wait_ms_ += ms; }
    // The model FLOPs of this rank's micro-batch (ModelFlops.h), and the device's dense peak in
    // FLOP/s for MFU (0: unknown).
    void addFlops(double flops) { flops_ += flops; }
    void setPeakFlops(double flops_per_s) { peak_flops_ = flops_per_s; }
    double peakFlops() const { return peak_flops_; }
    // TFLOP/s and MFU of `flops` done in `seconds` (-1 each where unknown).
    std::pair<double, double> achieved(double flops, double seconds) const;
    // Optimizer steps the GradScaler skipped (inf/NaN gradients) in this interval.
    void addSkippedSteps(int64_t n) { skipped_steps_ += n; }
    // No micro-batch since the last StepMetrics.
    bool intervalEmpty() const { return meter_.empty(); }
    // An epoch's training starts: an empty interval's clock starts now, so the time since the
    // last logged step (the previous epoch's validation, its checkpoint, the store's epoch
    // writes) does not count as training in the next step's samples/s, step time and TFLOP/s.
    void startEpoch() {
        if (meter_.empty()) interval_start_ = Clock::now();
    }
    // This rank's totals of the interval (one sync), and its samples/s over it.
    MeterTotals intervalTotals() const { return meter_.read(); }
    double localSamplesPerSec(const MeterTotals& local) const;
    // The loss, correct predictions and samples summed over every rank (the strategy's reduction;
    // nothing to do on one device). Batches stay this rank's: they time its steps.
    static MeterTotals sumOverRanks(const Strategy& strategy, const MeterTotals& local);

    // The interval's StepMetrics from its totals over every rank; the next interval starts.
    StepMetrics stepMetrics(const MeterTotals& totals, const LoopState& loop, int64_t batches_per_epoch,
                            int64_t max_epochs, double loss_scale);
    // A validated epoch's EpochMetrics (its breakdown is the caller's).
    static EpochMetrics epochMetrics(const FitProgress& progress, const EpochEnd& end, double epoch_time_s);

private:
    RunningMeter meter_;
    double wait_ms_ = 0.0;
    double flops_ = 0.0;
    double peak_flops_ = 0.0;
    int64_t skipped_steps_ = 0;
    Clock::time_point interval_start_;
    Clock::time_point fit_start_;
};

}  // namespace hearth
