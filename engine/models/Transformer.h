#pragma once
// TransformerClassifier: a BERT-family encoder with a sequence-classification head, as
// transformers' DistilBertForSequenceClassification and BertForSequenceClassification compute
// it (post-LayerNorm blocks, exact GELU, the [CLS] state into the head). One implementation; the
// families differ in token-type embeddings, dropout after the attention output, and the head
// (DistilBERT: pre_classifier + ReLU; BERT: tanh pooler). Reads "input_ids" and
// "attention_mask" (and "token_type_ids" when present) from the batch.

#include "engine/models/ActivationCheckpoint.h"
#include "engine/models/ModelRegistry.h"
#include "engine/models/TransformerSpec.h"

namespace hearth {

class EncoderLayerImpl final : public torch::nn::Module, public Recomputable {
public:
    explicit EncoderLayerImpl(const TransformerSpec& spec);
    // x [B, T, hidden]; keep: bool [B, 1, 1, T], true for real tokens.
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& keep);
    torch::Tensor recompute(const torch::Tensor& x, const torch::Tensor& keep) override { return forward(x, keep); }

private:
    torch::Tensor activation(const torch::Tensor& x) const;

    int64_t heads_;
    double attention_dropout_;
    bool dropout_after_attention_;   // bert
    std::string activation_;
    torch::nn::Linear q_{nullptr}, k_{nullptr}, v_{nullptr}, o_{nullptr}, ffn_in_{nullptr}, ffn_out_{nullptr};
    torch::nn::LayerNorm attn_norm_{nullptr}, ffn_norm_{nullptr};
    torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(EncoderLayer);

class TransformerClassifierImpl final : public ClassifierImpl {
public:
    // Weights initialised as transformers initialises them (normal(0, initializer_range), zero
    // biases and padding row, LayerNorm 1/0), from the current torch seed.
    explicit TransformerClassifierImpl(const TransformerSpec& spec);

    torch::Tensor forward(torch::Tensor input_ids) override;   // every position attended
    torch::Tensor forwardBatch(const Batch& batch) override;
    torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                          const torch::Tensor& token_type_ids = {});  // attention_mask undefined: no padding

    const TransformerSpec& spec() const { return spec_; }
    // Every parameter under its checkpoint name (e.g. "bert.encoder.layer.0.attention.self.query.weight").
    std::vector<std::pair<std::string, torch::Tensor>> checkpointParameters();
    std::vector<std::string> notes() const override { return notes_; }
    PartFlops partFlops() const override { return flops_; }
    std::vector<std::vector<torch::Tensor>> blockParameters() override;
    std::vector<torch::Tensor> stemParameters() override;   // the embeddings and their LayerNorm
    // Stages cut between encoder layers: the embeddings on the first, the head on the last; every
    // stage reads its micro-batch's attention mask from the batch.
    bool cutsAtBlocks() const override { return true; }
    torch::Tensor forwardStage(const Batch& batch, torch::Tensor x, size_t begin, size_t end, bool head) override;
    void addNote(std::string note) { notes_.push_back(std::move(note)); }

private:
    void initWeights();
    torch::Tensor embed(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);
    // Encoder layers [begin, end) on x [B, T, hidden]; keep as EncoderLayer::forward's (undefined: no padding).
    torch::Tensor encode(torch::Tensor x, const torch::Tensor& keep, size_t begin, size_t end, BlockHooks* hooks);
    torch::Tensor classify(const torch::Tensor& x);   // the first token's state into the head

    TransformerSpec spec_;
    PartFlops flops_;   // of spec_
    std::vector<std::string> notes_;
    torch::nn::Embedding word_embeddings_{nullptr}, position_embeddings_{nullptr}, token_type_embeddings_{nullptr};
    torch::nn::LayerNorm embeddings_norm_{nullptr};
    torch::nn::Dropout dropout_{nullptr}, classifier_dropout_{nullptr};
    torch::nn::ModuleList layers_;
    torch::nn::Linear head_{nullptr};      // distilbert: pre_classifier; bert: pooler
    torch::nn::Linear classifier_{nullptr};
};
TORCH_MODULE(TransformerClassifier);

}  // namespace hearth
