#pragma once
// TrainerParts: what a Trainer is given (its strategy, task, callbacks and profiler), and what a
// config asks for (defaultTrainerParts). Tests and later features pass their own. Also what the
// Trainer shares with the finders' trials: the training loader's options and the training step.

#include "engine/callbacks/Callback.h"
#include "engine/config/ExperimentConfig.h"
#include "engine/data/Loader.h"
#include "engine/monitor/Profiler.h"
#include "engine/strategy/Strategy.h"
#include "engine/train/MetricsLogger.h"
#include "engine/train/Task.h"

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hearth {

struct TrainerParts {
    std::unique_ptr<Strategy> strategy;
    std::unique_ptr<Task> task;
    std::vector<std::shared_ptr<Callback>> callbacks;  // called in this order
    Profiler* profiler = nullptr;                       // not owned; null = off
    double peak_flops = 0.0;   // the device's dense peak for the precision, FLOP/s (MFU); 0 = unknown
};

// What a config asks for: its strategy on `device`, classification, the device monitor (device
// samples, rank reports, the memory breakdown), the best-checkpoint callback writing to
// artifacts_dir ("" = in memory only), early stopping and safety checkpoints when configured.
// Throws ConfigError.
TrainerParts defaultTrainerParts(const ExperimentConfig& config, torch::Device device,
                                 const std::string& artifacts_dir);

// The training loader's options: the strategy's (shard, batch size, workers, pinned memory), the
// config's image augmentation, and length bucketing on text data. What the Trainer and the finders'
// trials both train on.
LoaderOptions trainLoaderOptions(const ExperimentConfig& config, const Strategy& strategy);

// The training step as a run takes it, for the Trainer and the finders' trials alike (a batch-size
// trial then measures the memory a run needs): a micro-batch's forward, loss, running metrics and
// backward scaled to its accumulation group; then the group's optimizer step. Profiled sections
// when given a profiler. `after_phase` runs after forward and after backward, told which ended
// (a finder's memory check; the Trainer's onForwardEnd callbacks).
class TrainingStep {
public:
    TrainingStep(Strategy& strategy, ClassifierImpl& model, const Task& task, Profiler* profiler = nullptr)
        : strategy_(strategy), model_(model), task_(task), profiler_(profiler) {}

    // Returns the micro-batch's loss (undivided).
    torch::Tensor microBatch(const Batch& batch, int64_t group_size, bool closes_group, MetricsLogger& metrics,
                             const std::function<void(Section)>& after_phase = {});
    // microBatch's device work alone: the running metrics summed on the device, the micro-batch
    // not counted (what a captured step records; its runner counts each replay's micro-batches).
    torch::Tensor computeMicroBatch(const Batch& batch, int64_t group_size, bool closes_group,
                                    MetricsLogger& metrics, const std::function<void(Section)>& after_phase = {});
    // The strategy's optimizer step (a step skipped for the loss scaler is counted by the precision).
    void optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val);

private:
    Strategy& strategy_;
    ClassifierImpl& model_;
    const Task& task_;
    Profiler* profiler_;
};

}  // namespace hearth
