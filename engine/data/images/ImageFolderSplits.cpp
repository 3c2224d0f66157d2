#include "engine/data/images/ImageFolderSplits.h"

#include "engine/config/ByteSize.h"
#include "engine/data/DataError.h"
#include "engine/data/SplitPlan.h"
#include "engine/data/images/DecodedImages.h"
#include "engine/data/images/ImageDecode.h"
#include "engine/data/images/ImageFolderDataset.h"
#include "engine/data/images/ImageFolderScan.h"
#include "engine/monitor/Elapsed.h"

#include <atomic>
#include <cstdio>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>

namespace hearth {
namespace {

namespace fs = std::filesystem;

std::string seconds(double s) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", s);
    return text;
}

std::vector<std::string> pathsOf(const std::vector<ImageFile>& files) {
    std::vector<std::string> paths;
    paths.reserve(files.size());
    for (const auto& f : files) paths.push_back(f.path);
    return paths;
}

struct HeaderScan {
    bool any_colour = false;
    std::vector<BadImage> bad;
};

// Every file's header, on all cores: what is colour, and what is no image at all.
HeaderScan scanHeaders(const std::vector<ImageFile>& files) {
    HeaderScan scan;
    std::atomic<bool> colour{false};
    std::mutex m;
    parallelForEach(static_cast<int64_t>(files.size()), [&](int64_t i) {
        const std::string& path = files[static_cast<size_t>(i)].path;
        try {
            if (readImageHeader(readImageFile(path), path).colour) colour.store(true);
        } catch (const DataError& e) {
            std::lock_guard<std::mutex> lock(m);
            scan.bad.push_back({i, e.what()});
        }
    });
    scan.any_colour = colour.load();
    std::sort(scan.bad.begin(), scan.bad.end(), [](const BadImage& a, const BadImage& b) { return a.index < b.index; });
    return scan;
}

// One list of files (a split folder, or the one folder splits are carved from).
struct FileList {
    std::string name;   // "train", "val", "test"
    std::vector<ImageFile> files;
    std::shared_ptr<DecodedImages> images;
    std::vector<BadImage> bad;
    std::shared_ptr<const ImageFolderDataset> dataset;
};

std::string badList(const std::vector<BadImage>& bad, size_t show) {
    std::string text;
    for (size_t i = 0; i < bad.size() && i < show; ++i) text += "\n  " + bad[i].message;
    if (bad.size() > show) text += "\n  ... and " + std::to_string(bad.size() - show) + " more";
    return text;
}

std::string unreadable(const FileList& list, const std::string& root) {
    if (list.bad.size() == 1) return list.bad.front().message + " (data.on_bad_file=skip leaves it out)";
    return std::to_string(list.bad.size()) + " unreadable image files in " + root +
           " (data.on_bad_file=skip leaves them out):" + badList(list.bad, 10);
}

}  // namespace

PixelNormalization imageNetNormalization(int channels) {
    PixelNormalization n;
    if (channels == 3) {
        n.channel_mean = {0.485, 0.456, 0.406};
        n.channel_std = {0.229, 0.224, 0.225};
    } else {
        n.mean = 0.449;   // the means of ImageNet's three channels (timm's choice for one channel)
        n.std = 0.226;
    }
    return n;
}

DataSplits loadImageFolderSplits(const DataConfig& config, uint64_t seed, const ImageFolderSplitOptions& options) {
    const auto log = [&](const std::string& line) { if (options.log) options.log(line); };
    const bool skip = config.on_bad_file == "skip";
    const auto start = std::chrono::steady_clock::now();
    ImageFolderLayout layout = scanImageFolder(config.path);

    std::vector<FileList> lists;
    lists.push_back({"train", std::move(layout.train), nullptr, {}, nullptr});
    if (!layout.val.empty()) lists.push_back({"val", std::move(layout.val), nullptr, {}, nullptr});
    if (!layout.test.empty()) lists.push_back({"test", std::move(layout.test), nullptr, {}, nullptr});

    // Headers first: cheap, and they decide the channels.
    bool colour = false;
    for (auto& list : lists) {
        HeaderScan scan = scanHeaders(list.files);
        if (list.name == "train") colour = scan.any_colour;
        list.bad = std::move(scan.bad);
    }
    const int channels = colour ? 3 : 1;
    int64_t total = 0;
    for (const auto& list : lists) total += static_cast<int64_t>(list.files.size());
    log("image folder " + config.path + ": " + std::to_string(total) + " files listed and their headers read in " +
        seconds(secondsSince(start)) + " s; decoded as " + (colour ? "RGB" : "grayscale") + " " +
        std::to_string(config.image_size) + "x" + std::to_string(config.image_size));

    std::vector<std::string> notes;
    for (auto& list : lists) {
        list.images = std::make_shared<DecodedImages>(pathsOf(list.files), channels, config.image_size);
        if (!list.bad.empty() && !skip)
            throw DataError(unreadable(list, config.path));
        std::vector<BadImage> decoded_bad;
        if (config.cache_decoded) {
            if (options.cache_dir.empty())
                throw ConfigError("data.cache_decoded", "no cache folder: set HEARTH_CACHE_DIR, XDG_CACHE_HOME or HOME");
            const auto t = std::chrono::steady_clock::now();
            bool built = false;
            decoded_bad = list.images->useCache(options.cache_dir, built);
            const auto bytes = static_cast<int64_t>(list.files.size()) * channels * config.image_size * config.image_size;
            log(std::string(built ? "decoded cache built: " : "decoded cache read: ") + std::to_string(list.files.size()) +
                " " + list.name + " images (" + formatBytes(bytes) + ") in " +
                seconds(secondsSince(t)) + " s, " + list.images->cachePath());
        } else if (skip) {
            const auto t = std::chrono::steady_clock::now();
            decoded_bad = list.images->checkAll();
            log("checked every " + list.name + " image by decoding it (data.on_bad_file=skip) in " +
                seconds(secondsSince(t)) + " s");
        }
        // A file whose header read but whose pixels do not decode.
        std::set<int64_t> known;
        for (const auto& b : list.bad) known.insert(b.index);
        for (auto& b : decoded_bad)
            if (!known.count(b.index)) list.bad.push_back(std::move(b));
        std::sort(list.bad.begin(), list.bad.end(), [](const BadImage& a, const BadImage& b) { return a.index < b.index; });
        if (!list.bad.empty() && !skip)
            throw DataError(unreadable(list, config.path));
        if (!list.bad.empty())
            notes.push_back("data.on_bad_file=skip: left out " + std::to_string(list.bad.size()) + " unreadable " +
                            list.name + " file(s) of " + std::to_string(list.files.size()) + ":" + badList(list.bad, 20));
    }

    auto keepOf = [](const FileList& list) {
        std::set<int64_t> bad;
        for (const auto& b : list.bad) bad.insert(b.index);
        std::vector<int64_t> keep;
        for (int64_t i = 0; i < static_cast<int64_t>(list.files.size()); ++i)
            if (!bad.count(i)) keep.push_back(i);
        return keep;
    };
    if (keepOf(lists.front()).empty()) throw DataError(config.path + ": no readable training image");
    const PixelNormalization norm = imageNetNormalization(channels);
    for (auto& list : lists)
        list.dataset = std::make_shared<ImageFolderDataset>(list.images, list.files, keepOf(list), layout.class_names, norm);

    const FileList* val = nullptr;
    const FileList* test = nullptr;
    for (const auto& list : lists) {
        if (list.name == "val") val = &list;
        if (list.name == "test") test = &list;
    }
    auto sizeOf = [](const FileList* l) { return l ? std::optional<int64_t>(l->dataset->size()) : std::nullopt; };
    SplitIndices s = planFileSplits(lists.front().dataset->size(), sizeOf(val), sizeOf(test), config, seed, config.path);
    DataSplits splits;
    splits.train = sortedSubset(lists.front().dataset, std::move(s.train));
    splits.val = sortedSubset(val ? val->dataset : lists.front().dataset, std::move(s.val));
    splits.test = sortedSubset(test ? test->dataset : lists.front().dataset, std::move(s.test));
    splits.class_names = layout.class_names;
    splits.is_image = true;
    splits.normalization.scaling = norm.channel_mean.empty() ? FeatureScaling{{norm.mean}, {norm.std}}
                                                             : FeatureScaling{norm.channel_mean, norm.channel_std};
    splits.notes = std::move(notes);
    if (layout.ignored_files > 0)
        splits.notes.push_back(std::to_string(layout.ignored_files) + " file(s) in the class folders are not .jpg, "
                               ".jpeg or .png and were not read");
    const std::string name = fs::path(config.path).filename().empty() ? fs::path(config.path).parent_path().filename().string()
                                                                      : fs::path(config.path).filename().string();
    splits.description = "image folder " + name + " " + countsText(splits) + ", " + std::to_string(channels) + "x" +
                         std::to_string(config.image_size) + "x" + std::to_string(config.image_size) + ", " +
                         std::to_string(splits.class_names.size()) + " classes";
    return splits;
}

}  // namespace hearth
