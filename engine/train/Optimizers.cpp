#include "engine/train/Optimizers.h"

namespace hearth {

std::unique_ptr<torch::optim::Optimizer> createOptimizer(const OptimizerConfig& config,
                                                         const std::vector<torch::Tensor>& parameters) {
    namespace optim = torch::optim;
    if (config.name == "sgd") {
        return std::make_unique<optim::SGD>(
            parameters, optim::SGDOptions(config.lr).momentum(config.momentum).weight_decay(config.weight_decay));
    }
    if (config.name == "adam") {
        return std::make_unique<optim::Adam>(parameters, optim::AdamOptions(config.lr)
                                                             .betas({config.beta1, config.beta2})
                                                             .eps(config.eps)
                                                             .weight_decay(config.weight_decay));
    }
    if (config.name == "adamw") {
        return std::make_unique<optim::AdamW>(parameters, optim::AdamWOptions(config.lr)
                                                              .betas({config.beta1, config.beta2})
                                                              .eps(config.eps)
                                                              .weight_decay(config.weight_decay));
    }
    if (config.name == "adagrad") {
        // Adagrad keeps its own eps default (1e-10, as in PyTorch); optimizer.eps is Adam's.
        return std::make_unique<optim::Adagrad>(parameters,
                                                optim::AdagradOptions(config.lr).weight_decay(config.weight_decay));
    }
    throw ConfigError("optimizer.name", "unknown optimizer '" + config.name + "'; use sgd, adam, adamw or adagrad");
}

double currentLearningRate(torch::optim::Optimizer& optimizer) {
    return optimizer.param_groups().front().options().get_lr();
}

void setLearningRate(torch::optim::Optimizer& optimizer, double lr) {
    for (auto& group : optimizer.param_groups()) {
        group.options().set_lr(lr);
    }
}

}  // namespace hearth
