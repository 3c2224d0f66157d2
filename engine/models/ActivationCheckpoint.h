#pragma once
// Activation checkpointing of one block of a model (torch.utils.checkpoint, reentrant form): the
// forward pass runs the block without recording its graph and keeps only its input; backward runs
// the block again with the same random state (dropout masks) and autocast settings, and
// backpropagates through that recomputation. Memory per block falls from every intermediate
// activation to its input, for about one more forward pass of the block.
// Used per encoder layer by the transformer and per block by the CNN and the MLP.

#include "engine/models/BlockHooks.h"

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace hearth {

// A block that can be checkpointed. Its forward may update state besides its output (BatchNorm's
// running statistics in training mode); stateToRestore() names those tensors, so that the
// recomputation in backward leaves them as the forward pass left them (updated once, not twice).
class Recomputable {
public:
    virtual ~Recomputable() = default;
    // `extra` is passed through unchanged (the transformer's attention mask); may be undefined.
    virtual torch::Tensor recompute(const torch::Tensor& x, const torch::Tensor& extra) = 0;
    virtual std::vector<torch::Tensor> stateToRestore() { return {}; }
};

// `block` must outlive the backward pass (it is a part of the model). The result requires grad
// even when `x` does not (the CNN's first block sees the images): the block's parameters still
// get their gradients.
torch::Tensor checkpointed(Recomputable& block, const torch::Tensor& x, const torch::Tensor& extra = {});

// Modules [begin, end) of a Sequential as one block (the CNN's conv block, the MLP's hidden
// layer); its buffers (BatchNorm's running statistics) are the state restored after recomputing.
class SequentialBlock final : public Recomputable {
public:
    SequentialBlock(const torch::nn::Sequential& sequential, size_t begin, size_t end);
    torch::Tensor forward(torch::Tensor x);
    torch::Tensor recompute(const torch::Tensor& x, const torch::Tensor& extra) override;
    std::vector<torch::Tensor> stateToRestore() override;
    std::vector<torch::Tensor> parameters() const;

private:
    std::vector<torch::nn::AnyModule> modules_;   // shares the Sequential's modules
};

// A model's blocks [begin, end) (all by default), each run plain or checkpointed (in training with
// grad mode on), between the hooks (block i of these is block i of the model's blockParameters()).
torch::Tensor runBlocks(std::vector<SequentialBlock>& blocks, torch::Tensor x, bool checkpoint,
                        BlockHooks* hooks = nullptr, size_t begin = 0, size_t end = SIZE_MAX);
std::vector<std::vector<torch::Tensor>> blockParametersOf(const std::vector<SequentialBlock>& blocks);
std::vector<std::vector<torch::Tensor>> blockBuffersOf(std::vector<SequentialBlock>& blocks);

}  // namespace hearth
