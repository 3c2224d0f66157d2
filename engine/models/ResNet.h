#pragma once
// ResNet: torchvision's ResNet-18, -34 and -50 (torchvision.models.resnet, "v1.5": the stride of a
// bottleneck on its 3x3 convolution), with the same module and parameter names, so torchvision's
// state_dicts load as they are: conv1, bn1, layer1.0.conv1 ... layer4.2.bn3, downsample.0/1, fc.
// New weights are initialised as torchvision does (Kaiming normal, fan_out, for convolutions;
// BatchNorm weight 1, bias 0). The first convolution takes the data's channels (1 for grey
// images); each residual block is one unit of activation checkpointing; the ReLUs may work in
// place (torchvision's do).

#include "engine/models/ActivationCheckpoint.h"
#include "engine/models/ModelRegistry.h"

#include <map>
#include <string>
#include <vector>

namespace hearth {

class ResidualBlockImpl;

class ResNetImpl final : public ClassifierImpl {
public:
    // depth 18, 34 or 50; sample_shape [C, H, W].
    ResNetImpl(int depth, const std::vector<int64_t>& sample_shape, int64_t num_classes, bool inplace_relu);
    torch::Tensor forward(torch::Tensor x) override;
    // The pooled features [B, 512 or 2048] the classifier reads.
    torch::Tensor features(torch::Tensor x);
    bool isConvolutional() const override { return true; }
    PartFlops partFlops() const override { return flops_; }
    std::vector<std::vector<torch::Tensor>> blockParameters() override;
    std::vector<std::vector<torch::Tensor>> blockBuffers() override;
    std::vector<torch::Tensor> stemParameters() override;
    std::vector<torch::Tensor> stemBuffers() override;
    // Stages cut between residual blocks: the stem (conv1, bn1, max pool) on the first, the
    // pooling and fc on the last.
    bool cutsAtBlocks() const override { return true; }
    torch::Tensor forwardStage(const Batch& batch, torch::Tensor x, size_t begin, size_t end, bool head) override;
    std::vector<std::string> notes() const override { return notes_; }

    // Copies a torchvision state_dict in (dtype converted). A classifier (fc) of another class count
    // is left new, and 3-channel conv1 weights summed over their channels for grey images; both are
    // reported in notes(). Throws DataError naming `source` and every missing, unexpected or
    // mis-shaped tensor.
    void loadStateDict(const std::map<std::string, torch::Tensor>& tensors, const std::string& source);
    void addNote(std::string note) { notes_.push_back(std::move(note)); }

private:
    torch::Tensor stem(torch::Tensor x);
    torch::Tensor runResidualBlocks(torch::Tensor x, size_t begin, size_t end, BlockHooks* hooks);
    torch::Tensor pooled(const torch::Tensor& x);   // [B, C]: the blocks' output averaged over H, W

    torch::nn::Conv2d conv1_{nullptr};
    torch::nn::BatchNorm2d bn1_{nullptr};
    torch::nn::Linear fc_{nullptr};
    std::vector<std::shared_ptr<ResidualBlockImpl>> blocks_;
    bool inplace_;
    PartFlops flops_;
    std::vector<std::string> notes_;
};
TORCH_MODULE(ResNet);

// model.name resnet18 | resnet34 | resnet50, with model.pretrained's weights when set (a .pth
// state_dict or a .safetensors file).
std::shared_ptr<ClassifierImpl> makeResNet(const ModelConfig& config, const ModelInput& input);

}  // namespace hearth
