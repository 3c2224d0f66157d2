#pragma once
// Trainer: the fit / validate / test loops, decomposed like Lightning's. The loop moves batches
// and counts; everything else is a part it is given (TrainerParts): the Strategy (device,
// precision, backward, optimizer step, reductions, stop agreement, checkpoint files), the Task
// (loss and predictions), Callbacks (the best checkpoint, ...) and an optional Profiler that
// brackets each section of a step. Progress is one LoopState value.
//
// Events go to the sink on the calling thread. `stop` (the owner's request) and callbacks'
// requests are read after every micro-batch: a stop finishes that micro-batch (and its optimizer
// step when it closes a group), drops the partial gradients of an unfinished accumulation group,
// and skips validation and test (the best checkpoint of the completed epochs stays on disk); a
// stop on an epoch's last micro-batch still validates and records that epoch. fit() then reports
// stopped.

#include "engine/data/Loader.h"
#include "engine/events/Events.h"
#include "engine/models/ModelRegistry.h"
#include "engine/monitor/DeviceMonitor.h"
#include "engine/strategy/Strategy.h"
#include "engine/train/Callback.h"
#include "engine/train/Evaluation.h"
#include "engine/train/LoopState.h"
#include "engine/train/Profiler.h"
#include "engine/train/RunningMeter.h"
#include "engine/train/Schedulers.h"
#include "engine/train/StepProfiler.h"
#include "engine/train/Task.h"
#include "engine/train/TrainingState.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

namespace hearth {

struct FitResult {
    bool stopped = false;
    int64_t epochs_completed = 0;
    int64_t global_steps = 0;
    double train_time_s = 0.0;     // training and validation
    double samples_per_sec = 0.0;  // training samples over pure training time
    double best_val_accuracy = 0.0;
    std::string stop_reason;       // why the fit ended before max_epochs (early stopping); "" otherwise
};

struct TestResult {
    bool ran = false;
    double loss = 0.0;
    double accuracy = 0.0;
};

struct TrainerParts {
    std::unique_ptr<Strategy> strategy;
    std::unique_ptr<Task> task;
    std::vector<std::shared_ptr<Callback>> callbacks;  // called in this order
    Profiler* profiler = nullptr;                       // not owned; null = off
};

// What a config asks for: its strategy on `device`, classification, and the best-checkpoint
// callback writing to artifacts_dir ("" = in memory only). Throws ConfigError.
TrainerParts defaultTrainerParts(const ExperimentConfig& config, torch::Device device,
                                 const std::string& artifacts_dir);

class Trainer final : private TrainerContext {
public:
    // The strategy places the model. Throws ConfigError for settings it cannot use.
    Trainer(const ExperimentConfig& config, TrainerParts parts, std::shared_ptr<ClassifierImpl> model,
            const DataSplits& splits, EventSink& sink, const std::atomic<bool>& stop);
    // With defaultTrainerParts(config, device, artifacts_dir).
    Trainer(const ExperimentConfig& config, torch::Device device, std::shared_ptr<ClassifierImpl> model,
            const DataSplits& splits, const std::string& artifacts_dir, EventSink& sink, const std::atomic<bool>& stop);
    ~Trainer() override;
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    // Resume: fit() continues from the training state at `path` (written by saveState): the same
    // epoch, the next micro-batch, the same curves, losses and weights as if never stopped.
    // Call before fit(). Throws TrainingStateError, with nothing changed, when it cannot be used.
    ResumePoint resumeFrom(const std::string& path);
    bool resuming() const { return resume_.has_value(); }

    FitResult fit();
    // Evaluates the test split (callbacks' onTestStart first: the best checkpoint's weights).
    TestResult test();

    int64_t batchesPerEpoch() const;
    int64_t optimizerStepsPerEpoch() const;
    const LoopState& loopState() const { return state_; }
    const Loader& trainLoader() const { return *train_loader_; }
    const Strategy& strategyInUse() const { return *strategy_; }
    const LearningRateSchedule& schedule() const { return *schedule_; }
    DeviceMonitor& monitor() { return monitor_; }
    // What filled memory at fit's peak (device empty when fit made no optimizer step).
    const MemoryBreakdown& memoryBreakdown() const { return memory_; }

private:
    struct EpochStats;
    // TrainerContext
    const ExperimentConfig& config() const override { return config_; }
    LoopState& state() override { return state_; }
    ClassifierImpl& model() override { return *model_; }
    torch::optim::Optimizer& optimizer() override { return *optimizer_; }
    Strategy& strategy() override { return *strategy_; }
    void emit(const Event& event) override { sink_.onEvent(event); }
    void requestStop(const std::string& reason) override;
    bool stopRequested() const override;
    void finishEarly(const std::string& reason) override;
    bool canSaveState() const override;
    bool saveState(const std::string& path) override;
    TrainingState captureState() const;
    void applyResume(FitResult& result, EpochStats& stats);

    bool trainEpoch(EpochStats& stats, int64_t first_batch);
    void trainMicroBatch(const Batch& batch, EpochStats& stats);
    void emitStepMetrics(EpochStats& stats);
    MeterTotals reducedTotals(const MeterTotals& local) const;
    void failOnNonFiniteLoss();
    // interruptible: a stop request ends the validation pass early (false: the pass completes).
    bool validateEpoch(const EpochStats& stats, FitResult& result, bool interruptible);
    // Runs `split` through the model and emits its EvalReport (not when a stop interrupted it).
    EvalResult evaluateAndReport(const std::string& split, Loader& loader, const Dataset& dataset,
                                 bool keep_predictions, bool interruptible = true);
    template <typename Hook>
    void forEachCallback(Hook&& hook);
    int64_t groupSize() const;  // accumulate_grad_batches, at least 1

    // Copies (the splits hold shared pointers): a Trainer built from temporaries stays valid.
    const ExperimentConfig config_;
    std::unique_ptr<Strategy> strategy_;
    std::unique_ptr<Task> task_;
    std::vector<std::shared_ptr<Callback>> callbacks_;
    Profiler* profiler_;
    std::unique_ptr<StepProfiler> step_profiler_;  // trainer.profile_every_n_steps (without parts.profiler)
    struct CommSnapshot {
        double comm_total = 0.0, overlap_total = 0.0;
        int64_t micro_batches = 0;
    };
    CommSnapshot interval_comm_, epoch_comm_;
    MemoryBreakdown memory_;
    std::string finish_reason_;           // set by finishEarly()
    int64_t baseline_bytes_ = 0;          // the memory breakdown's baseline (RSS, or CUDA allocated)
    int64_t baseline_tensor_bytes_ = 0;   // tensor bytes then (-1: not counted)
    void subtractCommWait(StepBreakdown& b, CommSnapshot& last) const;
    std::shared_ptr<ClassifierImpl> model_;
    const DataSplits splits_;
    EventSink& sink_;
    const std::atomic<bool>& external_stop_;
    bool stop_requested_ = false;  // by a callback

    std::unique_ptr<Loader> train_loader_, val_loader_, test_loader_;
    std::unique_ptr<torch::optim::Optimizer> optimizer_;
    std::unique_ptr<LearningRateSchedule> schedule_;
    DeviceMonitor monitor_;
    LoopState state_;

    // Since the last StepMetrics.
    RunningMeter interval_meter_;
    double interval_wait_ms_ = 0.0;
    std::chrono::steady_clock::time_point interval_start_;
    std::chrono::steady_clock::time_point fit_start_;

    // Resume: the state read by resumeFrom (applied when fit() starts), the totals of the fit's
    // completed epochs and the epoch in progress (what saveState writes).
    std::optional<TrainingState> resume_;
    FitTotals fit_totals_;
    const EpochStats* current_epoch_ = nullptr;
};

}  // namespace hearth
