// GradScaler: the native fused AMP kernels where LibTorch has them (CUDA; CPU from 2.3) and an
// equivalent tensor-op path otherwise. Neither path reads values back to the host except step().

#include "engine/strategy/GradScaler.h"

#include "engine/TorchCompat.h"
#include "engine/optim/Optimizers.h"

#include <stdexcept>

namespace hearth {
namespace {

bool hasNativeKernels(const torch::Device& device) {
    return device.is_cuda() || (device.is_cpu() && compat::kCpuAmpKernels);
}

}  // namespace

GradScaler::GradScaler(GradScalerOptions options) : options_(options), initial_{options.init_scale, 0} {
    if (options_.init_scale <= 0.0 || options_.growth_factor <= 1.0 || options_.backoff_factor <= 0.0 ||
        options_.backoff_factor >= 1.0 || options_.growth_interval < 1) {
        throw std::invalid_argument(
            "GradScaler: need init_scale > 0, growth_factor > 1, 0 < backoff_factor < 1, "
            "growth_interval >= 1");
    }
}

void GradScaler::lazyInit(const torch::Device& device) {
    if (scale_.defined()) {
        return;
    }
    const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
    scale_ = torch::full({1}, initial_.scale, f32);
    growth_tracker_ = torch::full({1}, initial_.growth_tracker, f32.dtype(torch::kInt32));
    found_inf_ = torch::zeros({1}, f32);
    one_ = torch::ones({1}, f32);
    skipped_ = torch::zeros({1}, f32);
}

torch::Tensor GradScaler::scale(const torch::Tensor& loss) {
    lazyInit(loss.device());
    return loss * scale_.to(loss.dtype());
}

std::vector<torch::Tensor> GradScaler::gradientsOf(torch::optim::Optimizer& optimizer) {
    std::vector<torch::Tensor> grads;
    for (auto& group : optimizer.param_groups()) {
        for (auto& p : group.params()) {
            if (p.grad().defined()) {
                if (p.grad().scalar_type() == torch::kHalf) {
                    throw std::logic_error("GradScaler: float16 gradients; keep float32 master weights");
                }
                grads.push_back(p.grad());
            }
        }
    }
    if (!scale_.defined()) {
        // Nothing was scaled this step (e.g. no loss); still track on the gradients' device.
        lazyInit(grads.empty() ? torch::Device(torch::kCPU) : grads.front().device());
    }
    return grads;
}

void GradScaler::unscale_(torch::optim::Optimizer& optimizer, const SumAcrossRanks& sum_across_ranks) {
    if (stage_ == Stage::Unscaled) {
        throw std::logic_error("GradScaler::unscale_ called twice in one step");
    }
    if (stage_ == Stage::Stepped) {
        throw std::logic_error("GradScaler::unscale_ called after step(); call update() first");
    }
    auto grads = gradientsOf(optimizer);
    // Like Python: reciprocal in double for accuracy, then float32.
    findInf(grads, scale_.to(torch::kFloat64).reciprocal().to(torch::kFloat32), sum_across_ranks);
    stage_ = Stage::Unscaled;
}

void GradScaler::findInf(std::vector<torch::Tensor>& grads, const torch::Tensor& inv_scale,
                         const SumAcrossRanks& sum_across_ranks) {
    found_inf_.zero_();
    if (!grads.empty()) {
        if (hasNativeKernels(scale_.device())) {
            at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv_scale);
        } else {
            for (auto& g : grads) {
                const auto bad = torch::logical_not(torch::isfinite(g)).any().to(torch::kFloat32).reshape({1});
                found_inf_ = torch::maximum(found_inf_, bad);
                g.mul_(inv_scale);
            }
        }
    }
    if (sum_across_ranks) {
        sum_across_ranks(found_inf_);
        // Summed over ranks it counts them; the fused kernels skip on exactly 1.
        found_inf_.clamp_max_(1.0);
    }
}

void GradScaler::step(torch::optim::Optimizer& optimizer, const SumAcrossRanks& sum_across_ranks) {
    if (stage_ == Stage::Stepped) {
        throw std::logic_error("GradScaler::step called twice; call update() after each step");
    }
    if (ScalerAwareOptimizer* fused = scalerAware(optimizer)) {
        torch::Tensor grad_scale;
        if (stage_ == Stage::Ready) {
            // Check only (PyTorch's _check_inf_per_device); the kernel divides by the scale itself.
            auto grads = gradientsOf(optimizer);
            findInf(grads, one_, sum_across_ranks);
            grad_scale = scale_;
        }
        fused->stepScaled(grad_scale, found_inf_);
    } else {
        if (stage_ == Stage::Ready) {
            unscale_(optimizer, sum_across_ranks);
        }
        if (found_inf_.item<float>() == 0.0f) optimizer.step();
    }
    skipped_.add_(found_inf_);
    stage_ = Stage::Stepped;
}

int64_t GradScaler::takeSkippedSteps() {
    if (!skipped_.defined()) return 0;
    const auto n = static_cast<int64_t>(skipped_.item<double>());
    skipped_.zero_();
    return n;
}

void GradScaler::update() {
    if (!scale_.defined()) {
        return;
    }
    updateOnDevice();
    found_inf_.zero_();
    stage_ = Stage::Ready;
}

void GradScaler::updateOnDevice() {
    if (hasNativeKernels(scale_.device())) {
        at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth_factor, options_.backoff_factor,
                               options_.growth_interval);
        return;
    }
    // The kernel's rule as tensor ops: inf -> scale *= backoff, tracker = 0; otherwise count the
    // good step and, at growth_interval, grow the scale (if the result is finite) and reset.
    const auto found = found_inf_.gt(0);
    const auto successful = growth_tracker_ + 1;
    const auto interval_done = torch::logical_and(successful.ge(options_.growth_interval), torch::logical_not(found));
    const auto grown = scale_ * options_.growth_factor;
    const auto grow = torch::logical_and(interval_done, torch::isfinite(grown));
    auto new_scale = torch::where(found, scale_ * options_.backoff_factor, torch::where(grow, grown, scale_));
    auto new_tracker = torch::where(torch::logical_or(found, interval_done), torch::zeros_like(successful), successful);
    scale_.copy_(new_scale);
    growth_tracker_.copy_(new_tracker);
}

double GradScaler::currentScale() const {
    return scale_.defined() ? scale_.item<double>() : initial_.scale;
}

int64_t GradScaler::growthTracker() const {
    return growth_tracker_.defined() ? growth_tracker_.item<int64_t>() : initial_.growth_tracker;
}

void GradScaler::loadState(const GradScalerState& state) {
    initial_ = state;
    if (scale_.defined()) {
        scale_.fill_(state.scale);
        growth_tracker_.fill_(state.growth_tracker);
    }
}

}  // namespace hearth
