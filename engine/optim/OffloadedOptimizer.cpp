#include "engine/optim/OffloadedOptimizer.h"

#include "engine/monitor/Elapsed.h"
#include "engine/optim/Optimizers.h"

#include <chrono>
#include <stdexcept>

namespace hearth {
namespace {

std::vector<torch::Tensor> hostCopies(const std::vector<torch::Tensor>& device_tensors, bool pinned) {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> host;
    host.reserve(device_tensors.size());
    for (const auto& d : device_tensors) {
        auto h = torch::empty(d.sizes(), d.options().device(torch::kCPU));
        if (pinned) h = h.pin_memory();
        h.copy_(d.detach());
        host.push_back(h.set_requires_grad(true));
    }
    return host;
}

// The wrapper's one group: the device tensors, with the inner group's options.
std::vector<torch::optim::OptimizerParamGroup> deviceGroups(torch::optim::Optimizer& inner,
                                                           const std::vector<torch::Tensor>& device_tensors) {
    if (inner.param_groups().size() != 1) throw std::logic_error("OffloadedOptimizer: one param group expected");
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(device_tensors, inner.param_groups().front().options().clone());
    return groups;
}

}  // namespace

std::unique_ptr<OffloadedOptimizer> OffloadedOptimizer::create(const OptimizerConfig& config,
                                                               std::vector<torch::Tensor> device_tensors) {
    bool pinned = false;
    for (const auto& t : device_tensors) pinned = pinned || t.is_cuda();
    auto host = hostCopies(device_tensors, pinned);
    auto inner = createOptimizer(config, host);
    return std::unique_ptr<OffloadedOptimizer>(
        new OffloadedOptimizer(std::move(device_tensors), std::move(host), std::move(inner), pinned));
}

OffloadedOptimizer::OffloadedOptimizer(std::vector<torch::Tensor> device_tensors, std::vector<torch::Tensor> host,
                                       std::unique_ptr<torch::optim::Optimizer> inner, bool pinned)
    : torch::optim::Optimizer(deviceGroups(*inner, device_tensors), inner->param_groups().front().options().clone()),
      copies_(std::make_shared<Copies>(Copies{std::move(device_tensors), std::move(host)})), inner_(std::move(inner)),
      pinned_(pinned) {
    host_grads_.reserve(copies_->host.size());
    for (const auto& h : copies_->host) {
        auto g = torch::empty(h.sizes(), h.options());
        host_grads_.push_back(pinned_ ? g.pin_memory() : g);
    }
}

torch::Tensor OffloadedOptimizer::step(LossClosure closure) {
    torch::Tensor loss;
    if (closure) {
        torch::AutoGradMode enable_grad(true);
        loss = closure();
    }
    const auto start = std::chrono::steady_clock::now();
    torch::NoGradGuard no_grad;
    // The learning rate a schedule set on this optimizer's group (the only option that changes).
    inner_->param_groups().front().options().set_lr(param_groups().front().options().get_lr());
    auto& device = copies_->device;
    auto& host = copies_->host;
    for (size_t i = 0; i < device.size(); ++i) {
        const auto& grad = device[i].grad();
        if (!grad.defined()) {
            host[i].mutable_grad() = torch::Tensor();
            continue;
        }
        // Blocking: the host step reads it next.
        host_grads_[i].copy_(grad);
        host[i].mutable_grad() = host_grads_[i];
    }
    inner_->step();
    for (size_t i = 0; i < device.size(); ++i) {
        // From pinned memory the copy is queued on the device's stream; the next step's blocking
        // gradient copy waits for it before the host copies change again.
        if (host[i].grad().defined()) device[i].detach().copy_(host[i].detach(), /*non_blocking=*/pinned_);
    }
    step_ms_total_ += millisecondsSince(start);
    ++steps_;
    return loss;
}

void OffloadedOptimizer::save(torch::serialize::OutputArchive& archive) const {
    inner_->save(archive);
}

void OffloadedOptimizer::load(torch::serialize::InputArchive& archive) {
    inner_->load(archive);
    moveStateToParameters(*inner_);   // read onto the model's device, the state belongs with the host copies
}

void OffloadedOptimizer::Copies::valuesFromDevice() const {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < device.size(); ++i) host[i].detach().copy_(device[i].detach());
}

std::function<void()> OffloadedOptimizer::followDevice() const {
    return [copies = std::weak_ptr<Copies>(copies_)] {
        if (const auto alive = copies.lock()) alive->valuesFromDevice();
    };
}

OffloadedOptimizer* offloaded(torch::optim::Optimizer& optimizer) {
    return dynamic_cast<OffloadedOptimizer*>(&optimizer);
}

}  // namespace hearth
