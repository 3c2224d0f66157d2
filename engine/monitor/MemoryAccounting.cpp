#include "engine/monitor/MemoryAccounting.h"

#include "engine/optim/OffloadedOptimizer.h"

#include <algorithm>
#include <unordered_set>

namespace hearth {
namespace {

// Counts each storage once: views and tied weights share theirs.
class StorageSet {
public:
    int64_t add(const torch::Tensor& t) {
        if (!t.defined()) return 0;
        const void* key = t.storage().unsafeGetStorageImpl();
        if (!seen_.insert(key).second) return 0;
        return static_cast<int64_t>(t.storage().nbytes());
    }

private:
    std::unordered_set<const void*> seen_;
};

int64_t stateBytes(torch::optim::OptimizerParamState& state, StorageSet& seen) {
    if (auto* s = dynamic_cast<torch::optim::AdamParamState*>(&state)) {
        return seen.add(s->exp_avg()) + seen.add(s->exp_avg_sq()) + seen.add(s->max_exp_avg_sq());
    }
    if (auto* s = dynamic_cast<torch::optim::AdamWParamState*>(&state)) {
        return seen.add(s->exp_avg()) + seen.add(s->exp_avg_sq()) + seen.add(s->max_exp_avg_sq());
    }
    if (auto* s = dynamic_cast<torch::optim::SGDParamState*>(&state)) {
        return seen.add(s->momentum_buffer());
    }
    if (auto* s = dynamic_cast<torch::optim::AdagradParamState*>(&state)) {
        return seen.add(s->sum());
    }
    if (auto* s = dynamic_cast<torch::optim::RMSpropParamState*>(&state)) {
        return seen.add(s->square_avg()) + seen.add(s->momentum_buffer()) + seen.add(s->grad_avg());
    }
    return 0;
}

}  // namespace

HeldBytes measureHeldBytes(const torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                           const std::vector<torch::Tensor>& gradient_buffers) {
    HeldBytes out;
    StorageSet params, grads, state;
    for (const auto& buffer : gradient_buffers) out.gradients += grads.add(buffer);
    int64_t elements = 0;
    for (const auto& p : model.parameters()) {
        out.parameters += params.add(p);
        out.gradients += grads.add(p.grad());
        elements += p.numel();
    }
    // A model whose parameters hold no storage has them sharded away (zero3): the slices its
    // optimizer steps are the parameters themselves, not a copy.
    const bool sharded_parameters = elements > 0 && out.parameters == 0;
    for (auto& group : optimizer.param_groups()) {
        for (auto& p : group.params()) {
            // Otherwise a tensor only the optimizer holds (zero2's master slice) is optimizer state.
            (sharded_parameters ? out.parameters : out.optimizer_state) += params.add(p);
            out.gradients += grads.add(p.grad());
        }
    }
    OffloadedOptimizer* off = offloaded(optimizer);
    if (!off) {
        for (auto& entry : optimizer.state()) {
            if (entry.second) out.optimizer_state += stateBytes(*entry.second, state);
        }
        return out;
    }
    // Offloaded: what the host-side optimizer holds, beside the device tensors counted above.
    int64_t host = 0;
    for (const auto& p : off->hostTensors()) host += params.add(p) + grads.add(p.grad());
    for (auto& entry : off->inner().state()) {
        if (entry.second) host += stateBytes(*entry.second, state);
    }
    bool on_device = false;
    for (const auto& p : model.parameters()) on_device = on_device || !p.device().is_cpu();
    (on_device ? out.offloaded : out.optimizer_state) += host;
    return out;
}

MemoryBaseline memoryBaseline(int64_t current_bytes, int64_t tensor_bytes,
                              const std::vector<torch::Tensor>& gradient_buffers, int64_t optimizer_state_bytes) {
    StorageSet seen;
    int64_t held = optimizer_state_bytes;
    for (const auto& buffer : gradient_buffers) held += seen.add(buffer);
    MemoryBaseline out;
    out.bytes = std::max<int64_t>(0, current_bytes - held);
    out.tensor_bytes = tensor_bytes < 0 ? -1 : std::max<int64_t>(0, tensor_bytes - held);
    return out;
}

HostPeakSplit splitHostPeak(int64_t peak_rss, int64_t baseline_rss, int64_t tensor_peak, int64_t baseline_tensors,
                            int64_t held) {
    const int64_t growth = std::max<int64_t>(0, tensor_peak - baseline_tensors);
    return {std::max<int64_t>(0, growth - held), std::max<int64_t>(0, peak_rss - baseline_rss - std::max(growth, held))};
}

}  // namespace hearth
