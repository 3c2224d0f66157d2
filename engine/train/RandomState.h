#pragma once
// RandomState: reading and setting LibTorch's default random generators (the CPU's, a CUDA
// device's), the one place that does it. A training state saves them, activation checkpointing
// replays a block's dropout masks with them, and the finders leave the process's state as it was.

#include <torch/torch.h>

#include <vector>

namespace hearth {

// The default generator of `device` (CPU, or a CUDA device: index -1 is the current one), and
// back. A state is a uint8 tensor on the host.
torch::Tensor generatorState(torch::Device device);
void setGeneratorState(torch::Device device, const torch::Tensor& state);

// The default CPU generator's state, and back.
torch::Tensor cpuRngState();
void setCpuRngState(const torch::Tensor& state);
// The generator of a model's device when it is a CUDA device, and back: undefined / nothing for
// other devices (and setting an undefined state does nothing).
torch::Tensor deviceRngState(torch::Device device);
void setDeviceRngState(torch::Device device, const torch::Tensor& state);

// Saves the CPU generator, every CUDA device's and LibTorch's thread count; puts them back when it
// goes out of scope (the finders re-seed as a run does, and leave the process as they found it).
class RandomStateGuard {
public:
    RandomStateGuard();
    ~RandomStateGuard();
    RandomStateGuard(const RandomStateGuard&) = delete;
    RandomStateGuard& operator=(const RandomStateGuard&) = delete;

private:
    torch::Tensor cpu_;
    std::vector<torch::Tensor> cuda_;
    int threads_;
};

}  // namespace hearth
