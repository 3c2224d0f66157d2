#pragma once
// Learning-rate schedules as a pure function of progress, set on the optimizer before each
// optimizer step: none, step (per epoch), cosine and linear-warmup (per optimizer step over the
// whole fit), with Lightning/Hugging Face semantics.

#include "engine/config/ExperimentConfig.h"

#include <torch/torch.h>

namespace hearth {

class LearningRateSchedule final {
public:
    // total_steps: optimizer steps of the whole fit. Throws ConfigError("scheduler.name").
    LearningRateSchedule(const SchedulerConfig& config, double base_lr, int64_t total_steps);

    // lr for the optimizer step with 0-based index `step`, taken in 0-based `epoch`.
    double lrAt(int64_t step, int64_t epoch) const;
    // Sets lrAt(step, epoch) on every param group; returns it.
    double apply(torch::optim::Optimizer& optimizer, int64_t step, int64_t epoch) const;
    std::string describe() const;

private:
    SchedulerConfig config_;
    double base_lr_;
    int64_t total_steps_;
};

}  // namespace hearth
