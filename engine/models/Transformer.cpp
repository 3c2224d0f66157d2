#include "engine/models/Transformer.h"

#include "engine/TorchCompat.h"
#include "engine/data/Batch.h"
#include "engine/models/ActivationCheckpoint.h"

#include <cmath>

namespace hearth {
namespace {

torch::nn::LayerNorm layerNorm(const TransformerSpec& s) {
    return torch::nn::LayerNorm(torch::nn::LayerNormOptions({s.hidden}).eps(s.layer_norm_eps));
}

}  // namespace

EncoderLayerImpl::EncoderLayerImpl(const TransformerSpec& spec)
    : heads_(spec.heads),
      attention_dropout_(spec.attention_dropout),
      dropout_after_attention_(spec.family == TransformerSpec::Family::Bert),
      activation_(spec.activation) {
    const int64_t h = spec.hidden;
    q_ = register_module("q", torch::nn::Linear(h, h));
    k_ = register_module("k", torch::nn::Linear(h, h));
    v_ = register_module("v", torch::nn::Linear(h, h));
    o_ = register_module("o", torch::nn::Linear(h, h));
    attn_norm_ = register_module("attn_norm", layerNorm(spec));
    ffn_in_ = register_module("ffn_in", torch::nn::Linear(h, spec.intermediate));
    ffn_out_ = register_module("ffn_out", torch::nn::Linear(spec.intermediate, h));
    ffn_norm_ = register_module("ffn_norm", layerNorm(spec));
    dropout_ = register_module("dropout", torch::nn::Dropout(spec.hidden_dropout));
}

torch::Tensor EncoderLayerImpl::activation(const torch::Tensor& x) const {
    if (activation_ == "relu") return torch::relu(x);
    return torch::gelu(x, activation_ == "gelu_new" ? "tanh" : "none");
}

torch::Tensor EncoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& keep) {
    const int64_t batch = x.size(0), length = x.size(1), hidden = x.size(2), head_dim = hidden / heads_;
    auto split = [&](const torch::Tensor& t) { return t.view({batch, length, heads_, head_dim}).transpose(1, 2); };
    auto context = compat::attention(split(q_(x)), split(k_(x)), split(v_(x)), keep,
                                     is_training() ? attention_dropout_ : 0.0);
    auto attended = o_(context.transpose(1, 2).reshape({batch, length, hidden}));
    if (dropout_after_attention_) attended = dropout_(attended);
    auto h = attn_norm_(attended + x);
    auto ffn = dropout_(ffn_out_(activation(ffn_in_(h))));
    return ffn_norm_(ffn + h);
}

TransformerClassifierImpl::TransformerClassifierImpl(const TransformerSpec& spec)
    : spec_(spec), flops_(transformerFlops(spec)) {
    const bool bert = spec.family == TransformerSpec::Family::Bert;
    word_embeddings_ = register_module(
        "word_embeddings",
        torch::nn::Embedding(torch::nn::EmbeddingOptions(spec.vocab_size, spec.hidden).padding_idx(spec.pad_token_id)));
    position_embeddings_ = register_module("position_embeddings", torch::nn::Embedding(spec.max_positions, spec.hidden));
    if (bert)
        token_type_embeddings_ =
            register_module("token_type_embeddings", torch::nn::Embedding(spec.type_vocab_size, spec.hidden));
    embeddings_norm_ = register_module("embeddings_norm", layerNorm(spec));
    dropout_ = register_module("dropout", torch::nn::Dropout(spec.hidden_dropout));
    layers_ = register_module("layers", torch::nn::ModuleList());
    for (int64_t i = 0; i < spec.layers; ++i) layers_->push_back(EncoderLayer(spec));
    head_ = register_module(bert ? "pooler" : "pre_classifier", torch::nn::Linear(spec.hidden, spec.hidden));
    classifier_dropout_ = register_module("classifier_dropout", torch::nn::Dropout(spec.classifier_dropout));
    classifier_ = register_module("classifier", torch::nn::Linear(spec.hidden, spec.num_labels));
    initWeights();
}

void TransformerClassifierImpl::initWeights() {
    torch::NoGradGuard no_grad;
    const double std = spec_.initializer_range;
    for (auto& module : modules(/*include_self=*/false)) {
        if (auto* linear = module->as<torch::nn::Linear>()) {
            linear->weight.normal_(0.0, std);
            linear->bias.zero_();
        } else if (auto* embedding = module->as<torch::nn::Embedding>()) {
            embedding->weight.normal_(0.0, std);
        } else if (auto* norm = module->as<torch::nn::LayerNorm>()) {
            norm->weight.fill_(1.0);
            norm->bias.zero_();
        }
    }
    if (spec_.pad_token_id >= 0 && spec_.pad_token_id < spec_.vocab_size)
        word_embeddings_->weight[spec_.pad_token_id].zero_();
}

torch::Tensor TransformerClassifierImpl::forward(torch::Tensor input_ids) {
    return forward(input_ids, torch::Tensor());
}

torch::Tensor TransformerClassifierImpl::forwardBatch(const Batch& batch) {
    return forward(batch.at("input_ids"), batch.has("attention_mask") ? batch.at("attention_mask") : torch::Tensor(),
                   batch.has("token_type_ids") ? batch.at("token_type_ids") : torch::Tensor());
}

namespace {

// The mask the encoder layers take: bool [B, 1, 1, T], true for real tokens; undefined without an
// attention mask (no padding: FlashAttention takes none).
torch::Tensor keepMask(const torch::Tensor& attention_mask) {
    if (!attention_mask.defined()) return {};
    return attention_mask.to(torch::kBool).view({attention_mask.size(0), 1, 1, attention_mask.size(1)});
}

}  // namespace

torch::Tensor TransformerClassifierImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                                                 const torch::Tensor& token_type_ids) {
    return classify(encode(embed(input_ids, token_type_ids), keepMask(attention_mask), 0, layers_->size(),
                           blockHooks()));
}

torch::Tensor TransformerClassifierImpl::forwardStage(const Batch& batch, torch::Tensor x, size_t begin, size_t end,
                                                      bool head) {
    if (begin == 0)
        x = embed(batch.at("input_ids"), batch.has("token_type_ids") ? batch.at("token_type_ids") : torch::Tensor());
    x = encode(std::move(x), keepMask(batch.has("attention_mask") ? batch.at("attention_mask") : torch::Tensor()),
               begin, end, nullptr);
    return head ? classify(x) : x;
}

torch::Tensor TransformerClassifierImpl::embed(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids) {
    const int64_t length = input_ids.size(1);
    TORCH_CHECK(length <= spec_.max_positions, "a batch of ", length, " tokens is longer than the model's ",
                spec_.max_positions, " positions (lower data.max_length)");
    auto positions = torch::arange(length, input_ids.options().dtype(torch::kInt64));
    auto x = word_embeddings_(input_ids) + position_embeddings_(positions).unsqueeze(0);
    if (token_type_embeddings_) {
        x = x + (token_type_ids.defined() ? token_type_embeddings_(token_type_ids)
                                          : token_type_embeddings_->weight[0].view({1, 1, spec_.hidden}));
    }
    return dropout_(embeddings_norm_(x));
}

torch::Tensor TransformerClassifierImpl::encode(torch::Tensor x, const torch::Tensor& keep, size_t begin, size_t end,
                                                BlockHooks* hooks) {
    const bool checkpoint = checkpointsNow();
    for (size_t i = begin; i < end && i < layers_->size(); ++i) {
        auto& layer = *layers_[i]->as<EncoderLayerImpl>();
        x = runBlock(hooks, i, [&] { return checkpoint ? checkpointed(layer, x, keep) : layer.forward(x, keep); });
    }
    return x;
}

torch::Tensor TransformerClassifierImpl::classify(const torch::Tensor& x) {
    auto cls = x.select(1, 0);
    auto pooled = spec_.family == TransformerSpec::Family::Bert ? torch::tanh(head_(cls)) : torch::relu(head_(cls));
    return classifier_(classifier_dropout_(pooled));
}

std::vector<std::vector<torch::Tensor>> TransformerClassifierImpl::blockParameters() {
    std::vector<std::vector<torch::Tensor>> out;
    for (const auto& layer : *layers_) out.push_back(layer->parameters());
    return out;
}

std::vector<torch::Tensor> TransformerClassifierImpl::stemParameters() {
    std::vector<std::shared_ptr<torch::nn::Module>> stem{word_embeddings_.ptr(), position_embeddings_.ptr(),
                                                         embeddings_norm_.ptr()};
    if (token_type_embeddings_) stem.push_back(token_type_embeddings_.ptr());
    std::vector<torch::Tensor> out;
    for (const auto& module : stem)
        for (const auto& p : module->parameters()) out.push_back(p);
    return out;
}

std::vector<std::pair<std::string, torch::Tensor>> TransformerClassifierImpl::checkpointParameters() {
    std::vector<std::pair<std::string, torch::Tensor>> out;
    for (const auto& item : named_parameters()) out.emplace_back(spec_.checkpointName(item.key()), item.value());
    return out;
}

}  // namespace hearth
