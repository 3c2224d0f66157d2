// The model registry: name -> factory, plus parameter counts and per-layer summaries.

#include "engine/models/ModelRegistry.h"

#include "engine/models/Cnn.h"
#include "engine/models/Mlp.h"
#include "engine/models/ResNet.h"
#include "engine/models/TorchScriptModel.h"
#include "engine/models/Transformer.h"
#include "engine/weights/HfCheckpoint.h"

#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <sstream>

namespace hearth {
namespace {

std::string shapeText(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        s += (i ? ", " : "") + std::to_string(shape[i]);
    }
    return s + "]";
}

void requirePositive(const std::vector<int64_t>& widths, const char* key) {
    for (auto w : widths) {
        if (w <= 0) {
            throw ConfigError(key, "every width must be a positive integer, got " + std::to_string(w));
        }
    }
}

std::shared_ptr<ClassifierImpl> makeMlp(const ModelConfig& config, const ModelInput& input) {
    requirePositive(config.hidden, "model.hidden");
    const int64_t features =
        std::accumulate(input.sample_shape.begin(), input.sample_shape.end(), int64_t{1}, std::multiplies<int64_t>());
    return std::make_shared<MlpImpl>(features, config.hidden, config.dropout, input.num_classes,
                                     config.inplace_activations);
}

std::shared_ptr<ClassifierImpl> makeCnn(const ModelConfig& config, const ModelInput& input) {
    const auto& shape = input.sample_shape;
    if (shape.size() != 3) {
        throw ConfigError("model.name",
                          "cnn needs image input [channels, height, width], but the data's samples have "
                          "shape " +
                              shapeText(shape) + "; use model.name=mlp for tabular data");
    }
    if (config.channels.empty()) {
        throw ConfigError("model.channels", "cnn needs at least one block width");
    }
    requirePositive(config.channels, "model.channels");
    const int64_t shrink = int64_t{1} << config.channels.size();
    if (shape[1] < shrink || shape[2] < shrink) {
        throw ConfigError("model.channels", std::to_string(config.channels.size()) + " blocks halve the image " +
                                                std::to_string(config.channels.size()) + " times, too often for " +
                                                shapeText(shape) + "; use fewer blocks");
    }
    return std::make_shared<CnnImpl>(shape, config.channels, config.dropout, input.num_classes,
                                     config.inplace_activations);
}

// A new encoder of the config's sizes, or the pretrained checkpoint's, checked against the data.
std::shared_ptr<ClassifierImpl> makeTransformer(const ModelConfig& config, const ModelInput& input) {
    if (input.vocab_size <= 0)
        throw ConfigError("model.name", config.name + " reads token ids; use text data (data.kind text_csv or wordnet)");
    TransformerClassifier model{nullptr};
    if (config.pretrained) {
        model = loadPretrainedClassifier(*config.pretrained, config.name, input.num_classes);
    } else {
        TransformerSpec spec;
        spec.family = config.name == "bert" ? TransformerSpec::Family::Bert : TransformerSpec::Family::DistilBert;
        spec.vocab_size = input.vocab_size;
        spec.max_positions = input.max_length;
        spec.hidden = config.hidden_size;
        spec.layers = config.num_layers;
        spec.heads = config.num_heads;
        spec.intermediate = config.intermediate_size;
        spec.hidden_dropout = spec.attention_dropout = spec.classifier_dropout = config.dropout;
        spec.pad_token_id = input.pad_id;
        spec.num_labels = input.num_classes;
        if (spec.hidden % spec.heads != 0)
            throw ConfigError("model.hidden_size", "must be a multiple of model.num_heads");
        model = TransformerClassifier(spec);
        model->addNote("new " + config.name + ": " + std::to_string(spec.layers) + " layers, width " +
                       std::to_string(spec.hidden) + ", " + std::to_string(spec.heads) + " heads, vocabulary " +
                       std::to_string(spec.vocab_size));
    }
    const TransformerSpec& spec = model->spec();
    if (input.vocab_size > spec.vocab_size)
        throw ConfigError("data.tokenizer", "the tokenizer has " + std::to_string(input.vocab_size) +
                                                " tokens but the model's embeddings have " +
                                                std::to_string(spec.vocab_size) + "; use the checkpoint's own tokenizer");
    if (input.max_length > spec.max_positions)
        throw ConfigError("data.max_length", "the model has " + std::to_string(spec.max_positions) +
                                                 " positions; set data.max_length to at most that, got " +
                                                 std::to_string(input.max_length));
    return model.ptr();
}

std::shared_ptr<ClassifierImpl> makeTorchScript(const ModelConfig& config, const ModelInput& input) {
    if (!config.path || config.path->empty())
        throw ConfigError("model.path", "model.name=torchscript needs the module file (torch.jit.save)");
    if (config.gradient_checkpointing)
        throw ConfigError("model.gradient_checkpointing", "applies to the built-in models, not a TorchScript one");
    return loadTorchScriptClassifier(*config.path, input);
}

const std::map<std::string, ModelFactory>& registry() {
    static const std::map<std::string, ModelFactory> factories = {{"cnn", makeCnn},
                                                                  {"mlp", makeMlp},
                                                                  {"distilbert", makeTransformer},
                                                                  {"bert", makeTransformer},
                                                                  {"torchscript", makeTorchScript},
                                                                  {"resnet18", makeResNet},
                                                                  {"resnet34", makeResNet},
                                                                  {"resnet50", makeResNet}};
    return factories;
}

}  // namespace

std::vector<std::string> modelNames() {
    std::vector<std::string> names;
    for (const auto& entry : registry()) {
        names.push_back(entry.first);
    }
    return names;
}

// x by value as in the overrides, which reassign it layer by layer.
torch::Tensor ClassifierImpl::forwardStage(const Batch& /*batch*/, torch::Tensor /*x*/,  // NOLINT(performance-unnecessary-value-param)
                                          size_t /*begin*/, size_t /*end*/, bool /*head*/) {
    throw std::logic_error("this model is not cut into pipeline stages (cutsAtBlocks() is false)");
}

std::shared_ptr<ClassifierImpl> createModel(const ModelConfig& config, const ModelInput& input) {
    const auto it = registry().find(config.name);
    if (it == registry().end()) {
        std::string known;
        for (const auto& n : modelNames()) {
            known += (known.empty() ? "" : ", ") + n;
        }
        throw ConfigError("model.name", "unknown model '" + config.name + "'; known: " + known);
    }
    if (input.num_classes < 2) {
        throw ConfigError("model.name",
                          "a classifier needs at least 2 classes, the data has " + std::to_string(input.num_classes));
    }
    if (config.dropout < 0.0 || config.dropout >= 1.0) {
        throw ConfigError("model.dropout", "must be in [0, 1), got " + std::to_string(config.dropout));
    }
    if (config.inplace_activations && config.name != "cnn" && config.name != "mlp" && !isResNetName(config.name))
        throw ConfigError("model.inplace_activations", "applies to cnn, mlp and the resnets (their ReLUs); a "
                                                       "transformer's GELU has no in-place form");
    auto model = it->second(config, input);
    model->setGradientCheckpointing(config.gradient_checkpointing);
    return model;
}

int64_t parameterCount(const torch::nn::Module& model) {
    int64_t n = 0;
    for (const auto& p : model.parameters()) {
        n += p.numel();
    }
    return n;
}

std::vector<std::string> modelSummary(const torch::nn::Module& model) {
    struct Row {
        std::string name, description;
        int64_t params = 0;
    };
    std::vector<Row> rows;
    size_t name_width = 0, desc_width = 0;
    for (const auto& item : model.named_modules("", /*include_self=*/false)) {
        if (!item.value()->children().empty()) {
            continue;  // containers: their leaves are listed
        }
        Row row;
        // "features.block1_conv1" reads better as "block1_conv1" (the full path is kept below
        // when leaf names repeat, as in a transformer's layers: "layers.0.q").
        row.name = item.key();
        std::ostringstream desc;
        item.value()->pretty_print(desc);
        row.description = desc.str();
        for (const auto& p : item.value()->parameters(/*recurse=*/false)) {
            row.params += p.numel();
        }
        name_width = std::max(name_width, row.name.size());
        desc_width = std::max(desc_width, row.description.size());
        rows.push_back(std::move(row));
    }
    std::set<std::string> leaves;
    bool repeated = false;
    for (const auto& row : rows) repeated |= !leaves.insert(row.name.substr(row.name.rfind('.') + 1)).second;
    if (!repeated) {
        name_width = 0;
        for (auto& row : rows) {
            row.name = row.name.substr(row.name.rfind('.') + 1);
            name_width = std::max(name_width, row.name.size());
        }
    }
    std::vector<std::string> lines;
    lines.reserve(rows.size());
    for (const auto& row : rows) {
        lines.push_back(row.name + std::string(name_width - row.name.size() + 2, ' ') + row.description +
                        std::string(desc_width - row.description.size() + 2, ' ') + std::to_string(row.params) +
                        " params");
    }
    return lines;
}

}  // namespace hearth
