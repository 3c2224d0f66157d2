#pragma once
// Activation checkpointing for one encoder layer (torch.utils.checkpoint, reentrant form): the
// forward pass runs without recording the layer's graph and keeps only its input; backward runs
// the layer again with the same random state (dropout masks) and autocast settings, and
// backpropagates through that recomputation. Memory per layer falls from every intermediate
// activation to one [B, T, hidden] tensor, for about one more forward pass of compute.

#include <torch/torch.h>

namespace hearth {

class EncoderLayerImpl;

// `layer` must outlive the backward pass (it is the model's own layer).
torch::Tensor checkpointedLayer(EncoderLayerImpl& layer, const torch::Tensor& x, const torch::Tensor& keep);

}  // namespace hearth
