#include "engine/models/Cnn.h"

namespace hearth {
namespace {

torch::nn::Conv2d conv3x3(int64_t in, int64_t out) {
    // No bias: the BatchNorm that follows has its own shift.
    return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1).bias(false));
}

constexpr size_t kModulesPerBlock = 7;

}  // namespace

CnnImpl::CnnImpl(const std::vector<int64_t>& sample_shape, const std::vector<int64_t>& channels, double dropout,
                 int64_t num_classes, bool inplace_relu)
    : flops_(cnnFlops(sample_shape, channels, num_classes)) {
    int64_t in = sample_shape.at(0);
    int64_t h = sample_shape.at(1);
    int64_t w = sample_shape.at(2);
    const auto relu = torch::nn::ReLUOptions().inplace(inplace_relu);
    for (size_t i = 0; i < channels.size(); ++i) {
        const std::string n = std::to_string(i + 1);
        const int64_t out = channels[i];
        features_->push_back("block" + n + "_conv1", conv3x3(in, out));
        features_->push_back("block" + n + "_bn1", torch::nn::BatchNorm2d(out));
        features_->push_back("block" + n + "_relu1", torch::nn::ReLU(relu));
        features_->push_back("block" + n + "_conv2", conv3x3(out, out));
        features_->push_back("block" + n + "_bn2", torch::nn::BatchNorm2d(out));
        features_->push_back("block" + n + "_relu2", torch::nn::ReLU(relu));
        features_->push_back("block" + n + "_pool", torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)));
        blocks_.emplace_back(features_, i * kModulesPerBlock, (i + 1) * kModulesPerBlock);
        in = out;
        h /= 2;
        w /= 2;
    }
    head_->push_back("flatten", torch::nn::Flatten());
    head_->push_back("dropout", torch::nn::Dropout(dropout));
    head_->push_back("fc", torch::nn::Linear(in * h * w, num_classes));
    register_module("features", features_);
    register_module("head", head_);
}

torch::Tensor CnnImpl::forward(torch::Tensor x) {
    return head_->forward(runBlocks(blocks_, std::move(x), checkpointsNow(), blockHooks()));
}

torch::Tensor CnnImpl::forwardStage(const Batch& batch, torch::Tensor x, size_t begin, size_t end, bool head) {
    x = runBlocks(blocks_, begin == 0 ? batch.input() : x, checkpointsNow(), nullptr, begin, end);
    return head ? head_->forward(x) : x;
}

}  // namespace hearth
