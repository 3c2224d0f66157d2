#include "engine/models/ResNet.h"

#include "engine/config/ExperimentConfig.h"
#include "engine/data/DataError.h"
#include "engine/weights/SafeTensors.h"
#include "engine/weights/StateDictFile.h"
#include "engine/weights/WeightsText.h"

#include <filesystem>
#include <set>

namespace hearth {
namespace {

namespace nn = torch::nn;

nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
    return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

// Multiply-adds x 2 of a convolution producing [out, h, w] from `in` channels.
double convFlops(int64_t in, int64_t out, int64_t kernel, int64_t h, int64_t w) {
    return 2.0 * static_cast<double>(in * out * kernel * kernel) * static_cast<double>(h * w);
}

int64_t strided(int64_t size, int64_t kernel, int64_t stride) { return (size + 2 * (kernel / 2) - kernel) / stride + 1; }

}  // namespace

// torchvision's BasicBlock (two 3x3 convolutions) or Bottleneck (1x1, 3x3, 1x1 with 4x
// expansion), with the projection shortcut `downsample` where the shape changes.
class ResidualBlockImpl final : public nn::Module, public Recomputable {
public:
    ResidualBlockImpl(bool bottleneck, int64_t in, int64_t planes, int64_t stride, bool inplace)
        : bottleneck_(bottleneck), inplace_(inplace) {
        const int64_t out = bottleneck ? planes * 4 : planes;
        if (bottleneck) {
            conv1_ = register_module("conv1", conv(in, planes, 1, 1));
            bn1_ = register_module("bn1", nn::BatchNorm2d(planes));
            conv2_ = register_module("conv2", conv(planes, planes, 3, stride));
            bn2_ = register_module("bn2", nn::BatchNorm2d(planes));
            conv3_ = register_module("conv3", conv(planes, out, 1, 1));
            bn3_ = register_module("bn3", nn::BatchNorm2d(out));
        } else {
            conv1_ = register_module("conv1", conv(in, planes, 3, stride));
            bn1_ = register_module("bn1", nn::BatchNorm2d(planes));
            conv2_ = register_module("conv2", conv(planes, planes, 3, 1));
            bn2_ = register_module("bn2", nn::BatchNorm2d(planes));
        }
        if (stride != 1 || in != out) {
            downsample_ = register_module("downsample", nn::Sequential(conv(in, out, 1, stride), nn::BatchNorm2d(out)));
        }
        out_channels_ = out;
    }

    torch::Tensor forward(const torch::Tensor& x) {
        torch::Tensor identity = downsample_ ? downsample_->forward(x) : x;
        torch::Tensor y = relu(bn1_(conv1_(x)));
        if (bottleneck_) {
            y = relu(bn2_(conv2_(y)));
            y = bn3_(conv3_(y));
        } else {
            y = bn2_(conv2_(y));
        }
        return relu(inplace_ ? y.add_(identity) : y + identity);
    }
    torch::Tensor recompute(const torch::Tensor& x, const torch::Tensor&) override { return forward(x); }
    std::vector<torch::Tensor> stateToRestore() override {
        std::vector<torch::Tensor> state;
        for (const auto& b : buffers()) state.push_back(b);
        return state;
    }
    int64_t outChannels() const { return out_channels_; }
    double flops(int64_t in, int64_t h, int64_t w, int64_t stride) const {
        const int64_t oh = strided(h, 3, stride), ow = strided(w, 3, stride);
        const int64_t planes = conv1_->options.out_channels();
        double f = 0.0;
        if (bottleneck_) {
            f += convFlops(in, planes, 1, h, w) + convFlops(planes, planes, 3, oh, ow) +
                 convFlops(planes, out_channels_, 1, oh, ow);
        } else {
            f += convFlops(in, planes, 3, oh, ow) + convFlops(planes, planes, 3, oh, ow);
        }
        if (downsample_) f += convFlops(in, out_channels_, 1, oh, ow);
        return f;
    }

private:
    torch::Tensor relu(torch::Tensor x) const { return inplace_ ? torch::relu_(x) : torch::relu(x); }
    bool bottleneck_, inplace_;
    int64_t out_channels_ = 0;
    nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, conv3_{nullptr};
    nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr}, bn3_{nullptr};
    nn::Sequential downsample_{nullptr};
};

ResNetImpl::ResNetImpl(int depth, const std::vector<int64_t>& sample_shape, int64_t num_classes, bool inplace_relu)
    : inplace_(inplace_relu) {
    const std::vector<int64_t> layers = resnetLayers(depth);
    const bool bottleneck = depth == 50;
    if (layers.empty())
        throw ConfigError("model.name", "ResNet depth " + std::to_string(depth) + " is not built in (18, 34, 50)");
    if (sample_shape.size() != 3)
        throw ConfigError("model.name", "a resnet needs images [C, H, W]; the data's samples have " +
                                            std::to_string(sample_shape.size()) + " dimension(s)");
    const int64_t channels = sample_shape[0];
    int64_t h = sample_shape[1], w = sample_shape[2];
    if (h < 32 || w < 32)
        throw ConfigError("model.name", "a resnet halves its input five times: images need at least 32x32 pixels, "
                                         "these are " + std::to_string(h) + "x" + std::to_string(w) +
                                         " (an image folder is resized to data.image_size; for smaller images use "
                                         "the cnn)");
    conv1_ = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(channels, 64, 7).stride(2).padding(3).bias(false)));
    bn1_ = register_module("bn1", nn::BatchNorm2d(64));
    h = strided(h, 7, 2), w = strided(w, 7, 2);
    flops_.stem.per_sample = convFlops(channels, 64, 7, h, w);
    h = (h + 2 - 3) / 2 + 1, w = (w + 2 - 3) / 2 + 1;   // max pool 3x3, stride 2, padding 1
    int64_t in = 64;
    const int64_t planes[4] = {64, 128, 256, 512};
    for (size_t stage = 0; stage < 4; ++stage) {
        nn::Sequential layer;
        for (int64_t i = 0; i < layers[stage]; ++i) {
            const int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
            auto block = std::make_shared<ResidualBlockImpl>(bottleneck, in, planes[stage], stride, inplace_relu);
            flops_.blocks.push_back({block->flops(in, h, w, stride)});
            h = strided(h, 3, stride), w = strided(w, 3, stride);
            in = block->outChannels();
            layer->push_back(block);
            blocks_.push_back(block);
        }
        register_module("layer" + std::to_string(stage + 1), layer);
    }
    fc_ = register_module("fc", nn::Linear(in, num_classes));
    flops_.head.per_sample = 2.0 * static_cast<double>(in * num_classes);
    // torchvision's initialisation (fc keeps nn.Linear's default).
    torch::NoGradGuard no_grad;
    for (auto& module : modules(/*include_self=*/false)) {
        if (auto* c = module->as<nn::Conv2d>()) nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
        if (auto* b = module->as<nn::BatchNorm2d>()) {
            nn::init::ones_(b->weight);
            nn::init::zeros_(b->bias);
        }
    }
}

std::vector<std::vector<torch::Tensor>> ResNetImpl::blockParameters() {
    std::vector<std::vector<torch::Tensor>> out;
    for (const auto& block : blocks_) out.push_back(block->parameters());
    return out;
}

std::vector<std::vector<torch::Tensor>> ResNetImpl::blockBuffers() {
    std::vector<std::vector<torch::Tensor>> out;
    for (const auto& block : blocks_) out.push_back(block->buffers());
    return out;
}

std::vector<torch::Tensor> ResNetImpl::stemParameters() {
    auto out = conv1_->parameters();
    for (const auto& p : bn1_->parameters()) out.push_back(p);
    return out;
}

std::vector<torch::Tensor> ResNetImpl::stemBuffers() { return bn1_->buffers(); }

torch::Tensor ResNetImpl::forward(torch::Tensor x) { return fc_(features(std::move(x))); }

torch::Tensor ResNetImpl::features(torch::Tensor x) {
    return pooled(runResidualBlocks(stem(std::move(x)), 0, blocks_.size(), blockHooks()));
}

torch::Tensor ResNetImpl::forwardStage(const Batch& batch, torch::Tensor x, size_t begin, size_t end, bool head) {
    x = runResidualBlocks(begin == 0 ? stem(batch.input()) : std::move(x), begin, end, nullptr);
    return head ? fc_(pooled(x)) : x;
}

torch::Tensor ResNetImpl::stem(torch::Tensor x) {
    x = bn1_(conv1_(x));
    x = inplace_ ? torch::relu_(x) : torch::relu(x);
    return torch::max_pool2d(x, 3, 2, 1);
}

torch::Tensor ResNetImpl::runResidualBlocks(torch::Tensor x, size_t begin, size_t end, BlockHooks* hooks) {
    const bool checkpoint = checkpointsNow();
    for (size_t i = begin; i < end && i < blocks_.size(); ++i) {
        auto& block = blocks_[i];
        x = runBlock(hooks, i, [&] { return checkpoint ? checkpointed(*block, x) : block->forward(x); });
    }
    return x;
}

torch::Tensor ResNetImpl::pooled(const torch::Tensor& x) { return torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1); }

void ResNetImpl::loadStateDict(const std::map<std::string, torch::Tensor>& tensors, const std::string& source) {
    std::map<std::string, torch::Tensor> mine;
    for (const auto& item : named_parameters()) mine[item.key()] = item.value();
    for (const auto& item : named_buffers()) mine[item.key()] = item.value();
    std::vector<std::string> missing, misshaped, unexpected;
    torch::NoGradGuard no_grad;
    for (auto& [name, target] : mine) {
        const auto it = tensors.find(name);
        if (it == tensors.end()) {
            missing.push_back(name + " " + shapeText(target.sizes()));
            continue;
        }
        torch::Tensor value = it->second;
        if (name.rfind("fc.", 0) == 0 && value.sizes() != target.sizes()) continue;   // a new head, below
        if (name == "conv1.weight" && value.dim() == 4 && target.dim() == 4 && value.size(1) == 3 &&
            target.size(1) == 1 && value.size(0) == target.size(0)) {
            value = value.sum(1, /*keepdim=*/true);
            addNote("conv1: the checkpoint's RGB filters summed over their channels for grey images");
        }
        if (value.sizes() != target.sizes()) {
            misshaped.push_back(name + ": checkpoint " + shapeText(value.sizes()) + ", model " + shapeText(target.sizes()));
            continue;
        }
        target.copy_(value.to(target.dtype()));
    }
    for (const auto& [name, value] : tensors)
        if (!mine.count(name)) unexpected.push_back(name + " " + shapeText(value.sizes()));
    if (!missing.empty() || !misshaped.empty() || !unexpected.empty()) {
        std::string text = source + ": not torchvision weights for this ResNet";
        if (!missing.empty()) text += "; missing:" + listed(missing);
        if (!misshaped.empty()) text += "\nof another shape:" + listed(misshaped);
        if (!unexpected.empty()) text += "\nnot in the model:" + listed(unexpected);
        throw DataError(text);
    }
    const auto fc = tensors.find("fc.weight");
    if (fc != tensors.end() && fc->second.size(0) != fc_->weight.size(0))
        addNote("fc: new for the data's " + std::to_string(fc_->weight.size(0)) + " classes (the checkpoint's has " +
                std::to_string(fc->second.size(0)) + ")");
}

std::shared_ptr<ClassifierImpl> makeResNet(const ModelConfig& config, const ModelInput& input) {
    const int depth = resnetDepth(config.name);
    auto model = std::make_shared<ResNetImpl>(depth, input.sample_shape, input.num_classes, config.inplace_activations);
    if (!config.pretrained) {
        model->addNote("new " + config.name + " (torchvision's initialisation)");
        return model;
    }
    const std::string& path = *config.pretrained;
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        throw DataError(path + ": " + (fs::exists(path, ec) ? "not a file" : "no such file") +
                        " (model.pretrained for a resnet: torchvision's .pth state_dict or a .safetensors file)");
    const bool safetensors = fs::path(path).extension() == ".safetensors";
    model->loadStateDict(safetensors ? readSafeTensors(path) : readStateDictFile(path), path);
    model->addNote("weights from " + path);
    return model;
}

}  // namespace hearth
