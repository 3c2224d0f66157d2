#pragma once
// Cnn: a VGG-style image classifier. Each entry of model.channels adds a block
// Conv3x3-BatchNorm-ReLU-Conv3x3-BatchNorm-ReLU-MaxPool2; then Dropout and a Linear head.
// Each block is one unit of activation checkpointing; the ReLUs may work in place.

#include "engine/models/ActivationCheckpoint.h"
#include "engine/models/ModelRegistry.h"

namespace hearth {

class CnnImpl final : public ClassifierImpl {
public:
    // sample_shape is [C, H, W]; H and W must survive one halving per block. inplace_relu: each
    // ReLU overwrites the BatchNorm output it reads instead of allocating its own.
    CnnImpl(const std::vector<int64_t>& sample_shape, const std::vector<int64_t>& channels, double dropout,
            int64_t num_classes, bool inplace_relu = false);
    torch::Tensor forward(torch::Tensor x) override;
    bool isConvolutional() const override { return true; }
    PartFlops partFlops() const override { return flops_; }
    std::vector<std::vector<torch::Tensor>> blockParameters() override { return blockParametersOf(blocks_); }
    std::vector<std::vector<torch::Tensor>> blockBuffers() override { return blockBuffersOf(blocks_); }
    bool cutsAtBlocks() const override { return true; }
    torch::Tensor forwardStage(const Batch& batch, torch::Tensor x, size_t begin, size_t end, bool head) override;

private:
    PartFlops flops_;
    torch::nn::Sequential features_;
    torch::nn::Sequential head_;
    std::vector<SequentialBlock> blocks_;   // features_ cut into its conv blocks
};
TORCH_MODULE(Cnn);

}  // namespace hearth
