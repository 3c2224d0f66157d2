#include "engine/config/KeyNames.h"

#include "engine/config/ConfigSchema.h"

#include <algorithm>
#include <cctype>

namespace hearth {
namespace {

// A name as words joined by '_', lower case: "Learning rate" and "learning-rate" are "learning_rate".
std::string asWords(const std::string& text) {
    std::string words;
    for (const char ch : text) {
        if (std::isalnum(static_cast<unsigned char>(ch)))
            words += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        else if (!words.empty() && words.back() != '_')
            words += '_';
    }
    while (!words.empty() && words.back() == '_') words.pop_back();
    return words;
}

void addOnce(std::vector<std::string>& names, const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

}  // namespace

std::vector<std::string> configChildNames(const std::string& prefix) {
    std::vector<std::string> names;
    for (const auto& k : configSchema()) {
        if (!prefix.empty() && k.key.rfind(prefix + ".", 0) != 0) continue;
        const std::string rest = prefix.empty() ? k.key : k.key.substr(prefix.size() + 1);
        addOnce(names, rest.substr(0, rest.find('.')));
    }
    return names;
}

std::vector<std::string> configKeysAndGroups() {
    std::vector<std::string> names;
    for (const auto& k : configSchema()) {
        for (size_t dot = k.key.find('.'); dot != std::string::npos; dot = k.key.find('.', dot + 1))
            addOnce(names, k.key.substr(0, dot));
        names.push_back(k.key);
    }
    return names;
}

std::vector<std::string> configKeysCalled(const std::string& word) {
    const std::string wanted = asWords(word);
    std::vector<std::string> keys;
    if (wanted.empty()) return keys;
    for (const auto& k : configSchema())
        if (asWords(k.key.substr(k.key.rfind('.') + 1)) == wanted || asWords(k.label) == wanted) keys.push_back(k.key);
    return keys;
}

}  // namespace hearth
