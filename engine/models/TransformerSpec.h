#pragma once
// TransformerSpec: the sizes and settings of a BERT-family encoder classifier (DistilBERT or
// BERT), read from a Hugging Face config.json or given for a new model, and the per-family map
// from Hearth's module names to the checkpoint's tensor names. No LibTorch.

#include <cstdint>
#include <string>
#include <vector>

namespace hearth {

struct TransformerSpec {
    enum class Family { DistilBert, Bert };
    Family family = Family::DistilBert;
    int64_t vocab_size = 30522;
    int64_t max_positions = 512;
    int64_t type_vocab_size = 2;        // bert only
    int64_t hidden = 768;
    int64_t layers = 6;
    int64_t heads = 12;
    int64_t intermediate = 3072;
    double hidden_dropout = 0.1;
    double attention_dropout = 0.1;
    double classifier_dropout = 0.2;    // distilbert: seq_classif_dropout; bert: classifier_dropout or hidden
    double layer_norm_eps = 1e-12;
    double initializer_range = 0.02;
    int64_t pad_token_id = 0;
    std::string activation = "gelu";    // gelu (exact erf) | gelu_new (tanh) | relu
    int64_t num_labels = 2;
    std::vector<std::string> label_names;   // config.json's id2label in id order (LABEL_i where absent)

    std::string familyName() const { return family == Family::Bert ? "bert" : "distilbert"; }
    // "distilbert." / "bert.": the prefix of the encoder's tensors in a *ForSequenceClassification.
    std::string prefix() const { return familyName() + "."; }
    // The checkpoint's name of one of Hearth's parameters ("layers.0.q.weight" ->
    // "distilbert.transformer.layer.0.attention.q_lin.weight"). Throws std::invalid_argument for
    // a name the family does not have.
    std::string checkpointName(const std::string& name) const;
};

// Reads config.json (model_type, the sizes, dropouts, activation; aliases as transformers has
// them). Throws DataError naming the file for a missing or broken file, an unsupported
// model_type or setting (sinusoidal position embeddings).
TransformerSpec readTransformerSpec(const std::string& config_json_path);

}  // namespace hearth
