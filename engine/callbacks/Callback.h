#pragma once
// Callbacks: code that runs at fixed points of the fit, as in Lightning's Callback. Every hook
// does nothing by default. A callback sees the loop through TrainerContext: the loop state,
// the model, optimizer and strategy, the event sink; it can ask the run to stop (the request is
// honoured after the current micro-batch, or after the current epoch from an epoch hook).

#include "engine/config/ExperimentConfig.h"
#include "engine/events/Events.h"
#include "engine/models/ModelRegistry.h"
#include "engine/train/FitProgress.h"

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace hearth {

class Strategy;

// What the loop measured at the end of an epoch; callbacks may mark it the best one.
struct EpochEnd {
    bool has_val = false;
    double val_loss = 0.0;
    double val_accuracy = 0.0;
    bool is_best = false;  // set by the checkpoint callback when this epoch improved
};

class TrainerContext {
public:
    virtual ~TrainerContext() = default;
    virtual const ExperimentConfig& config() const = 0;
    virtual LoopState& state() = 0;
    // The fit's whole progress: the loop, the epoch's running totals, the fit's totals.
    virtual const FitProgress& progress() const = 0;
    virtual ClassifierImpl& model() = 0;
    virtual torch::optim::Optimizer& optimizer() = 0;
    virtual Strategy& strategy() = 0;
    virtual void emit(const Event& event) = 0;
    void log(LogLine::Level level, const std::string& text) { emit(LogLine{level, text}); }
    // Ends the fit after the current micro-batch (from an epoch hook: after this epoch).
    virtual void requestStop(const std::string& reason) = 0;
    virtual bool stopRequested() const = 0;
    // From an epoch hook: this is the last epoch, and the fit ends as completed (the best
    // checkpoint is tested) with `reason` recorded (early stopping).
    virtual void finishEarly(const std::string& reason) = 0;
    // Whether a training state can be written now: between logged optimizer steps, outside an
    // accumulation group, or at a stop after an epoch's training (the same answer on every rank).
    virtual bool canSaveState() const = 0;
    // Writes the fit's whole state (TrainingState) to `path`, from onTrainBatchEnd or
    // onTrainStopped: false (nothing written) when !canSaveState(). Data-parallel: a collective
    // that every rank calls at the same point, each rank's part gathered into rank 0's file (the
    // other ranks pass an empty path). Throws TrainingStateError.
    virtual bool saveState(const std::string& path) = 0;
    // What filled memory at the fit's peak, and the peak, as measured by a monitoring callback
    // (DeviceStatsMonitor) at the end of fit: the Trainer hands them to its owner. A data-parallel
    // run's peak is its largest process's; the breakdown is this process's (rank 0's).
    virtual void recordMemory(int64_t peak_bytes, const MemoryBreakdown& breakdown) = 0;
};

class Callback {
public:
    virtual ~Callback() = default;
    virtual void onFitStart(TrainerContext&) {}
    // A resumed fit: the saved progress and the callbacks' states were restored (after onFitStart).
    virtual void onResume(TrainerContext&) {}
    virtual void onTrainEpochStart(TrainerContext&) {}
    // After a micro-batch's forward and loss, before its backward: what the forward keeps for the
    // backward is allocated now.
    virtual void onForwardEnd(TrainerContext&) {}
    // After each micro-batch (state().batch_in_epoch already counts it).
    virtual void onTrainBatchEnd(TrainerContext&) {}
    // After the backward of an accumulation group's last micro-batch, before its optimizer step:
    // the gradients are there.
    virtual void onBeforeOptimizerStep(TrainerContext&) {}
    // The step metrics of an interval were read back, on every rank at the same point (inside
    // the metric sync, so a collective here is timed with it): this rank's own samples/s over it.
    virtual void onMetricsSync(TrainerContext&, double /*local_samples_per_sec*/) {}
    // After each batch of a validation or test pass.
    virtual void onEvalBatchEnd(TrainerContext&) {}
    // A stop ends the fit: the last moment to save a training state where it stopped. Part-way
    // through an epoch, after the micro-batch's metrics were logged (saveState declines inside a
    // group); during an epoch's validation, at the trained epoch (a resume validates it again);
    // after a validated epoch, at the next epoch's start; or during the test, past the last
    // epoch (state() says which). A stop in the epoch's last micro-batch comes here after that
    // epoch's validation.
    virtual void onTrainStopped(TrainerContext&) {}
    // After validation of a completed epoch, before EpochMetrics is emitted.
    virtual void onValidationEnd(TrainerContext&, EpochEnd&) {}
    virtual void onFitEnd(TrainerContext&) {}
    // Before the test split is evaluated (the best checkpoint puts its weights back here).
    virtual void onTestStart(TrainerContext&) {}

    // Resume: the callback's own state in a training state, under stateKey() (empty: nothing to
    // keep), and back; loadState runs after the model and the loop state were restored.
    virtual std::string stateKey() const { return {}; }
    virtual std::string stateJson() const { return "{}"; }
    virtual void loadState(TrainerContext&, const std::string& /*json*/) {}
};

// Every callback's state as one JSON object ({"<stateKey>": {...}}), and back: loadState for each
// callback whose key it holds.
std::string callbackStates(const std::vector<std::shared_ptr<Callback>>& callbacks);
void loadCallbackStates(const std::vector<std::shared_ptr<Callback>>& callbacks, TrainerContext& ctx,
                        const std::string& json);

}  // namespace hearth
