#include "engine/models/ActivationCheckpoint.h"

#include "engine/TorchCompat.h"
#include "engine/models/Transformer.h"

#include <optional>

namespace hearth {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

torch::Tensor rngState(c10::Device device) {
    auto generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    return generator.get_state();
}

void setRngState(c10::Device device, const torch::Tensor& state) {
    auto generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
}

struct CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
    // Runs in no-grad mode (custom functions' forward always does): nothing inside is recorded.
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& keep,
                                 EncoderLayerImpl* layer) {
        const auto device_type = x.device().type();
        ctx->save_for_backward({x});
        ctx->saved_data["keep"] = keep;
        ctx->saved_data["layer"] = reinterpret_cast<int64_t>(layer);
        ctx->saved_data["rng"] = rngState(x.device());
        const bool autocast = compat::autocastEnabled(device_type);
        ctx->saved_data["autocast"] = autocast;
        ctx->saved_data["autocast_dtype"] = static_cast<int64_t>(compat::autocastDtype(device_type));
        return layer->forward(x, keep);
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_output) {
        const auto saved = ctx->get_saved_variables();
        auto x = saved[0].detach().requires_grad_(true);
        const auto keep = ctx->saved_data["keep"].toTensor();
        auto* layer = reinterpret_cast<EncoderLayerImpl*>(ctx->saved_data["layer"].toInt());
        const auto device = x.device();
        // Replay the forward's dropout masks, then give the generator back its current state.
        const auto current = rngState(device);
        setRngState(device, ctx->saved_data["rng"].toTensor());
        torch::Tensor out;
        {
            torch::AutoGradMode grad(true);
            std::optional<compat::AutocastGuard> autocast;
            if (ctx->saved_data["autocast"].toBool())
                autocast.emplace(device.type(), static_cast<at::ScalarType>(ctx->saved_data["autocast_dtype"].toInt()));
            out = layer->forward(x, keep);
        }
        setRngState(device, current);
        // Reentrant backward: accumulates the layer's parameter gradients and x's gradient.
        torch::autograd::backward({out}, {grad_output[0]});
        return {x.grad(), torch::Tensor(), torch::Tensor()};
    }
};

}  // namespace

torch::Tensor checkpointedLayer(EncoderLayerImpl& layer, const torch::Tensor& x, const torch::Tensor& keep) {
    return CheckpointFunction::apply(x, keep, &layer);
}

}  // namespace hearth
