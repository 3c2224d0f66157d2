#include "engine/models/ActivationCheckpoint.h"

#include "engine/TorchCompat.h"
#include "engine/train/RandomState.h"

#include <optional>

namespace hearth {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// `anchor` is an empty tensor that requires grad: a custom function's output requires grad only
// when one of its inputs does, and a block's parameters are not inputs here.
struct CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
    // Runs in no-grad mode (custom functions' forward always does): nothing inside is recorded.
    // `extra` is a defined tensor (autograd needs one) and given to the block only with has_extra.
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& anchor,
                                 const torch::Tensor& given_extra, bool has_extra, Recomputable* block) {
        (void)anchor;
        const torch::Tensor extra = has_extra ? given_extra : torch::Tensor();
        const auto device_type = x.device().type();
        ctx->save_for_backward({x});
        ctx->saved_data["x_requires_grad"] = x.requires_grad();
        if (extra.defined()) ctx->saved_data["extra"] = extra;
        ctx->saved_data["block"] = reinterpret_cast<int64_t>(block);
        ctx->saved_data["rng"] = generatorState(x.device());
        const bool autocast = compat::autocastEnabled(device_type);
        ctx->saved_data["autocast"] = autocast;
        ctx->saved_data["autocast_dtype"] = static_cast<int64_t>(compat::autocastDtype(device_type));
        return block->recompute(x, extra);
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_output) {
        const auto saved = ctx->get_saved_variables();
        const bool x_requires_grad = ctx->saved_data["x_requires_grad"].toBool();
        auto x = saved[0].detach().requires_grad_(x_requires_grad);
        const auto extra = ctx->saved_data.count("extra") ? ctx->saved_data["extra"].toTensor() : torch::Tensor();
        // An IValue holds no raw pointer: the block travels as an integer (it outlives backward).
        auto* block = reinterpret_cast<Recomputable*>(  // NOLINT(performance-no-int-to-ptr)
            ctx->saved_data["block"].toInt());
        const auto device = x.device();
        // The state the forward pass left (running statistics): the recomputation must not move it.
        std::vector<torch::Tensor> state = block->stateToRestore();
        std::vector<torch::Tensor> kept;
        kept.reserve(state.size());
        for (const auto& t : state) kept.push_back(t.detach().clone());
        // Replay the forward's dropout masks, then give the generator back its current state.
        const auto current = generatorState(device);
        setGeneratorState(device, ctx->saved_data["rng"].toTensor());
        torch::Tensor out;
        {
            torch::AutoGradMode grad(true);
            std::optional<compat::AutocastGuard> autocast;
            if (ctx->saved_data["autocast"].toBool())
                autocast.emplace(device.type(), static_cast<at::ScalarType>(ctx->saved_data["autocast_dtype"].toInt()));
            out = block->recompute(x, extra);
        }
        setGeneratorState(device, current);
        // Reentrant backward: accumulates the block's parameter gradients (and x's gradient).
        torch::autograd::backward({out}, {grad_output[0]});
        // After the backward: BatchNorm's backward reads the running statistics it was given.
        {
            torch::NoGradGuard no_grad;
            for (size_t i = 0; i < state.size(); ++i) state[i].copy_(kept[i]);
        }
        return {x_requires_grad ? x.grad() : torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor(),
                torch::Tensor()};
    }
};

}  // namespace

torch::Tensor checkpointed(Recomputable& block, const torch::Tensor& x, const torch::Tensor& extra) {
    const auto anchor = torch::empty({0}, x.options().dtype(torch::kFloat)).requires_grad_(true);
    return CheckpointFunction::apply(x, anchor, extra.defined() ? extra : anchor, extra.defined(), &block);
}

SequentialBlock::SequentialBlock(const torch::nn::Sequential& sequential, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) modules_.push_back(sequential->begin()[static_cast<std::ptrdiff_t>(i)]);
}

torch::Tensor SequentialBlock::forward(torch::Tensor x) {
    for (auto& module : modules_) x = module.forward(x);
    return x;
}

torch::Tensor SequentialBlock::recompute(const torch::Tensor& x, const torch::Tensor& /*extra*/) {
    return forward(x);
}

std::vector<torch::Tensor> SequentialBlock::stateToRestore() {
    std::vector<torch::Tensor> state;
    for (auto& module : modules_) {
        for (const auto& buffer : module.ptr()->buffers()) state.push_back(buffer);
    }
    return state;
}

std::vector<torch::Tensor> SequentialBlock::parameters() const {
    std::vector<torch::Tensor> out;
    for (const auto& module : modules_) {
        for (const auto& p : module.ptr()->parameters()) out.push_back(p);
    }
    return out;
}

torch::Tensor runBlocks(std::vector<SequentialBlock>& blocks, torch::Tensor x, bool checkpoint, BlockHooks* hooks,
                        size_t begin, size_t end) {
    for (size_t i = begin; i < blocks.size() && i < end; ++i) {
        auto& block = blocks[i];
        x = runBlock(hooks, i, [&] { return checkpoint ? checkpointed(block, x) : block.forward(x); });
    }
    return x;
}

std::vector<std::vector<torch::Tensor>> blockParametersOf(const std::vector<SequentialBlock>& blocks) {
    std::vector<std::vector<torch::Tensor>> out;
    out.reserve(blocks.size());
    for (const auto& block : blocks) out.push_back(block.parameters());
    return out;
}

std::vector<std::vector<torch::Tensor>> blockBuffersOf(std::vector<SequentialBlock>& blocks) {
    std::vector<std::vector<torch::Tensor>> out;
    out.reserve(blocks.size());
    for (auto& block : blocks) out.push_back(block.stateToRestore());
    return out;
}

}  // namespace hearth
