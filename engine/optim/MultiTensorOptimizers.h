#pragma once
// Adam, AdamW and SGD stepped by multi-tensor kernels (fused or foreach) instead of LibTorch's
// loop over parameters. Each is LibTorch's own optimizer class with another step(): the options,
// param groups, per-parameter state and save/load are LibTorch's, so checkpoints, schedules and
// memory accounting see no difference. Created through createOptimizer (Optimizers.h).

#include "engine/optim/Optimizers.h"

#include <torch/torch.h>

#include <memory>
#include <vector>

namespace hearth {

// kernel: Foreach, or Fused (LibTorch >= 2.4 only; the fused ones are ScalerAwareOptimizers).
std::unique_ptr<torch::optim::Optimizer> multiTensorAdam(const std::vector<torch::Tensor>& parameters,
                                                         const torch::optim::AdamOptions& options,
                                                         OptimizerKernel kernel);
std::unique_ptr<torch::optim::Optimizer> multiTensorAdamW(const std::vector<torch::Tensor>& parameters,
                                                          const torch::optim::AdamWOptions& options,
                                                          OptimizerKernel kernel);
std::unique_ptr<torch::optim::Optimizer> multiTensorSgd(const std::vector<torch::Tensor>& parameters,
                                                        const torch::optim::SGDOptions& options,
                                                        OptimizerKernel kernel);

}  // namespace hearth
