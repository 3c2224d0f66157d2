#pragma once
// The checkpoint file format: model (+ optimizer) state in one LibTorch archive with the parts
// "model" and "optimizer". Strategies write and read checkpoints through these.

#include <torch/torch.h>

#include <string>

namespace hearth {

void saveCheckpointFile(const std::string& path, const torch::nn::Module& model, torch::optim::Optimizer* optimizer);
// Loads the "model" part of a file written by saveCheckpointFile into `model`.
void loadCheckpointFile(const std::string& path, torch::nn::Module& model);

}  // namespace hearth
