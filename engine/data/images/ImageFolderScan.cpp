#include "engine/data/images/ImageFolderScan.h"

#include "engine/data/DataError.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

namespace hearth {
namespace {

namespace fs = std::filesystem;

bool isImageName(const fs::path& p) {
    std::string ext = p.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

bool hidden(const fs::path& p) { return !p.filename().empty() && p.filename().string()[0] == '.'; }

std::vector<std::string> subfolders(const fs::path& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (!hidden(entry.path()) && entry.is_directory(ec)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// Files of one class folder (recursively, like torchvision), sorted; counts the others.
std::vector<std::string> imagesIn(const fs::path& dir, int64_t& ignored) {
    std::vector<std::string> files;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::follow_directory_symlink, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) break;
        if (hidden(it->path())) {
            if (it->is_directory(ec)) it.disable_recursion_pending();
            continue;
        }
        if (!it->is_regular_file(ec)) continue;
        if (isImageName(it->path())) files.push_back(it->path().string());
        else ++ignored;
    }
    if (ec) throw DataError(dir.string() + ": cannot be listed (" + ec.message() + ")");
    std::sort(files.begin(), files.end());
    return files;
}

std::vector<ImageFile> scanSplit(const fs::path& dir, const std::vector<std::string>& classes, bool require_all,
                                 int64_t& ignored) {
    std::map<std::string, int64_t> label_of;
    for (size_t i = 0; i < classes.size(); ++i) label_of[classes[i]] = static_cast<int64_t>(i);
    std::vector<ImageFile> files;
    for (const std::string& name : subfolders(dir)) {
        const auto label = label_of.find(name);
        if (label == label_of.end())
            throw DataError((dir / name).string() + ": a class folder the training folder lacks (its classes: " +
                            std::to_string(classes.size()) + ", from " + classes.front() + " to " + classes.back() + ")");
        const auto paths = imagesIn(dir / name, ignored);
        if (paths.empty() && require_all)
            throw DataError((dir / name).string() + ": no .jpg, .jpeg or .png files in this class folder");
        for (const auto& p : paths) files.push_back({p, label->second});
    }
    return files;
}

}  // namespace

ImageFolderLayout scanImageFolder(const std::string& root) {
    std::error_code ec;
    if (!fs::is_directory(root, ec))
        throw DataError(root + ": " + (fs::exists(root, ec) ? "not a folder" : "no such folder") +
                        " (data.kind image_folder reads ROOT/<class>/<image>.jpg or ROOT/train/<class>/...)");
    ImageFolderLayout layout;
    layout.root = root;
    std::vector<std::string> top = subfolders(root);
    const bool has_train = std::find(top.begin(), top.end(), "train") != top.end();
    const fs::path train_dir = has_train ? fs::path(root) / "train" : fs::path(root);
    layout.split_folders = has_train;
    layout.class_names = subfolders(train_dir);
    if (layout.class_names.empty())
        throw DataError(train_dir.string() + ": no class subfolders (expected " + train_dir.string() +
                        "/<class>/<image>.jpg, one folder per class)");
    if (layout.class_names.size() < 2)
        throw DataError(train_dir.string() + ": only one class folder (" + layout.class_names.front() +
                        "); a classifier needs at least two");
    layout.train = scanSplit(train_dir, layout.class_names, true, layout.ignored_files);
    if (has_train) {
        for (const std::string& name : top)
            if (name != "train" && name != "val" && name != "test")
                throw DataError((fs::path(root) / name).string() +
                                ": next to train/ only val/ and test/ are read; move this folder or rename it");
        if (fs::is_directory(fs::path(root) / "val", ec))
            layout.val = scanSplit(fs::path(root) / "val", layout.class_names, false, layout.ignored_files);
        if (fs::is_directory(fs::path(root) / "test", ec))
            layout.test = scanSplit(fs::path(root) / "test", layout.class_names, false, layout.ignored_files);
    }
    return layout;
}

bool looksLikeImageFolder(const std::string& folder) {
    std::error_code ec;
    fs::path dir(folder);
    if (!fs::is_directory(dir, ec)) return false;
    if (fs::is_directory(dir / "train", ec)) dir /= "train";
    for (const std::string& name : subfolders(dir))
        for (const auto& entry : fs::directory_iterator(dir / name, ec))
            if (entry.is_regular_file(ec) && isImageName(entry.path())) return true;
    return false;
}

const std::vector<ImageFile>& sourceFilesOf(const ImageFolderLayout& layout, bool test) {
    if (test && !layout.test.empty()) return layout.test;
    if (!test && !layout.val.empty()) return layout.val;
    return layout.train;
}

}  // namespace hearth
