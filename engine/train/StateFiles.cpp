#include "engine/train/StateFiles.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>

namespace hearth {

namespace fs = std::filesystem;

int64_t trainingStateStep(const std::string& path) {
    static const std::regex pattern(R"(state-([0-9]{1,18})\.pt)");
    std::smatch m;
    const std::string name = fs::path(path).filename().string();
    if (!std::regex_match(name, m, pattern)) return -1;
    return std::stoll(m[1].str());
}

std::string trainingStateFileName(int64_t global_step) {
    char name[40];
    std::snprintf(name, sizeof name, "state-%09lld.pt", static_cast<long long>(global_step));
    return name;
}

std::vector<std::string> trainingStatesIn(const std::string& directory) {
    std::vector<std::pair<int64_t, std::string>> found;
    std::error_code ec;
    if (directory.empty() || !fs::is_directory(directory, ec)) return {};
    for (const auto& entry : fs::directory_iterator(directory, ec)) {
        const int64_t step = trainingStateStep(entry.path().string());
        if (step >= 0 && entry.is_regular_file(ec)) found.emplace_back(step, entry.path().string());
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string> paths;
    paths.reserve(found.size());
    for (auto& f : found) paths.push_back(std::move(f.second));
    return paths;
}

std::vector<std::string> removeTrainingStates(const std::string& directory) {
    std::vector<std::string> removed;
    for (const auto& path : trainingStatesIn(directory)) {
        std::error_code ec;
        if (fs::remove(path, ec)) removed.push_back(path);
    }
    return removed;
}

}  // namespace hearth
