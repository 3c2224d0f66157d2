#pragma once
// Models by name: registry name -> factory(options, input shape, class count).

#include "engine/config/ExperimentConfig.h"

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace hearth {

// Every model maps a float batch [B, ...sampleShape] to logits [B, num_classes].
class ClassifierImpl : public torch::nn::Module {
public:
    virtual torch::Tensor forward(torch::Tensor x) = 0;
    virtual bool isConvolutional() const { return false; }
};

struct ModelInput {
    std::vector<int64_t> sample_shape;   // e.g. {1, 28, 28} or {num_features}
    int64_t num_classes = 0;
};

using ModelFactory = std::function<std::shared_ptr<ClassifierImpl>(const ModelConfig&, const ModelInput&)>;

std::vector<std::string> modelNames();
// Throws ConfigError("model.name", ...) for an unknown name or options the model cannot use.
std::shared_ptr<ClassifierImpl> createModel(const ModelConfig& config, const ModelInput& input);

int64_t parameterCount(const torch::nn::Module& model);
// One line per leaf layer: "conv1  Conv2d(1, 32, kernel_size=[3, 3])  320 params".
std::vector<std::string> modelSummary(const torch::nn::Module& model);

}  // namespace hearth
