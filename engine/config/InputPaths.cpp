// missingInputs: the files and folders a config names that are not on this machine.
#include "engine/config/ExperimentConfig.h"

#include <filesystem>
#include <utility>

namespace hearth {

namespace {

// Each missing input as its key and the path as shown: for the built-in data, the package that
// provides it; for a relative path, the folder it starts at.
std::vector<std::pair<std::string, std::string>> missingPaths(const ExperimentConfig& config) {
    namespace fs = std::filesystem;
    std::vector<std::pair<std::string, std::string>> named = {{"data.path", config.data.path}};
    if (config.data.val_path) named.emplace_back("data.val_path", *config.data.val_path);
    if (config.data.test_path) named.emplace_back("data.test_path", *config.data.test_path);
    if (isTextKind(config.data.kind) && config.data.tokenizer) named.emplace_back("data.tokenizer", *config.data.tokenizer);
    if (config.model.pretrained) named.emplace_back("model.pretrained", *config.model.pretrained);
    if (config.model.name == "torchscript" && config.model.path) named.emplace_back("model.path", *config.model.path);
    std::vector<std::pair<std::string, std::string>> missing;
    std::error_code ec;
    for (const auto& [key, path] : named) {
        if (path.empty() || fs::exists(path, ec)) continue;
        const std::string where = path == kDefaultFashionMnistPath ? " (Debian's dataset-fashion-mnist; "
                                                                     "scripts/install-deps installs it)"
                                  : path == kWordNetNouns ? " (Debian's wordnet-base; scripts/install-deps installs it)"
                                  : fs::path(path).is_relative() ? " (relative to " + fs::current_path(ec).string() + ")"
                                                                 : "";
        missing.emplace_back(key, path + where);
    }
    return missing;
}

}  // namespace

std::vector<ConfigIssue> missingInputs(const ExperimentConfig& config) {
    std::vector<ConfigIssue> issues;
    for (const auto& [key, shown] : missingPaths(config)) issues.push_back({key, "no such file or folder: " + shown});
    return issues;
}

std::string missingInputsMessage(const ExperimentConfig& config) {
    const auto missing = missingPaths(config);
    if (missing.empty()) return "";
    std::string text = "these files or folders do not exist:";
    for (const auto& [key, shown] : missing) text.append("\n  ").append(key).append(": ").append(shown);
    return text + "\npoint them at files and folders on this machine (e.g. --set data.path=FILE)";
}

}  // namespace hearth
