#include "engine/train/MetricsLogger.h"

#include "engine/monitor/Elapsed.h"
#include "engine/strategy/Strategy.h"

#include <algorithm>
#include <tuple>
#include <vector>

namespace hearth {
namespace {

}  // namespace

void MetricsLogger::startFit(double elapsed_s) {
    interval_start_ = Clock::now();
    fit_start_ = interval_start_ - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(elapsed_s));
}

double MetricsLogger::elapsedSeconds() const {
    return secondsSince(fit_start_);
}

double MetricsLogger::localSamplesPerSec(const MeterTotals& local) const {
    const double s = secondsSince(interval_start_);
    return s > 0.0 ? static_cast<double>(local.samples) / s : 0.0;
}

MeterTotals MetricsLogger::sumOverRanks(const Strategy& strategy, const MeterTotals& local) {
    if (!strategy.shardsData()) return local;   // every rank saw every sample (pipeline stages)
    std::vector<double> values{local.loss_sum, static_cast<double>(local.correct), static_cast<double>(local.samples)};
    strategy.reduceSum(values);
    MeterTotals total = local;
    total.loss_sum = values[0];
    total.correct = static_cast<int64_t>(values[1]);
    total.samples = static_cast<int64_t>(values[2]);
    return total;
}

std::pair<double, double> MetricsLogger::achieved(double flops, double seconds) const {
    if (flops <= 0.0 || seconds <= 0.0) return {-1.0, -1.0};
    const double rate = flops / seconds;
    return {rate / 1e12, peak_flops_ > 0.0 ? rate / peak_flops_ : -1.0};
}

StepMetrics MetricsLogger::stepMetrics(const MeterTotals& totals, const LoopState& loop, int64_t batches_per_epoch,
                                       int64_t max_epochs, double loss_scale) {
    const double interval_s = secondsSince(interval_start_);
    const auto batches = static_cast<double>(std::max<int64_t>(totals.batches, 1));
    StepMetrics m;
    m.epoch = loop.epoch;
    m.batch = loop.batch_in_epoch;
    m.batches_per_epoch = batches_per_epoch;
    m.global_step = loop.global_step;
    m.loss = totals.meanLoss();
    m.accuracy = totals.accuracy();
    m.lr = loop.lr;
    m.loss_scale = loss_scale;
    m.samples_per_sec = interval_s > 0.0 ? static_cast<double>(totals.samples) / interval_s : 0.0;
    m.data_wait_ms = wait_ms_ / batches;
    m.step_time_ms = std::max(0.0, interval_s * 1000.0 - wait_ms_) / batches;
    m.elapsed_s = elapsedSeconds();
    // The ETA: the time per micro-batch so far, over the micro-batches left.
    const int64_t total_micro = batches_per_epoch * max_epochs;
    const int64_t done = loop.micro_batches;
    m.eta_s = done > 0 ? m.elapsed_s / static_cast<double>(done) *
                             static_cast<double>(std::max<int64_t>(total_micro - done, 0))
                       : 0.0;
    m.skipped_steps = skipped_steps_;
    // This rank's FLOPs over the interval's time: a device's rate (the step's own wait for data
    // counts against it, as it does against the device).
    std::tie(m.tflops, m.mfu) = achieved(flops_, interval_s);
    meter_.reset();
    wait_ms_ = 0.0;
    flops_ = 0.0;
    skipped_steps_ = 0;
    interval_start_ = Clock::now();
    return m;
}

EpochMetrics MetricsLogger::epochMetrics(const FitProgress& progress, const EpochEnd& end, double epoch_time_s) {
    const EpochProgress& epoch = progress.epoch;
    const double train_s = epoch.train_time_s;
    EpochMetrics e;
    e.epoch = progress.loop.epoch;
    e.global_step = progress.loop.global_step;
    e.train_loss = epoch.totals.meanLoss();
    e.train_accuracy = epoch.totals.accuracy();
    e.val_loss = end.val_loss;
    e.val_accuracy = end.val_accuracy;
    e.lr = progress.loop.lr;
    e.epoch_time_s = epoch_time_s;
    e.samples_per_sec = train_s > 0.0 ? static_cast<double>(epoch.totals.samples) / train_s : 0.0;
    e.data_wait_share = train_s > 0.0 ? std::min(1.0, epoch.wait_ms / 1000.0 / train_s) : 0.0;
    e.skipped_steps = epoch.skipped_steps;
    e.is_best = end.is_best;
    return e;
}

}  // namespace hearth
