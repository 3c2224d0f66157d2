// Adam, AdamW and SGD over multi-tensor kernels. The foreach steps follow PyTorch's
// _multi_tensor_adam/_multi_tensor_sgd (non-capturable) op for op, which is also LibTorch's
// per-parameter arithmetic, so they agree with torch::optim to rounding. The fused steps hand
// everything, loss-scale unscaling and the skipped step included, to one ATen kernel per
// device and dtype, as PyTorch's fused=True does.

#include "engine/optim/MultiTensorOptimizers.h"

#include "engine/TorchCompat.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <unordered_map>
#include <utility>

namespace hearth {
namespace {

using torch::Tensor;
using OptTensor = std::optional<Tensor>;

// The parameters of one param group that have gradients, split by device and dtype (a fused
// kernel takes one of each).
template <class Item>
std::vector<std::vector<Item>> byDeviceAndDtype(std::vector<Item> items) {
    std::vector<std::vector<Item>> buckets;
    for (auto& item : items) {
        const Tensor& p = item.param;
        auto same = [&](const std::vector<Item>& b) {
            return b.front().param.device() == p.device() && b.front().param.scalar_type() == p.scalar_type();
        };
        auto it = std::find_if(buckets.begin(), buckets.end(), same);
        if (it == buckets.end()) {
            buckets.emplace_back();
            it = std::prev(buckets.end());
        }
        it->push_back(std::move(item));
    }
    return buckets;
}

template <class Item, class Get>
std::vector<Tensor> column(const std::vector<Item>& items, Get get) {
    std::vector<Tensor> out;
    out.reserve(items.size());
    for (const auto& item : items) out.push_back(get(item));
    return out;
}

Tensor runClosure(const torch::optim::Optimizer::LossClosure& closure) {
    if (!closure) return {};
    torch::AutoGradMode enable_grad(true);
    return closure();
}

void checkDense(const Tensor& grad, const char* who) {
    TORCH_CHECK(!grad.is_sparse(), who, " does not support sparse gradients");
}

// ---------------------------------------------------------------------------------------------
// What every multi-tensor optimizer shares: LibTorch's optimizer `Base` (its options, groups,
// state and save/load), a kernel, and step() / stepScaled() over the subclass's run().

template <class Base>
class MultiTensorStep : public Base, public ScalerAwareOptimizer {
public:
    template <class Options>
    MultiTensorStep(const std::vector<Tensor>& params, const Options& options, OptimizerKernel kernel)
        : Base(params, options), kernel_(kernel) {}

    Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) final {
        Tensor loss = runClosure(closure);
        run({}, {});
        return loss;
    }

    bool stepsScaled() const final { return kernel_ == OptimizerKernel::Fused; }

    bool keepLearningRateOnDevice() final {
        if (kernel_ != OptimizerKernel::Fused) return false;
        device_lr_.clear();
        for (auto& group : this->param_groups()) {
            const auto& params = group.params();
            const torch::Device device = params.empty() ? torch::Device(torch::kCPU) : params.front().device();
            device_lr_.push_back(torch::full({}, group.options().get_lr(),
                                             torch::TensorOptions().dtype(torch::kFloat32).device(device)));
        }
        return true;
    }

    // fill_ from a host number: a kernel launch, no sync (never inside a capture: the schedule sets
    // the rate between steps).
    void learningRateChanged() final {
        auto& groups = this->param_groups();
        for (size_t g = 0; g < device_lr_.size() && g < groups.size(); ++g)
            device_lr_[g].fill_(groups[g].options().get_lr());
    }

    void stepScaled(const Tensor& grad_scale, const Tensor& found_inf) final {
        TORCH_CHECK(kernel_ == OptimizerKernel::Fused, "stepScaled needs the fused kernel");
        run(grad_scale.defined() ? OptTensor(grad_scale) : std::nullopt, found_inf);
    }

protected:
    // One step over every parameter with a gradient: grad_scale and found_inf only for Fused.
    virtual void run(const OptTensor& grad_scale, const OptTensor& found_inf) = 0;

    // Group g's learning rate on the device, when kept there (fused only); else none.
    OptTensor deviceLr(size_t g) const { return g < device_lr_.size() ? OptTensor(device_lr_[g]) : std::nullopt; }

    const OptimizerKernel kernel_;
    std::vector<Tensor> device_lr_;  // float32 scalars, one per param group (keepLearningRateOnDevice)
};

// ---------------------------------------------------------------------------------------------
// Adam and AdamW: Base is torch::optim::Adam or AdamW, State its param state.

template <class Base, class Options, class State, bool kDecoupled>
class MultiTensorAdamT final : public MultiTensorStep<Base> {
public:
    MultiTensorAdamT(const std::vector<Tensor>& params, const Options& options, OptimizerKernel kernel)
        : MultiTensorStep<Base>(params, options, kernel) {}

    // The fused kernels count steps on the device (a skipped step is taken back there); the saved
    // state carries them as LibTorch's integer step, so any kernel can load it.
    void save(torch::serialize::OutputArchive& archive) const override {
        for (const auto& [impl, count] : device_steps_) {
            auto it = this->state_.find(compat::optimizerStateKey(impl));
            if (it != this->state_.end())
                static_cast<State&>(*it->second).step(static_cast<int64_t>(count.template item<double>()));
        }
        Base::save(archive);
    }

    void load(torch::serialize::InputArchive& archive) override {
        Base::load(archive);
        device_steps_.clear();  // rebuilt from the loaded integer steps
    }

private:
    struct Item {
        Tensor param, grad;
        State* state;
    };

    State& stateOf(const Tensor& p, const Options& o) {
        const auto key = compat::optimizerStateKey(p);
        auto it = this->state_.find(key);
        if (it == this->state_.end()) {
            auto s = std::make_unique<State>();
            s->step(0);
            s->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
            s->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
            if (o.amsgrad()) s->max_exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
            it = this->state_.emplace(key, std::move(s)).first;
        }
        return static_cast<State&>(*it->second);
    }

    void run(const OptTensor& grad_scale, const OptTensor& found_inf) override {
        torch::NoGradGuard no_grad;
        auto& groups = this->param_groups();
        for (size_t g = 0; g < groups.size(); ++g) {
            auto& group = groups[g];
            auto& o = static_cast<Options&>(group.options());
            std::vector<Item> items;
            for (const auto& p : group.params()) {
                if (!p.grad().defined()) continue;
                checkDense(p.grad(), "Adam");
                items.push_back({p, p.grad(), &stateOf(p, o)});
            }
            for (auto& bucket : byDeviceAndDtype(std::move(items))) {
                if (this->kernel_ == OptimizerKernel::Fused) {
                    fused(bucket, o, this->deviceLr(g), grad_scale, found_inf);
                } else {
                    foreach(bucket, o);
                }
            }
        }
    }

    void fused(const std::vector<Item>& items, const Options& o, const OptTensor& lr, const OptTensor& grad_scale,
               const OptTensor& found_inf) {
#if HEARTH_TORCH_VERSION >= 204
        const auto params = column(items, [](const Item& i) { return i.param; });
        const auto grads = column(items, [](const Item& i) { return i.grad; });
        const auto exp_avgs = column(items, [](const Item& i) { return i.state->exp_avg(); });
        const auto exp_avg_sqs = column(items, [](const Item& i) { return i.state->exp_avg_sq(); });
        const auto max_sqs = o.amsgrad() ? column(items, [](const Item& i) { return i.state->max_exp_avg_sq(); })
                                         : std::vector<Tensor>{};
        std::vector<Tensor> steps;
        steps.reserve(items.size());
        for (const auto& i : items) {
            auto [it, fresh] = device_steps_.try_emplace(i.param.unsafeGetTensorImpl());
            if (fresh) {
                it->second = torch::full({}, static_cast<double>(i.state->step()),
                                         torch::TensorOptions().dtype(torch::kFloat32).device(i.param.device()));
            }
            steps.push_back(it->second);
        }
        at::_foreach_add_(steps, 1);
        const auto [beta1, beta2] = o.betas();
        // The same kernel either way; a device learning rate is read at each launch (or replay).
        auto step = [&](const auto& rate) {
            if constexpr (kDecoupled) {
                at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, rate, beta1, beta2,
                                  o.weight_decay(), o.eps(), o.amsgrad(), /*maximize=*/false, grad_scale, found_inf);
            } else {
                at::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, rate, beta1, beta2,
                                 o.weight_decay(), o.eps(), o.amsgrad(), /*maximize=*/false, grad_scale, found_inf);
            }
        };
        if (lr) {
            step(*lr);
        } else {
            step(o.lr());
        }
        if (found_inf) {
            // A skipped step does not count (as PyTorch's _fused_adam).
            const Tensor taken_back = found_inf->reshape({});
            at::_foreach_sub_(steps, std::vector<Tensor>(steps.size(), taken_back));
        }
#else
        (void)items;
        (void)o;
        (void)lr;
        (void)grad_scale;
        (void)found_inf;
        TORCH_CHECK(false, "this LibTorch has no fused Adam kernel");
#endif
    }

    void foreach(const std::vector<Item>& items, const Options& o) {
        const auto params = column(items, [](const Item& i) { return i.param; });
        auto grads = column(items, [](const Item& i) { return i.grad; });
        const auto exp_avgs = column(items, [](const Item& i) { return i.state->exp_avg(); });
        const auto exp_avg_sqs = column(items, [](const Item& i) { return i.state->exp_avg_sq(); });
        const auto [beta1, beta2] = o.betas();
        std::vector<c10::Scalar> bias2_sqrt, neg_step_size;
        for (const auto& i : items) {
            i.state->step(i.state->step() + 1);
            const auto t = static_cast<double>(i.state->step());
            bias2_sqrt.emplace_back(std::sqrt(1.0 - std::pow(beta2, t)));
            neg_step_size.emplace_back(-o.lr() / (1.0 - std::pow(beta1, t)));
        }
        if (o.weight_decay() != 0.0) {
            if constexpr (kDecoupled) {
                at::_foreach_mul_(params, 1.0 - o.lr() * o.weight_decay());
            } else {
                grads = at::_foreach_add(grads, params, o.weight_decay());
            }
        }
        at::_foreach_mul_(exp_avgs, beta1);
        at::_foreach_add_(exp_avgs, grads, 1.0 - beta1);
        at::_foreach_mul_(exp_avg_sqs, beta2);
        at::_foreach_addcmul_(exp_avg_sqs, grads, grads, 1.0 - beta2);
        std::vector<Tensor> denoms;
        if (o.amsgrad()) {
            const auto max_sqs = column(items, [](const Item& i) { return i.state->max_exp_avg_sq(); });
            at::_foreach_maximum_(max_sqs, exp_avg_sqs);
            denoms = at::_foreach_sqrt(max_sqs);
        } else {
            denoms = at::_foreach_sqrt(exp_avg_sqs);
        }
        at::_foreach_div_(denoms, bias2_sqrt);
        at::_foreach_add_(denoms, o.eps());
        at::_foreach_addcdiv_(params, exp_avgs, denoms, neg_step_size);
    }

    // Fused: each parameter's step count as a float32 scalar on its device (the kernels read it there).
    std::unordered_map<const c10::TensorImpl*, Tensor> device_steps_;
};

using MultiTensorAdam =
    MultiTensorAdamT<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState, false>;
using MultiTensorAdamW =
    MultiTensorAdamT<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState, true>;

// ---------------------------------------------------------------------------------------------
// SGD with momentum, dampening 0, Nesterov and weight decay.

class MultiTensorSgd final : public MultiTensorStep<torch::optim::SGD> {
public:
    MultiTensorSgd(const std::vector<Tensor>& params, const torch::optim::SGDOptions& options, OptimizerKernel kernel)
        : MultiTensorStep(params, options, kernel) {}

private:
    struct Item {
        Tensor param, grad;
        torch::optim::SGDParamState* state;  // null until the parameter has a momentum buffer
    };

    torch::optim::SGDParamState* stateOf(const Tensor& p) {
        auto it = state_.find(compat::optimizerStateKey(p));
        return it == state_.end() ? nullptr : &static_cast<torch::optim::SGDParamState&>(*it->second);
    }

    torch::optim::SGDParamState& newState(const Tensor& p, Tensor buffer) {
        auto s = std::make_unique<torch::optim::SGDParamState>();
        s->momentum_buffer(std::move(buffer));
        auto& ref = *s;
        state_[compat::optimizerStateKey(p)] = std::move(s);
        return ref;
    }

    void run(const OptTensor& grad_scale, const OptTensor& found_inf) override {
        torch::NoGradGuard no_grad;
        auto& groups = param_groups();
        for (size_t g = 0; g < groups.size(); ++g) {
            auto& group = groups[g];
            auto& o = static_cast<torch::optim::SGDOptions&>(group.options());
            TORCH_CHECK(o.dampening() == 0.0, "the multi-tensor SGD takes no dampening");
            std::vector<Item> items;
            for (const auto& p : group.params()) {
                if (!p.grad().defined()) continue;
                checkDense(p.grad(), "SGD");
                items.push_back({p, p.grad(), stateOf(p)});
            }
            for (auto& bucket : byDeviceAndDtype(std::move(items))) {
                if (kernel_ == OptimizerKernel::Fused) {
                    fused(bucket, o, deviceLr(g), grad_scale, found_inf);
                } else {
                    foreach(bucket, o);
                }
            }
        }
    }

    void fused(std::vector<Item>& items, const torch::optim::SGDOptions& o, const OptTensor& lr,
               const OptTensor& grad_scale, const OptTensor& found_inf) {
#if HEARTH_TORCH_VERSION >= 204
        const auto params = column(items, [](const Item& i) { return i.param; });
        const auto grads = column(items, [](const Item& i) { return i.grad; });
        std::vector<Tensor> buffers;
        bool first_step = true;
        if (o.momentum() != 0.0) {
            for (auto& i : items) {
                if (i.state) {
                    first_step = false;
                } else {
                    // Zeros, not empty: a first step skipped for the loss scaler leaves a zero buffer,
                    // and the next step's momentum * 0 + grad is the first step's buffer.
                    i.state = &newState(i.param, torch::zeros_like(i.param, torch::MemoryFormat::Preserve));
                }
                buffers.push_back(i.state->momentum_buffer());
            }
        }
        const bool is_first_step = first_step && !buffers.empty();
        if (lr) {
            at::_fused_sgd_(params, grads, buffers, o.weight_decay(), o.momentum(), *lr, o.dampening(), o.nesterov(),
                            /*maximize=*/false, is_first_step, grad_scale, found_inf);
        } else {
            at::_fused_sgd_(params, grads, buffers, o.weight_decay(), o.momentum(), o.lr(), o.dampening(),
                            o.nesterov(), /*maximize=*/false, is_first_step, grad_scale, found_inf);
        }
#else
        (void)items;
        (void)o;
        (void)lr;
        (void)grad_scale;
        (void)found_inf;
        TORCH_CHECK(false, "this LibTorch has no fused SGD kernel");
#endif
    }

    void foreach(std::vector<Item>& items, const torch::optim::SGDOptions& o) {
        const auto params = column(items, [](const Item& i) { return i.param; });
        auto grads = column(items, [](const Item& i) { return i.grad; });
        if (o.weight_decay() != 0.0) grads = at::_foreach_add(grads, params, o.weight_decay());
        if (o.momentum() != 0.0) {
            std::vector<Tensor> old_buffers, old_grads, buffers;
            for (size_t k = 0; k < items.size(); ++k) {
                if (items[k].state) {
                    old_buffers.push_back(items[k].state->momentum_buffer());
                    old_grads.push_back(grads[k]);
                } else {
                    items[k].state = &newState(items[k].param, torch::clone(grads[k]).detach());
                }
                buffers.push_back(items[k].state->momentum_buffer());
            }
            if (!old_buffers.empty()) {
                at::_foreach_mul_(old_buffers, o.momentum());
                at::_foreach_add_(old_buffers, old_grads, 1.0 - o.dampening());
            }
            grads = o.nesterov() ? at::_foreach_add(grads, buffers, o.momentum()) : buffers;
        }
        at::_foreach_add_(params, grads, -o.lr());
    }
};

}  // namespace

std::unique_ptr<torch::optim::Optimizer> multiTensorAdam(const std::vector<Tensor>& parameters,
                                                         const torch::optim::AdamOptions& options,
                                                         OptimizerKernel kernel) {
    return std::make_unique<MultiTensorAdam>(parameters, options, kernel);
}

std::unique_ptr<torch::optim::Optimizer> multiTensorAdamW(const std::vector<Tensor>& parameters,
                                                          const torch::optim::AdamWOptions& options,
                                                          OptimizerKernel kernel) {
    return std::make_unique<MultiTensorAdamW>(parameters, options, kernel);
}

std::unique_ptr<torch::optim::Optimizer> multiTensorSgd(const std::vector<Tensor>& parameters,
                                                        const torch::optim::SGDOptions& options,
                                                        OptimizerKernel kernel) {
    return std::make_unique<MultiTensorSgd>(parameters, options, kernel);
}

}  // namespace hearth
