#include "engine/strategy/Precision.h"

#include "engine/TorchCompat.h"

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

bool Precision::optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) {
    if (scaler_) {
        // Unscale once so clipping sees true gradient norms.
        scaler_->unscale_(optimizer);
    }
    if (clip_val) {
        std::vector<torch::Tensor> params;
        for (auto& group : optimizer.param_groups()) {
            for (auto& p : group.params()) {
                if (p.grad().defined()) {
                    params.push_back(p);
                }
            }
        }
        torch::nn::utils::clip_grad_norm_(params, *clip_val);
    }
    if (!scaler_) {
        optimizer.step();
        return true;
    }
    const bool stepped = scaler_->step(optimizer);
    scaler_->update();
    return stepped;
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
