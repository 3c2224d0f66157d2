#include "engine/models/Mlp.h"

namespace hearth {

MlpImpl::MlpImpl(int64_t in_features, const std::vector<int64_t>& hidden, double dropout, int64_t num_classes,
                 bool inplace_relu) {
    layers_->push_back("flatten", torch::nn::Flatten());
    int64_t width = in_features;
    for (size_t i = 0; i < hidden.size(); ++i) {
        const std::string n = std::to_string(i + 1);
        layers_->push_back("fc" + n, torch::nn::Linear(width, hidden[i]));
        layers_->push_back("relu" + n, torch::nn::ReLU(torch::nn::ReLUOptions().inplace(inplace_relu)));
        layers_->push_back("dropout" + n, torch::nn::Dropout(dropout));
        blocks_.emplace_back(layers_, 1 + 3 * i, 4 + 3 * i);
        width = hidden[i];
    }
    head_ = torch::nn::Linear(width, num_classes);
    flops_ = mlpFlops(in_features, hidden, num_classes);
    layers_->push_back("head", head_);
    register_module("layers", layers_);
}

torch::Tensor MlpImpl::forward(torch::Tensor x) {
    return head_->forward(runBlocks(blocks_, x.flatten(1), checkpointsNow(), blockHooks()));
}

torch::Tensor MlpImpl::forwardStage(const Batch& batch, torch::Tensor x, size_t begin, size_t end, bool head) {
    x = runBlocks(blocks_, begin == 0 ? batch.input().flatten(1) : x, checkpointsNow(), nullptr, begin, end);
    return head ? head_->forward(x) : x;
}

}  // namespace hearth
