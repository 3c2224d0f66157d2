#include "engine/models/TransformerSpec.h"

#include "engine/data/DataError.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>

namespace hearth {
namespace {

using Json = nlohmann::json;

// Hearth's module names -> the checkpoint's, per family ("{i}" is the layer number).
const std::map<std::string, std::string>& namesOf(TransformerSpec::Family family) {
    static const std::map<std::string, std::string> distilbert = {
        {"word_embeddings", "distilbert.embeddings.word_embeddings"},
        {"position_embeddings", "distilbert.embeddings.position_embeddings"},
        {"embeddings_norm", "distilbert.embeddings.LayerNorm"},
        {"q", "distilbert.transformer.layer.{i}.attention.q_lin"},
        {"k", "distilbert.transformer.layer.{i}.attention.k_lin"},
        {"v", "distilbert.transformer.layer.{i}.attention.v_lin"},
        {"o", "distilbert.transformer.layer.{i}.attention.out_lin"},
        {"attn_norm", "distilbert.transformer.layer.{i}.sa_layer_norm"},
        {"ffn_in", "distilbert.transformer.layer.{i}.ffn.lin1"},
        {"ffn_out", "distilbert.transformer.layer.{i}.ffn.lin2"},
        {"ffn_norm", "distilbert.transformer.layer.{i}.output_layer_norm"},
        {"pre_classifier", "pre_classifier"},
        {"classifier", "classifier"},
    };
    static const std::map<std::string, std::string> bert = {
        {"word_embeddings", "bert.embeddings.word_embeddings"},
        {"position_embeddings", "bert.embeddings.position_embeddings"},
        {"token_type_embeddings", "bert.embeddings.token_type_embeddings"},
        {"embeddings_norm", "bert.embeddings.LayerNorm"},
        {"q", "bert.encoder.layer.{i}.attention.self.query"},
        {"k", "bert.encoder.layer.{i}.attention.self.key"},
        {"v", "bert.encoder.layer.{i}.attention.self.value"},
        {"o", "bert.encoder.layer.{i}.attention.output.dense"},
        {"attn_norm", "bert.encoder.layer.{i}.attention.output.LayerNorm"},
        {"ffn_in", "bert.encoder.layer.{i}.intermediate.dense"},
        {"ffn_out", "bert.encoder.layer.{i}.output.dense"},
        {"ffn_norm", "bert.encoder.layer.{i}.output.LayerNorm"},
        {"pooler", "bert.pooler.dense"},
        {"classifier", "classifier"},
    };
    return family == TransformerSpec::Family::Bert ? bert : distilbert;
}

template <typename T>
T valueOr(const Json& j, std::initializer_list<const char*> keys, T fallback) {
    for (const char* key : keys) {
        const auto it = j.find(key);
        if (it != j.end() && !it->is_null()) return it->get<T>();
    }
    return fallback;
}

}  // namespace

std::string TransformerSpec::checkpointName(const std::string& name) const {
    std::string module = name.substr(0, name.rfind('.'));
    const std::string leaf = name.substr(name.rfind('.') + 1);   // weight | bias
    std::string layer;
    if (module.rfind("layers.", 0) == 0) {
        const auto dot = module.find('.', 7);
        layer = module.substr(7, dot - 7);
        module = module.substr(dot + 1);
    }
    const auto& names = namesOf(family);
    const auto it = names.find(module);
    if (it == names.end()) throw std::invalid_argument("TransformerSpec: no checkpoint name for '" + name + "'");
    std::string out = it->second;
    if (const auto at = out.find("{i}"); at != std::string::npos) out.replace(at, 3, layer);
    return out + "." + leaf;
}

TransformerSpec readTransformerSpec(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw DataError(path + ": cannot read the checkpoint's config.json");
    Json j;
    try {
        j = Json::parse(in);
    } catch (const std::exception& e) {
        throw DataError(path + ": not valid JSON (" + e.what() + ")");
    }
    if (!j.is_object()) throw DataError(path + ": expected a JSON object of model settings");
    TransformerSpec s;
    try {
        const std::string type = valueOr<std::string>(j, {"model_type"}, "");
        if (type == "distilbert") {
            s.family = TransformerSpec::Family::DistilBert;
            if (valueOr<bool>(j, {"sinusoidal_pos_embds"}, false))
                throw DataError(path + ": sinusoidal_pos_embds=true is not supported (learned position "
                                       "embeddings only)");
            s.hidden = valueOr<int64_t>(j, {"dim", "hidden_size"}, 768);
            s.layers = valueOr<int64_t>(j, {"n_layers", "num_hidden_layers"}, 6);
            s.heads = valueOr<int64_t>(j, {"n_heads", "num_attention_heads"}, 12);
            s.intermediate = valueOr<int64_t>(j, {"hidden_dim", "intermediate_size"}, 3072);
            s.hidden_dropout = valueOr<double>(j, {"dropout"}, 0.1);
            s.attention_dropout = valueOr<double>(j, {"attention_dropout"}, 0.1);
            s.classifier_dropout = valueOr<double>(j, {"seq_classif_dropout"}, 0.2);
            s.activation = valueOr<std::string>(j, {"activation"}, "gelu");
        } else if (type == "bert") {
            s.family = TransformerSpec::Family::Bert;
            s.hidden = valueOr<int64_t>(j, {"hidden_size"}, 768);
            s.layers = valueOr<int64_t>(j, {"num_hidden_layers"}, 12);
            s.heads = valueOr<int64_t>(j, {"num_attention_heads"}, 12);
            s.intermediate = valueOr<int64_t>(j, {"intermediate_size"}, 3072);
            s.hidden_dropout = valueOr<double>(j, {"hidden_dropout_prob"}, 0.1);
            s.attention_dropout = valueOr<double>(j, {"attention_probs_dropout_prob"}, 0.1);
            s.classifier_dropout = valueOr<double>(j, {"classifier_dropout", "hidden_dropout_prob"}, 0.1);
            s.type_vocab_size = valueOr<int64_t>(j, {"type_vocab_size"}, 2);
            s.layer_norm_eps = valueOr<double>(j, {"layer_norm_eps"}, 1e-12);
            s.activation = valueOr<std::string>(j, {"hidden_act"}, "gelu");
            const std::string position = valueOr<std::string>(j, {"position_embedding_type"}, "absolute");
            if (position != "absolute")
                throw DataError(path + ": position_embedding_type '" + position + "' is not supported (absolute only)");
        } else {
            throw DataError(path + ": model_type '" + type + "' is not a BERT-family encoder Hearth can build "
                                   "(distilbert or bert)");
        }
        s.vocab_size = valueOr<int64_t>(j, {"vocab_size"}, 30522);
        s.max_positions = valueOr<int64_t>(j, {"max_position_embeddings"}, 512);
        s.initializer_range = valueOr<double>(j, {"initializer_range"}, 0.02);
        s.pad_token_id = valueOr<int64_t>(j, {"pad_token_id"}, 0);
        if (const auto labels = j.find("id2label"); labels != j.end() && labels->is_object()) {
            s.num_labels = static_cast<int64_t>(labels->size());
            for (int64_t i = 0; i < s.num_labels; ++i) s.label_names.push_back("LABEL_" + std::to_string(i));
            for (const auto& [key, value] : labels->items()) {
                const int64_t i = std::strtoll(key.c_str(), nullptr, 10);
                if (i >= 0 && i < s.num_labels && value.is_string())
                    s.label_names[static_cast<size_t>(i)] = value.get<std::string>();
            }
        }
    } catch (const Json::exception& e) {
        throw DataError(path + ": a setting has the wrong type (" + e.what() + ")");
    }
    while (static_cast<int64_t>(s.label_names.size()) < s.num_labels)
        s.label_names.push_back("LABEL_" + std::to_string(s.label_names.size()));
    if (s.activation != "gelu" && s.activation != "gelu_new" && s.activation != "relu")
        throw DataError(path + ": activation '" + s.activation + "' is not supported (gelu, gelu_new or relu)");
    if (s.hidden <= 0 || s.heads <= 0 || s.hidden % s.heads != 0 || s.layers <= 0 || s.vocab_size <= 0 ||
        s.max_positions <= 0 || s.intermediate <= 0)
        throw DataError(path + ": impossible sizes (hidden " + std::to_string(s.hidden) + ", heads " +
                        std::to_string(s.heads) + ", layers " + std::to_string(s.layers) + ")");
    return s;
}

}  // namespace hearth
