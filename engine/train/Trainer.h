#pragma once
// Trainer: the fit / validate / test loops, decomposed like Lightning's. The loop moves batches
// and counts; everything else is a part it is given (TrainerParts): the Strategy (device,
// precision, backward, optimizer step, reductions, stop agreement, checkpoint files), the Task
// (loss and predictions), Callbacks (the device monitor, the best checkpoint, ...) and an optional
// Profiler that brackets each section of a step. Progress is one FitProgress value (the loop
// position, the epoch's running totals, the fit's totals), which a TrainingState saves whole;
// the MetricsLogger turns it into StepMetrics and EpochMetrics.
//
// Events go to the sink on the calling thread. `stop` (the owner's request) and callbacks'
// requests are read after every micro-batch: a stop finishes that micro-batch (and its optimizer
// step when it closes a group), drops the partial gradients of an unfinished accumulation group,
// and skips validation and test (the best checkpoint of the completed epochs stays on disk); a
// stop on an epoch's last micro-batch still validates and records that epoch. fit() then reports
// stopped.

#include "engine/callbacks/Callback.h"
#include "engine/data/Loader.h"
#include "engine/events/Events.h"
#include "engine/models/ModelRegistry.h"
#include "engine/monitor/Profiler.h"
#include "engine/monitor/StepProfiler.h"
#include "engine/optim/Schedulers.h"
#include "engine/strategy/CapturedStep.h"
#include "engine/strategy/Strategy.h"
#include "engine/train/Evaluation.h"
#include "engine/train/FitProgress.h"
#include "engine/train/MetricsLogger.h"
#include "engine/train/Task.h"
#include "engine/train/TrainerParts.h"
#include "engine/train/TrainingState.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

namespace hearth {

struct FitResult {
    bool stopped = false;
    int64_t epochs_completed = 0;
    int64_t global_steps = 0;
    double train_time_s = 0.0;     // training and validation
    double samples_per_sec = 0.0;  // training samples over pure training time
    double tflops = -1.0;          // model FLOPs per second on this rank's device over its training time; -1 unknown
    double mfu = -1.0;             // tflops over the device's dense peak; -1 unknown
    double best_val_accuracy = 0.0;
    std::string stop_reason;       // why the fit ended before max_epochs (early stopping); "" otherwise
};

struct TestResult {
    bool ran = false;
    double loss = 0.0;
    double accuracy = 0.0;
};

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

    int64_t batchesPerEpoch() const { return train_loader_->batchesPerEpoch(); }
    int64_t optimizerStepsPerEpoch() const;
    const LoopState& loopState() const { return progress_.loop; }
    const FitProgress& fitProgress() const { return progress_; }
    const Loader& trainLoader() const { return *train_loader_; }
    const Strategy& strategyInUse() const { return *strategy_; }
    const LearningRateSchedule& schedule() const { return *schedule_; }
    // What filled memory at fit's peak, and the peak (device empty / 0 when fit made no optimizer
    // step, or without a monitoring callback: defaultTrainerParts adds DeviceStatsMonitor).
    const MemoryBreakdown& memoryBreakdown() const { return memory_; }
    int64_t peakMemoryBytes() const { return peak_memory_bytes_; }
    // The captured step (trainer.cuda_graph=step), null when steps run eagerly.
    const CapturedStep* capturedStep() const { return captured_.get(); }

private:
    // TrainerContext
    const ExperimentConfig& config() const override { return config_; }
    LoopState& state() override { return progress_.loop; }
    const FitProgress& progress() const override { return progress_; }
    ClassifierImpl& model() override { return *model_; }
    torch::optim::Optimizer& optimizer() override { return *optimizer_; }
    Strategy& strategy() override { return *strategy_; }
    void emit(const Event& event) override { sink_.onEvent(event); }
    void requestStop(const std::string& reason) override;
    bool stopRequested() const override { return stop_requested_ || external_stop_.load(); }
    void finishEarly(const std::string& reason) override {
        if (progress_.loop.finish_reason.empty()) progress_.loop.finish_reason = reason;
    }
    bool canSaveState() const override;
    bool saveState(const std::string& path) override;
    void recordMemory(int64_t peak_bytes, const MemoryBreakdown& breakdown) override;
    TrainingState captureState() const;
    void applyResume();

    // Returns true when the fit goes on after this epoch.
    bool runEpoch(FitResult& result, int64_t first_batch);
    bool trainEpoch(int64_t first_batch);
    void trainMicroBatch(const Batch& batch);
    void runMicroBatch(const Batch& batch, int64_t group_size, bool closes_group);
    void setUpCapture();
    void stepOptimizer(int64_t group_size);
    void stepCapturedGroup(int64_t group_size);
    void endOptimizerStep(int64_t group_size);
    TrainingStep step() { return TrainingStep(*strategy_, *model_, *task_, profiler_); }
    void endStoppedEpoch();
    void stopBetweenEpochs(int64_t next_epoch);
    void emitStepMetrics();
    void failOnNonFiniteLoss();
    // interruptible: a stop request ends the validation pass early (false: the pass completes).
    bool validateEpoch(bool interruptible);
    // Runs `split` through the model and emits its EvalReport (not when a stop interrupted it).
    EvalResult evaluateAndReport(const std::string& split, Loader& loader, const Dataset& dataset,
                                 bool keep_predictions, bool interruptible = true);
    template <typename Hook>
    void forEachCallback(Hook&& hook);
    int64_t groupSize() const { return std::max<int64_t>(config_.trainer.accumulate_grad_batches, 1); }

    // Copies (the splits hold shared pointers): a Trainer built from temporaries stays valid.
    const ExperimentConfig config_;
    std::unique_ptr<Strategy> strategy_;
    std::unique_ptr<Task> task_;
    std::vector<std::shared_ptr<Callback>> callbacks_;
    Profiler* profiler_;
    std::unique_ptr<StepProfiler> step_profiler_;  // trainer.profile_every_n_steps (without parts.profiler)
    std::shared_ptr<ClassifierImpl> model_;
    const ForwardFlops model_flops_;   // the model's count, read once (summed from its parts)
    const DataSplits splits_;
    EventSink& sink_;
    const std::atomic<bool>& external_stop_;
    bool stop_requested_ = false;  // by a callback

    std::unique_ptr<Loader> train_loader_, val_loader_, test_loader_;
    std::unique_ptr<torch::optim::Optimizer> optimizer_;
    std::unique_ptr<LearningRateSchedule> schedule_;

    FitProgress progress_;            // the fit's progress: what a training state saves
    MetricsLogger metrics_;           // the step-metric interval, the fit's clock, the metric events
    // Where the loop stands, for a training state: inside an epoch's training, its training done
    // and its validation not yet counted, or stopped between epochs (the next one's start).
    enum class Position { None, InEpoch, EpochTrained, BetweenEpochs };
    Position position_ = Position::None;
    MetricsLogger::Clock::time_point epoch_start_;  // progress_.epoch.train_time_s ago when it (re)started
    StepBreakdown epoch_breakdown_;   // the finished epoch's, for its EpochMetrics
    MemoryBreakdown memory_;          // from the monitoring callback
    int64_t peak_memory_bytes_ = 0;

    // Resume: the state read by resumeFrom, applied when fit() starts.
    std::optional<TrainingState> resume_;

    // trainer.cuda_graph=step: the captured step, the group's device batches waiting for it, and
    // the optimizer step's number on the device (the captured NaN watch reads it).
    std::unique_ptr<CapturedStep> captured_;
    std::vector<Batch> pending_;
    torch::Tensor step_number_;
    bool logged_eager_group_ = false;  // the run log said once why a group ran eagerly
};

}  // namespace hearth
