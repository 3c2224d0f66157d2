#pragma once
// BlockHooks: what a strategy does around each block a model runs (a conv block, a hidden layer,
// a residual block, an encoder layer), the blocks being those of ClassifierImpl::blockParameters()
// in the same order. ZeRO-3 gathers a block's parameters just before the block runs, frees them
// after it, and hooks the block's output to gather them again before the block's backward.

#include <torch/torch.h>

#include <cstddef>
#include <utility>

namespace hearth {

class BlockHooks {
public:
    virtual ~BlockHooks() = default;
    virtual void beforeBlock(size_t index) = 0;
    // Returns the block's output (with a gradient hook attached, or as it came).
    virtual torch::Tensor afterBlock(size_t index, torch::Tensor output) = 0;
};

// Runs block `index` (`run()` returns its output) between the hooks; just `run()` without hooks.
template <class Run>
torch::Tensor runBlock(BlockHooks* hooks, size_t index, Run&& run) {
    if (!hooks) return std::forward<Run>(run)();
    hooks->beforeBlock(index);
    return hooks->afterBlock(index, std::forward<Run>(run)());
}

}  // namespace hearth
