#pragma once
// The sizes of the tensors a training step holds: parameters, gradients and optimizer state,
// counted from the tensors themselves (each storage once), for the memory breakdown.

#include <torch/torch.h>

#include <cstdint>

namespace hearth {

struct HeldBytes {
    int64_t parameters = 0;        // the model's parameters (zero3: this rank's shards of them)
    int64_t gradients = 0;         // defined .grad of the model's and the optimizer's parameters
    int64_t optimizer_state = 0;   // moments, momentum buffers, and copies only the optimizer holds (zero2's master slice)
    // An offloaded optimizer's (trainer.offload_optimizer) state, host copies and their gradient
    // buffers, in host memory off the training device; on a CPU run they count as optimizer state.
    int64_t offloaded = 0;
};

// Parameters and gradients now; optimizer state (and what is offloaded) once the optimizer has stepped (its state is
// created lazily).
HeldBytes measureHeldBytes(const torch::nn::Module& model, torch::optim::Optimizer& optimizer);

}  // namespace hearth
