#include "engine/optim/Schedulers.h"

#include "engine/optim/Optimizers.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace hearth {

LearningRateSchedule::LearningRateSchedule(const SchedulerConfig& config, double base_lr, int64_t total_steps)
    : config_(config), base_lr_(base_lr), total_steps_(std::max<int64_t>(total_steps, 1)) {
    const auto& n = config.name;
    if (n != "none" && n != "step" && n != "cosine" && n != "linear-warmup") {
        throw ConfigError("scheduler.name", "unknown scheduler '" + n + "'; use none, step, cosine or linear-warmup");
    }
    if (n == "step" && config.step_size < 1) {
        throw ConfigError("scheduler.step_size", "must be >= 1 epoch");
    }
    if (n == "linear-warmup" && config.warmup_steps < 0) {
        throw ConfigError("scheduler.warmup_steps", "must be >= 0");
    }
}

double LearningRateSchedule::lrAt(int64_t step, int64_t epoch) const {
    const double min_lr = config_.min_lr;
    if (config_.name == "step") {
        // torch.optim.lr_scheduler.StepLR stepped once per epoch.
        const int64_t decays = epoch / config_.step_size;  // integer division: whole steps, as StepLR
        return base_lr_ * std::pow(config_.gamma, static_cast<double>(decays));
    }
    if (config_.name == "cosine") {
        // CosineAnnealingLR(T_max = total steps, eta_min = min_lr) stepped per optimizer step.
        const double t = std::min(1.0, static_cast<double>(step) / static_cast<double>(total_steps_));
        return min_lr + (base_lr_ - min_lr) * 0.5 * (1.0 + std::cos(M_PI * t));
    }
    if (config_.name == "linear-warmup") {
        const int64_t warmup = config_.warmup_steps;
        if (step < warmup) {
            // Ramp to base_lr; the first step uses base_lr/warmup rather than 0.
            return base_lr_ * static_cast<double>(step + 1) / static_cast<double>(warmup);
        }
        const int64_t decay_steps = std::max<int64_t>(total_steps_ - warmup, 1);
        const double t = std::min(1.0, static_cast<double>(step - warmup) / static_cast<double>(decay_steps));
        return base_lr_ + (min_lr - base_lr_) * t;
    }
    return base_lr_;
}

double LearningRateSchedule::apply(torch::optim::Optimizer& optimizer, int64_t step, int64_t epoch) const {
    const double lr = lrAt(step, epoch);
    setLearningRate(optimizer, lr);
    return lr;
}

std::string LearningRateSchedule::describe() const {
    std::ostringstream s;
    s << config_.name;
    if (config_.name == "step") {
        s << " (x" << config_.gamma << " every " << config_.step_size << " epochs)";
    } else if (config_.name == "cosine") {
        s << " (per optimizer step over " << total_steps_ << " steps to " << config_.min_lr << ")";
    } else if (config_.name == "linear-warmup") {
        s << " (" << config_.warmup_steps << " warm-up steps, then linear to " << config_.min_lr << " at step "
          << total_steps_ << ")";
    }
    return s.str();
}

}  // namespace hearth
