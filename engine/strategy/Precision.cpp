#include "engine/strategy/Precision.h"

#include "engine/TorchCompat.h"

#include <cmath>

namespace hearth {

Precision::Precision(const std::string& name, torch::Device device, GradScalerOptions scaler_options)
    : name_(name), device_(device) {
    if (name == "32-true") {
        return;
    }
    if (name == "bf16-mixed") {
        autocast_dtype_ = torch::kBFloat16;
        return;
    }
    if (name == "16-mixed") {
        if (device.is_cpu() && !compat::kCpuFp16Autocast) {
            throw ConfigError("trainer.precision",
                              "16-mixed needs a CUDA device or LibTorch >= 2.4 (CPU float16 "
                              "autocast); use bf16-mixed on this CPU");
        }
        autocast_dtype_ = torch::kHalf;
        scaler_ = std::make_unique<GradScaler>(scaler_options);
        return;
    }
    throw ConfigError("trainer.precision", "unknown precision '" + name + "'; use 32-true, 16-mixed or bf16-mixed");
}

torch::Tensor Precision::forward(ClassifierImpl& model, const torch::Tensor& inputs) const {
    Batch batch;
    batch.set(Batch::kInput, inputs);
    return forward(model, batch);
}

torch::Tensor Precision::forward(ClassifierImpl& model, const Batch& batch) const {
    if (!autocast_dtype_) {
        return model.forwardBatch(batch);
    }
    torch::Tensor logits;
    {
        compat::AutocastGuard guard(device_.type(), *autocast_dtype_);
        logits = model.forwardBatch(batch);
    }
    // 1.13's CPU autocast leaves softmax/log_softmax in bf16, so the loss would be computed in
    // bf16: upcast the logits outside the guard.
    return logits.to(torch::kFloat32);
}

void Precision::backward(const torch::Tensor& loss) {
    if (scaler_) {
        scaler_->scale(loss).backward();
    } else {
        loss.backward();
    }
}

namespace {

std::vector<torch::Tensor> gradientsOf(torch::optim::Optimizer& optimizer) {
    std::vector<torch::Tensor> grads;
    for (auto& group : optimizer.param_groups()) {
        for (auto& p : group.params()) {
            if (p.grad().defined()) {
                grads.push_back(p.grad());
            }
        }
    }
    return grads;
}

// clip_grad_norm_ (L2) over gradients split across ranks: the squared norms of every shard are
// summed, then each rank scales its own gradients by max_norm / (norm + 1e-6) when below 1.
void clipShardedGradNorm(const std::vector<torch::Tensor>& grads, double max_norm,
                         const SumAcrossRanks& sum_across_ranks) {
    torch::NoGradGuard no_grad;
    torch::Tensor squared = torch::zeros({1}, torch::kFloat64);
    for (const auto& g : grads) {
        squared += g.detach().to(torch::kFloat64).pow(2).sum().to(torch::kCPU);
    }
    sum_across_ranks(squared);
    const double norm = std::sqrt(squared.item<double>());
    const double coefficient = max_norm / (norm + 1e-6);
    if (coefficient < 1.0) {
        for (const auto& g : grads) {
            g.mul_(coefficient);
        }
    }
}

// clip_grad_norm_ (L2) as LibTorch's, op for op, without its closing read of the norm to the host:
// the coefficient stays on the device (no sync; a captured step can clip).
void clipGradNorm(const std::vector<torch::Tensor>& grads, double max_norm) {
    if (grads.empty()) return;
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> norms;
    norms.reserve(grads.size());
    for (const auto& g : grads) norms.push_back(g.norm(2));
    const torch::Tensor total = norms.size() == 1 ? norms.front() : torch::stack(norms).norm(2);
    const torch::Tensor coefficient = (max_norm / (total + 1e-6)).clamp_max(1.0);
    for (const auto& g : grads) g.mul_(coefficient);
}

}  // namespace

void Precision::optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val,
                              const SumAcrossRanks& sum_across_ranks) {
    if (scaler_ && clip_val) {
        // Unscale once so clipping sees true gradient norms (without clipping, a fused optimizer
        // unscales inside its kernel).
        scaler_->unscale_(optimizer, sum_across_ranks);
    }
    if (clip_val) {
        if (sum_across_ranks) {
            clipShardedGradNorm(gradientsOf(optimizer), *clip_val, sum_across_ranks);
        } else {
            clipGradNorm(gradientsOf(optimizer), *clip_val);
        }
    }
    if (!scaler_) {
        optimizer.step();
        return;
    }
    scaler_->step(optimizer, sum_across_ranks);
    scaler_->update();
}

double Precision::lossScale() const {
    return scaler_ ? scaler_->currentScale() : 0.0;
}

std::string Precision::describe() const {
    const std::string where = device_.is_cuda() ? "CUDA" : "CPU";
    if (name_ == "bf16-mixed") {
        return "bf16-mixed (" + where + " autocast to bfloat16, float32 weights and loss)";
    }
    if (name_ == "16-mixed") {
        return "16-mixed (" + where + " autocast to float16, GradScaler init " +
               std::to_string(static_cast<int64_t>(scaler_->options().init_scale)) + ", growth every " +
               std::to_string(scaler_->options().growth_interval) + " steps)";
    }
    return "32-true (float32)";
}

}  // namespace hearth
