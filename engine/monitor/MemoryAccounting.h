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

// Parameters and gradients now (with the strategy's gradient buffers, Strategy::gradientBuffers);
// optimizer state (and what is offloaded) once the optimizer has stepped (its state is created
// lazily).
HeldBytes measureHeldBytes(const torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                           const std::vector<torch::Tensor>& gradient_buffers = {});

// What a process held before its first step, as the memory breakdown's baseline (a run's, a
// footprint probe's): the bytes (RSS on a host, allocated on a GPU) and the counted tensor bytes
// (-1: not counted), less the gradient buffers a strategy allocated when it set the model up
// (Strategy::gradientBuffers), which the breakdown counts as gradients, and less the optimizer
// state already held (`optimizer_state_bytes`: a resumed fit's, loaded before it starts), which it
// counts as optimizer state.
struct MemoryBaseline {
    int64_t bytes = 0;
    int64_t tensor_bytes = -1;
};
MemoryBaseline memoryBaseline(int64_t current_bytes, int64_t tensor_bytes,
                              const std::vector<torch::Tensor>& gradient_buffers, int64_t optimizer_state_bytes = 0);

// How the memory breakdown splits a host's peak (a run's, or a footprint probe's): activations are
// the counted tensor bytes' growth beyond the held ones (gradients + optimizer state); what the
// peak RSS grew by beyond the tensors is the heap's slack (reserved_unused: freed blocks the C heap
// keeps, oneDNN's scratchpads).
struct HostPeakSplit {
    int64_t activations = 0;
    int64_t heap_beyond_tensors = 0;
};
HostPeakSplit splitHostPeak(int64_t peak_rss, int64_t baseline_rss, int64_t tensor_peak, int64_t baseline_tensors,
                            int64_t held);

}  // namespace hearth
