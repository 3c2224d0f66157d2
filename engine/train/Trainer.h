#pragma once
// Trainer: the fit / validate / test loops with progress counters (epoch, micro-batch, global
// optimizer step), decomposed like Lightning's: the Precision object owns autocast and loss
// scaling, BestCheckpoint keeps the best epoch, LearningRateSchedule sets the lr per step.
// Events go to the sink on the calling thread. `stop` is read after every micro-batch: a stop
// finishes that micro-batch (and its optimizer step when it closes a group), drops the partial
// gradients of an unfinished accumulation group, and skips validation and test (the best
// checkpoint of the completed epochs stays on disk); fit() then reports stopped.

#include "engine/data/Loader.h"
#include "engine/events/Events.h"
#include "engine/models/ModelRegistry.h"
#include "engine/monitor/DeviceMonitor.h"
#include "engine/train/Checkpoint.h"
#include "engine/train/Evaluation.h"
#include "engine/train/Precision.h"
#include "engine/train/RunningMeter.h"
#include "engine/train/Schedulers.h"

#include <atomic>
#include <chrono>
#include <memory>

namespace hearth {

struct FitResult {
    bool stopped = false;
    int64_t epochs_completed = 0;
    int64_t global_steps = 0;
    double train_time_s = 0.0;     // training and validation
    double samples_per_sec = 0.0;  // training samples over pure training time
    double best_val_accuracy = 0.0;
};

struct TestResult {
    bool ran = false;
    double loss = 0.0;
    double accuracy = 0.0;
};

class Trainer final {
public:
    // The model must already be on `device`. Throws ConfigError for settings it cannot use.
    Trainer(const ExperimentConfig& config, torch::Device device, std::shared_ptr<ClassifierImpl> model,
            const DataSplits& splits, const std::string& artifacts_dir, EventSink& sink, const std::atomic<bool>& stop);
    ~Trainer();
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    FitResult fit();
    // Evaluates the test split with the best checkpoint's weights (the last epoch's without one).
    TestResult test();

    int64_t batchesPerEpoch() const;
    int64_t optimizerStepsPerEpoch() const;
    const Loader& trainLoader() const { return *train_loader_; }
    const Precision& precision() const { return *precision_; }
    const LearningRateSchedule& schedule() const { return *schedule_; }
    DeviceMonitor& monitor() { return monitor_; }
    bool channelsLast() const { return channels_last_; }

private:
    struct EpochStats;
    bool trainEpoch(EpochStats& stats);
    void trainMicroBatch(const Batch& batch, int64_t micro, EpochStats& stats);
    void finishOptimizerStep(EpochStats& stats);
    void emitStepMetrics(int64_t micro, EpochStats& stats);
    void checkFiniteLoss();
    void trackNonFiniteLoss(const torch::Tensor& loss);
    // interruptible: a stop request ends the validation pass early (false: the pass completes).
    bool validateAndCheckpoint(const EpochStats& stats, FitResult& result, bool interruptible);
    // Runs `split` through the model and emits its EvalReport (not when a stop interrupted it).
    EvalResult evaluateAndReport(const std::string& split, Loader& loader, const Dataset& dataset,
                                 bool keep_predictions, bool interruptible = true);
    void log(LogLine::Level level, const std::string& text);
    double secondsSince(std::chrono::steady_clock::time_point t) const;

    // Copies (the splits hold shared pointers): a Trainer built from temporaries stays valid.
    const ExperimentConfig config_;
    torch::Device device_;
    std::shared_ptr<ClassifierImpl> model_;
    const DataSplits splits_;
    EventSink& sink_;
    const std::atomic<bool>& stop_;
    bool channels_last_ = false;
    bool check_finite_ = true;

    std::unique_ptr<Loader> train_loader_, val_loader_, test_loader_;
    std::unique_ptr<torch::optim::Optimizer> optimizer_;
    std::unique_ptr<Precision> precision_;
    std::unique_ptr<LearningRateSchedule> schedule_;
    std::unique_ptr<BestCheckpoint> checkpoint_;
    DeviceMonitor monitor_;

    // Progress counters.
    int64_t epoch_ = 0;
    int64_t global_step_ = 0;
    int64_t micro_total_ = 0;  // micro-batches since fit started
    double lr_ = 0.0;

    // Since the last StepMetrics.
    RunningMeter interval_meter_;
    double interval_wait_ms_ = 0.0;
    std::chrono::steady_clock::time_point interval_start_;
    std::chrono::steady_clock::time_point fit_start_;
    torch::Tensor first_bad_step_;  // int64 [1] on the device: 1-based step of the first non-finite loss
};

}  // namespace hearth
