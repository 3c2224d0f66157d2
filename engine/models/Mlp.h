#pragma once
// Mlp: a multilayer perceptron classifier (Flatten -> [Linear, ReLU, Dropout] per hidden width
// -> Linear) for tabular vectors or flattened images.

#include "engine/models/ModelRegistry.h"

namespace hearth {

class MlpImpl final : public ClassifierImpl {
public:
    MlpImpl(int64_t in_features, const std::vector<int64_t>& hidden, double dropout, int64_t num_classes);
    torch::Tensor forward(torch::Tensor x) override;

private:
    torch::nn::Sequential layers_;
};
TORCH_MODULE(Mlp);

}  // namespace hearth
