#pragma once
// Mlp: a multilayer perceptron classifier (Flatten -> [Linear, ReLU, Dropout] per hidden width
// -> Linear) for tabular vectors or flattened images. Each hidden layer is one unit of
// activation checkpointing; the ReLUs may work in place.

#include "engine/models/ActivationCheckpoint.h"
#include "engine/models/ModelRegistry.h"

namespace hearth {

class MlpImpl final : public ClassifierImpl {
public:
    MlpImpl(int64_t in_features, const std::vector<int64_t>& hidden, double dropout, int64_t num_classes,
            bool inplace_relu = false);
    torch::Tensor forward(torch::Tensor x) override;
    PartFlops partFlops() const override { return flops_; }
    std::vector<std::vector<torch::Tensor>> blockParameters() override { return blockParametersOf(blocks_); }
    std::vector<std::vector<torch::Tensor>> blockBuffers() override { return blockBuffersOf(blocks_); }
    bool cutsAtBlocks() const override { return true; }
    torch::Tensor forwardStage(const Batch& batch, torch::Tensor x, size_t begin, size_t end, bool head) override;

private:
    PartFlops flops_;
    torch::nn::Sequential layers_;
    torch::nn::Linear head_{nullptr};       // the last of layers_
    std::vector<SequentialBlock> blocks_;   // [Linear, ReLU, Dropout] per hidden width
};
TORCH_MODULE(Mlp);

}  // namespace hearth
