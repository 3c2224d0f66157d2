#pragma once
// Cnn: a VGG-style image classifier. Each entry of model.channels adds a block
// Conv3x3-BatchNorm-ReLU-Conv3x3-BatchNorm-ReLU-MaxPool2; then Dropout and a Linear head.

#include "engine/models/ModelRegistry.h"

namespace hearth {

class CnnImpl final : public ClassifierImpl {
public:
    // sample_shape is [C, H, W]; H and W must survive one halving per block.
    CnnImpl(const std::vector<int64_t>& sample_shape, const std::vector<int64_t>& channels, double dropout,
            int64_t num_classes);
    torch::Tensor forward(torch::Tensor x) override;
    bool isConvolutional() const override { return true; }

private:
    torch::nn::Sequential features_;
    torch::nn::Sequential head_;
};
TORCH_MODULE(Cnn);

}  // namespace hearth
