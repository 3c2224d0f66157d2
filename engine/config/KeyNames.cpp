#include "engine/config/KeyNames.h"

#include "engine/config/ConfigSchema.h"
#include "engine/config/Spelling.h"

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

// "lr" of "optimizer.lr".
std::string ownName(const std::string& key) { return key.substr(key.rfind('.') + 1); }

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
        if (asWords(ownName(k.key)) == wanted || asWords(k.label) == wanted) keys.push_back(k.key);
    return keys;
}

std::vector<std::string> configKeysMeant(const std::string& word, const std::vector<std::string>& here,
                                         const std::string& group) {
    std::vector<std::string> meant = likelyMeant(word, here);
    for (const auto& key : configKeysCalled(word)) {
        const bool named_here = key.rfind(group, 0) == 0 &&
                                std::find(meant.begin(), meant.end(), key.substr(group.size())) != meant.end();
        if (!named_here) meant.push_back(key);
    }
    if (!meant.empty()) return meant;
    std::vector<std::string> own_names;
    for (const auto& k : configSchema()) own_names.push_back(ownName(k.key));
    for (const auto& close : likelyMeant(word, own_names))
        for (const auto& k : configSchema())
            if (ownName(k.key) == close) meant.push_back(k.key);
    return meant;
}

}  // namespace hearth
