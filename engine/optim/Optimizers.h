#pragma once
// Optimizers by name (sgd, adam, adamw, adagrad) and kernel (optimizer.implementation) from
// OptimizerConfig, and the learning-rate accessors the schedulers and metrics use.

#include "engine/config/ExperimentConfig.h"

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace hearth {

// How an optimizer step runs. Fused: one ATen kernel per device and dtype for every parameter
// (_fused_adam_, _fused_adamw_, _fused_sgd_; LibTorch >= 2.4, CPU and CUDA), taking the loss
// scaler's scale and inf flag. Foreach: a few multi-tensor ops (_foreach_*) per step. PerParameter:
// LibTorch's torch::optim loop, about 8 kernels and 2 temporaries per tensor.
enum class OptimizerKernel { PerParameter, Foreach, Fused };

// "fused", "foreach", "per_parameter".
const char* optimizerKernelName(OptimizerKernel kernel);
// optimizer.implementation decided for this build: auto is the fastest it has (fused, else
// foreach; on CPU and CUDA alike); adagrad always steps per parameter. Throws
// ConfigError("optimizer.implementation") for fused where this LibTorch has no kernels.
OptimizerKernel resolveOptimizerKernel(const OptimizerConfig& config);
// The effective settings' line: "fused (_fused_adamw_: one kernel per step, loss-scale aware)".
std::string describeOptimizerKernel(const OptimizerConfig& config);

// An optimizer whose step does the GradScaler's unscale and skip itself, on the device (PyTorch's
// _step_supports_amp_scaling): the fused kernels. No host sync.
class ScalerAwareOptimizer {
public:
    virtual ~ScalerAwareOptimizer() = default;
    // Whether this optimizer's kernel takes the scaler (the fused ones; the foreach ones do not).
    virtual bool stepsScaled() const = 0;
    // One step with the gradients still multiplied by grad_scale (undefined: already unscaled);
    // where found_inf (float [1], 0 or 1) is 1 nothing changes, step counts included.
    virtual void stepScaled(const torch::Tensor& grad_scale, const torch::Tensor& found_inf) = 0;
    // From now on the kernel reads each group's learning rate from a float32 tensor on the device
    // (what a captured step needs: a replay reads the value of the moment). setLearningRate writes
    // it there too. False, changing nothing, where the kernel cannot (foreach).
    virtual bool keepLearningRateOnDevice() = 0;
    virtual void learningRateChanged() = 0;  // the groups' options changed: the device copies follow
};

// `optimizer` as a ScalerAwareOptimizer when its kernel takes the scaler, else null.
ScalerAwareOptimizer* scalerAware(torch::optim::Optimizer& optimizer);

// The optimizer over `parameters`, stepping with the kernel resolveOptimizerKernel picks. Every kernel is LibTorch's Adam, AdamW or SGD underneath (options, per-parameter
// state, save and load), so a state saved by one loads into another. Throws ConfigError for an
// unknown name.
std::unique_ptr<torch::optim::Optimizer> createOptimizer(const OptimizerConfig& config,
                                                         const std::vector<torch::Tensor>& parameters);
// keepLearningRateOnDevice for any optimizer: false unless its kernel is fused.
bool keepLearningRateOnDevice(torch::optim::Optimizer& optimizer);
double currentLearningRate(torch::optim::Optimizer& optimizer);
void setLearningRate(torch::optim::Optimizer& optimizer, double lr);
// Every per-parameter state tensor (Adam's and AdamW's moments, SGD's momentum, Adagrad's sums)
// onto its parameter's device. A loaded state sits where its archive was read to, and LibTorch's
// load, unlike PyTorch's load_state_dict, leaves it there: a state written on one device (an
// offloaded optimizer's host copies, a shard read on the host) must follow the parameters it
// steps before a kernel sees both. Call it after every Optimizer::load.
void moveStateToParameters(torch::optim::Optimizer& optimizer);

}  // namespace hearth
