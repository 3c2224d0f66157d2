#include "engine/optim/Optimizers.h"

#include "engine/TorchCompat.h"
#include "engine/optim/MultiTensorOptimizers.h"

namespace hearth {
namespace {

bool hasMultiTensorForm(const std::string& name) {
    return name == "adam" || name == "adamw" || name == "sgd";
}

const char* fusedKernelOp(const std::string& name) {
    if (name == "adamw") return "_fused_adamw_";
    if (name == "sgd") return "_fused_sgd_";
    return "_fused_adam_";
}

}  // namespace

const char* optimizerKernelName(OptimizerKernel kernel) {
    switch (kernel) {
        case OptimizerKernel::Fused: return "fused";
        case OptimizerKernel::Foreach: return "foreach";
        case OptimizerKernel::PerParameter: break;
    }
    return "per_parameter";
}

OptimizerKernel resolveOptimizerKernel(const OptimizerConfig& config) {
    if (!hasMultiTensorForm(config.name)) return OptimizerKernel::PerParameter;
    const std::string& want = config.implementation;
    if (want == "fused") {
        if (!compat::kFusedOptimizers)
            throw ConfigError("optimizer.implementation",
                              "this LibTorch has no fused optimizer kernels (they came in 2.4); use auto, foreach "
                              "or per_parameter");
        return OptimizerKernel::Fused;
    }
    if (want == "foreach") return OptimizerKernel::Foreach;
    if (want == "per_parameter") return OptimizerKernel::PerParameter;
    if (want != "auto")
        throw ConfigError("optimizer.implementation",
                          "unknown implementation '" + want + "'; use auto, fused, foreach or per_parameter");
    // Fused where the build has it; foreach otherwise: on CUDA a few launches for all parameters,
    // and on the CPU too it beats the loop (fewer temporaries: 1.06-2.3x on LibTorch 1.13,
    // docs/benchmarks/cpu.md, optimizer kernels).
    return compat::kFusedOptimizers ? OptimizerKernel::Fused : OptimizerKernel::Foreach;
}

std::string describeOptimizerKernel(const OptimizerConfig& config) {
    const OptimizerKernel kernel = resolveOptimizerKernel(config);
    std::string text = optimizerKernelName(kernel);
    switch (kernel) {
        case OptimizerKernel::Fused:
            text += std::string(" (") + fusedKernelOp(config.name) +
                    ": one kernel per step for all parameters; unscales and skips for the loss scaler on the device)";
            break;
        case OptimizerKernel::Foreach: text += " (multi-tensor _foreach_ ops: a few kernels per step)"; break;
        case OptimizerKernel::PerParameter:
            text += hasMultiTensorForm(config.name) ? " (torch::optim's loop over the parameters)"
                                                    : " (" + config.name + " has only torch::optim's loop)";
            break;
    }
    if (config.implementation == "auto") text += ", chosen by auto";
    return text;
}

namespace {

// LibTorch's own optimizer for the per-parameter loop, else its multi-tensor form.
template <class PerParameter, class Options, class MultiTensor>
std::unique_ptr<torch::optim::Optimizer> withKernel(const std::vector<torch::Tensor>& parameters,
                                                    const Options& options, OptimizerKernel kernel,
                                                    MultiTensor multi_tensor) {
    if (kernel == OptimizerKernel::PerParameter) return std::make_unique<PerParameter>(parameters, options);
    return multi_tensor(parameters, options, kernel);
}

// Adam's and AdamW's options from the config (two LibTorch types with the same setters).
template <class Options>
Options adamOptions(const OptimizerConfig& config) {
    Options options(config.lr);
    options.betas({config.beta1, config.beta2}).eps(config.eps).weight_decay(config.weight_decay).amsgrad(config.amsgrad);
    return options;
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> createOptimizer(const OptimizerConfig& config,
                                                         const std::vector<torch::Tensor>& parameters) {
    namespace optim = torch::optim;
    const OptimizerKernel kernel = resolveOptimizerKernel(config);
    if (config.name == "sgd") {
        return withKernel<optim::SGD>(parameters,
                                      optim::SGDOptions(config.lr)
                                          .momentum(config.momentum)
                                          .nesterov(config.nesterov)
                                          .weight_decay(config.weight_decay),
                                      kernel, multiTensorSgd);
    }
    if (config.name == "adam") {
        return withKernel<optim::Adam>(parameters, adamOptions<optim::AdamOptions>(config), kernel, multiTensorAdam);
    }
    if (config.name == "adamw") {
        return withKernel<optim::AdamW>(parameters, adamOptions<optim::AdamWOptions>(config), kernel,
                                        multiTensorAdamW);
    }
    if (config.name == "adagrad") {
        // Adagrad keeps its own eps default (1e-10, as in PyTorch); optimizer.eps is Adam's.
        return std::make_unique<optim::Adagrad>(parameters,
                                                optim::AdagradOptions(config.lr).weight_decay(config.weight_decay));
    }
    throw ConfigError("optimizer.name", "unknown optimizer '" + config.name + "'; use sgd, adam, adamw or adagrad");
}

ScalerAwareOptimizer* scalerAware(torch::optim::Optimizer& optimizer) {
    auto* aware = dynamic_cast<ScalerAwareOptimizer*>(&optimizer);
    return aware && aware->stepsScaled() ? aware : nullptr;
}

double currentLearningRate(torch::optim::Optimizer& optimizer) {
    return optimizer.param_groups().front().options().get_lr();
}

bool keepLearningRateOnDevice(torch::optim::Optimizer& optimizer) {
    ScalerAwareOptimizer* fused = scalerAware(optimizer);
    return fused && fused->keepLearningRateOnDevice();
}

void setLearningRate(torch::optim::Optimizer& optimizer, double lr) {
    for (auto& group : optimizer.param_groups()) {
        group.options().set_lr(lr);
    }
    if (ScalerAwareOptimizer* fused = scalerAware(optimizer)) fused->learningRateChanged();
}

void moveStateToParameters(torch::optim::Optimizer& optimizer) {
    namespace optim = torch::optim;
    auto& state = optimizer.state();
    for (auto& group : optimizer.param_groups()) {
        for (auto& p : group.params()) {
            const auto it = state.find(compat::optimizerStateKey(p));
            if (it == state.end()) continue;
            const torch::Device device = p.device();
            const auto follow = [&](const torch::Tensor& t) {
                return t.defined() && t.device() != device ? t.to(device) : t;
            };
            optim::OptimizerParamState& s = *it->second;
            if (auto* adam = dynamic_cast<optim::AdamParamState*>(&s)) {
                adam->exp_avg(follow(adam->exp_avg()));
                adam->exp_avg_sq(follow(adam->exp_avg_sq()));
                adam->max_exp_avg_sq(follow(adam->max_exp_avg_sq()));
            } else if (auto* adamw = dynamic_cast<optim::AdamWParamState*>(&s)) {
                adamw->exp_avg(follow(adamw->exp_avg()));
                adamw->exp_avg_sq(follow(adamw->exp_avg_sq()));
                adamw->max_exp_avg_sq(follow(adamw->max_exp_avg_sq()));
            } else if (auto* sgd = dynamic_cast<optim::SGDParamState*>(&s)) {
                sgd->momentum_buffer(follow(sgd->momentum_buffer()));
            } else if (auto* adagrad = dynamic_cast<optim::AdagradParamState*>(&s)) {
                adagrad->sum(follow(adagrad->sum()));
            }
        }
    }
}

}  // namespace hearth
