#include "engine/weights/HfCheckpoint.h"

#include "engine/config/ExperimentConfig.h"
#include "engine/data/DataError.h"
#include "engine/weights/SafeTensors.h"
#include "engine/weights/StateDictFile.h"
#include "engine/weights/WeightsText.h"

#include <filesystem>
#include <fstream>
#include <set>

namespace hearth {
namespace {

namespace fs = std::filesystem;

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Heads of pre-training checkpoints and buffers a classifier has no use for.
bool ignorable(const std::string& name) {
    for (const char* part : {"vocab_transform.", "vocab_layer_norm.", "vocab_projector.", "cls.predictions.",
                             "cls.seq_relationship.", "lm_head.", "qa_outputs."})
        if (name.find(part) != std::string::npos) return true;
    return endsWith(name, "position_ids");
}

// "…LayerNorm.gamma" -> "…LayerNorm.weight", "…beta" -> "…bias" (TensorFlow-era checkpoints).
std::string modernName(const std::string& name) {
    if (endsWith(name, ".gamma")) return name.substr(0, name.size() - 6) + ".weight";
    if (endsWith(name, ".beta")) return name.substr(0, name.size() - 5) + ".bias";
    return name;
}

bool isHead(const std::string& name) {
    return name.rfind("classifier.", 0) == 0 || name.rfind("pre_classifier.", 0) == 0;
}

}  // namespace

std::map<std::string, torch::Tensor> readCheckpointTensors(const std::string& folder) {
    const fs::path dir(folder);
    if (fs::exists(dir / "model.safetensors") || fs::exists(dir / "model.safetensors.index.json"))
        return readSafeTensorsFolder(folder);
    if (fs::exists(dir / "pytorch_model.bin")) return readStateDictFile((dir / "pytorch_model.bin").string());
    throw DataError(folder + ": no weights (looked for model.safetensors, model.safetensors.index.json and "
                             "pytorch_model.bin)");
}

std::vector<std::string> loadCheckpointWeights(TransformerClassifierImpl& model,
                                               const std::map<std::string, torch::Tensor>& tensors,
                                               const std::string& source) {
    const TransformerSpec& spec = model.spec();
    std::map<std::string, const torch::Tensor*> available;
    for (const auto& [name, tensor] : tensors) available[modernName(name)] = &tensor;
    std::set<std::string> used;
    std::vector<std::string> missing, misshaped, notes;
    std::set<std::string> new_modules;
    torch::NoGradGuard no_grad;
    for (auto& [name, param] : model.checkpointParameters()) {
        std::string found = name;
        if (!available.count(found) && name.rfind(spec.prefix(), 0) == 0) found = name.substr(spec.prefix().size());
        const auto it = available.find(found);
        const std::string module = name.substr(0, name.rfind('.'));
        const bool head = isHead(name);
        const bool pooler = name.find("pooler.") != std::string::npos;
        if (it == available.end()) {
            if (head || pooler) {
                new_modules.insert(module + " (not in the checkpoint: initialised anew)");
            } else {
                missing.push_back(name + " " + shapeText(param.sizes()));
            }
            continue;
        }
        used.insert(it->first);
        const torch::Tensor& t = *it->second;
        if (t.sizes() != param.sizes()) {
            if (head) {
                new_modules.insert(module + " (the checkpoint's is " + shapeText(t.sizes()) + ", this data needs " +
                                   shapeText(param.sizes()) + ": initialised anew)");
            } else {
                misshaped.push_back(name + ": checkpoint " + shapeText(t.sizes()) + ", model " +
                                    shapeText(param.sizes()));
            }
            continue;
        }
        if (!t.is_floating_point())
            throw DataError(source + ": " + it->first + " holds " + std::string(c10::toString(t.scalar_type())) +
                            " values, not floating point weights");
        param.copy_(t);
    }
    std::vector<std::string> unexpected, ignored;
    for (const auto& [name, tensor] : available) {
        if (used.count(name)) continue;
        (ignorable(name) ? ignored : unexpected).push_back(name + " " + shapeText(tensor->sizes()));
    }
    std::string problems;
    if (!missing.empty())
        problems += "\nmissing from the checkpoint (" + std::to_string(missing.size()) + "):" + listed(missing);
    if (!misshaped.empty())
        problems += "\nshapes differ (" + std::to_string(misshaped.size()) + "):" + listed(misshaped);
    if (!unexpected.empty())
        problems += "\nnot part of a " + spec.familyName() + " classifier (" + std::to_string(unexpected.size()) +
                    "):" + listed(unexpected);
    if (!problems.empty())
        throw DataError(source + ": the checkpoint does not fit a " + spec.familyName() + " classifier with " +
                        std::to_string(spec.layers) + " layers of width " + std::to_string(spec.hidden) + problems);
    for (const auto& m : new_modules) notes.push_back(m);
    if (!ignored.empty())
        notes.push_back(std::to_string(ignored.size()) + (ignored.size() == 1 ? " tensor" : " tensors") +
                        " of the checkpoint not used by a classifier ignored (e.g. " + ignored.front() + ")");
    return notes;
}

TransformerClassifier loadPretrainedClassifier(const std::string& folder, const std::string& family,
                                               int64_t num_labels) {
    if (!fs::is_directory(folder)) {
        std::string where = fs::path(folder).is_relative() ? " (relative to " + fs::current_path().string() + ")" : "";
        std::string hint = folder.find("all-MiniLM-L6-v2") != std::string::npos
                               ? "; scripts/install-deps puts all-MiniLM-L6-v2 in .deps/models (run it from the "
                                 "Hearth checkout)"
                               : "; set it to a Hugging Face checkpoint folder with config.json and model.safetensors "
                                 "(what save_pretrained writes)";
        throw DataError("model.pretrained: '" + folder + "' is not a folder" + where + hint);
    }
    const fs::path config = fs::path(folder) / "config.json";
    if (!fs::exists(config))
        throw DataError(folder + ": no config.json (a Hugging Face checkpoint folder has config.json and "
                                 "model.safetensors or pytorch_model.bin)");
    TransformerSpec spec = readTransformerSpec(config.string());
    if (spec.familyName() != family)
        throw ConfigError("model.name", "the checkpoint " + folder + " is a " + spec.familyName() +
                                            " model (config.json model_type); set model.name=" + spec.familyName());
    spec.num_labels = num_labels;
    auto tensors = readCheckpointTensors(folder);
    TransformerClassifier model(spec);
    const auto notes = loadCheckpointWeights(*model, tensors, folder);
    model->addNote("weights from " + folder + " (" + std::to_string(tensors.size()) + " tensors)");
    for (const auto& note : notes) model->addNote(note);
    return model;
}

}  // namespace hearth
