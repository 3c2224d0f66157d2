#include "engine/config/RunName.h"

#include <algorithm>
#include <filesystem>

namespace hearth {

std::string defaultRunName(const ExperimentConfig& config) {
    const ExperimentConfig builtIn;
    if (config.data.kind == builtIn.data.kind && config.data.path == builtIn.data.path &&
        config.model.name == builtIn.model.name)
        return builtIn.name;
    std::string data = config.data.kind;
    if (config.data.kind != "wordnet") {
        // idx, image_folder: the folder's name; a file: its name without the extension.
        const std::filesystem::path path(config.data.path);
        const std::filesystem::path named = path.has_filename() ? path : path.parent_path();
        const std::string stem = isImageKind(config.data.kind) ? named.filename().string() : named.stem().string();
        if (!stem.empty()) data = stem;
    }
    return data + "-" + config.model.name;
}

void nameAfterDataAndModel(ExperimentConfig& config) {
    config.name = oneLine(config.name);
    if (config.name.empty() || config.name == ExperimentConfig{}.name) config.name = defaultRunName(config);
}

std::string oneLine(std::string_view text) {
    std::string out(text);
    // Bytes below 0x20 and DEL are control characters in UTF-8 too (never part of a multi-byte one).
    std::replace_if(out.begin(), out.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; },
                    ' ');
    const auto first = out.find_first_not_of(' ');
    if (first == std::string::npos) return {};
    return out.substr(first, out.find_last_not_of(' ') - first + 1);
}

std::vector<std::string> tagsFromWords(const std::vector<std::string>& words) {
    std::vector<std::string> tags;
    for (const auto& word : words) {
        size_t start = 0;
        while (start <= word.size()) {
            const size_t end = std::min(word.find(',', start), word.size());
            std::string tag = oneLine(std::string_view(word).substr(start, end - start));
            if (!tag.empty() && std::find(tags.begin(), tags.end(), tag) == tags.end()) tags.push_back(std::move(tag));
            start = end + 1;
        }
    }
    return tags;
}

}  // namespace hearth
