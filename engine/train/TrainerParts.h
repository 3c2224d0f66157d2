#pragma once
// TrainerParts: what a Trainer is given (its strategy, task, callbacks and profiler), and what a
// config asks for (defaultTrainerParts). Tests and later features pass their own.

#include "engine/config/ExperimentConfig.h"
#include "engine/data/Loader.h"
#include "engine/strategy/Strategy.h"
#include "engine/train/Callback.h"
#include "engine/train/Profiler.h"
#include "engine/train/Task.h"

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace hearth {

struct TrainerParts {
    std::unique_ptr<Strategy> strategy;
    std::unique_ptr<Task> task;
    std::vector<std::shared_ptr<Callback>> callbacks;  // called in this order
    Profiler* profiler = nullptr;                       // not owned; null = off
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

}  // namespace hearth
