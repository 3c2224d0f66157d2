#pragma once
// Optimizers by name (sgd, adam, adamw, adagrad) from OptimizerConfig, and the learning-rate
// accessors the schedulers and metrics use.

#include "engine/config/ExperimentConfig.h"

#include <torch/torch.h>

#include <memory>
#include <vector>

namespace hearth {

// Throws ConfigError("optimizer.name") for an unknown name.
std::unique_ptr<torch::optim::Optimizer> createOptimizer(const OptimizerConfig& config,
                                                         const std::vector<torch::Tensor>& parameters);
double currentLearningRate(torch::optim::Optimizer& optimizer);
void setLearningRate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace hearth
