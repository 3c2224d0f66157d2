#include "engine/data/IdxDataset.h"

#include "engine/data/DataError.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace hearth {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kFashionClasses = {"T-shirt/top", "Trouser", "Pullover", "Dress",
                                                  "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                                                  "Ankle boot"};
const std::vector<std::string> kDigitClasses = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};

}  // namespace

IdxDataset::IdxDataset(const std::string& images_path, const std::string& labels_path,
                       std::vector<std::string> class_names)
    : images_path_(images_path), class_names_(std::move(class_names)) {
    const IdxFile images = readIdxFile(images_path, 3);
    const IdxFile labels = readIdxFile(labels_path, 1);
    if (images.dims[0] != labels.dims[0])
        throw DataError(images_path + " holds " + std::to_string(images.dims[0]) + " images but " +
                        labels_path + " holds " + std::to_string(labels.dims[0]) + " labels");
    count_ = images.dims[0];
    rows_ = images.dims[1];
    cols_ = images.dims[2];

    labels_ = torch::empty({count_}, torch::kInt64);
    auto* label_out = labels_.data_ptr<int64_t>();
    const auto num_classes = static_cast<int64_t>(class_names_.size());
    for (int64_t i = 0; i < count_; ++i) {
        const int64_t label = labels.payload()[i];
        if (label >= num_classes)
            throw DataError(labels_path + ": label " + std::to_string(label) + " of sample " +
                            std::to_string(i) + " is outside 0.." + std::to_string(num_classes - 1));
        label_out[i] = label;
    }

    images_ = torch::empty({count_, 1, rows_, cols_}, torch::kUInt8);
    const size_t pixels = static_cast<size_t>(count_ * rows_ * cols_);
    std::memcpy(images_.data_ptr<uint8_t>(), images.payload(), pixels);

    // Exact mean and (population) standard deviation of x/255 via a 256-bin histogram.
    std::array<int64_t, 256> histogram{};
    for (size_t i = 0; i < pixels; ++i) ++histogram[images.payload()[i]];
    double mean = 0.0;
    for (int v = 0; v < 256; ++v) mean += static_cast<double>(histogram[v]) * (v / 255.0);
    mean /= static_cast<double>(pixels);
    double var = 0.0;
    for (int v = 0; v < 256; ++v)
        var += static_cast<double>(histogram[v]) * (v / 255.0 - mean) * (v / 255.0 - mean);
    var /= static_cast<double>(pixels);
    setNormalization(mean, std::sqrt(var));
}

std::shared_ptr<IdxDataset> IdxDataset::load(const std::string& folder, Split split) {
    std::error_code ec;
    const fs::file_status status = fs::status(folder, ec);
    if (!fs::exists(status)) throw DataError(folder + ": IDX data folder does not exist");
    if (!fs::is_directory(status))
        throw DataError(folder + ": is a file; IDX data is the folder of the *-idx?-ubyte(.gz) files");
    const std::string prefix = split == Split::Train ? "train" : "t10k";
    auto find = [&](const std::string& name) {
        // Prefer the raw file when both are present: no decompression needed.
        for (const std::string& candidate : {name, name + ".gz"}) {
            const fs::path p = fs::path(folder) / candidate;
            if (fs::is_regular_file(p, ec)) return p.string();
        }
        throw DataError((fs::path(folder) / (name + ".gz")).string() + ": no such file (nor " +
                        name + " without .gz)");
    };
    const std::string images = find(prefix + "-images-idx3-ubyte");
    const std::string labels = find(prefix + "-labels-idx1-ubyte");
    return std::make_shared<IdxDataset>(images, labels, classNamesForFolder(folder));
}

void IdxDataset::setNormalization(double mean, double std) {
    normalization_.mean = mean;
    normalization_.std = std > 0.0 ? std : 1.0;   // an all-constant image set would otherwise divide by zero
}

Sample IdxDataset::get(int64_t index) const {
    if (index < 0 || index >= count_)
        throw std::out_of_range("IdxDataset: index " + std::to_string(index) + " outside 0.." +
                                std::to_string(count_ - 1));
    Sample s;
    s.input = normalization_.apply(images_[index]);
    s.label = labels_.data_ptr<int64_t>()[index];
    return s;
}

Batch IdxDataset::getBatch(const std::vector<int64_t>& indices) const {
    return normalized(getRawBatch(indices));
}

Batch IdxDataset::getRawBatch(const std::vector<int64_t>& indices) const {
    const auto n = static_cast<int64_t>(indices.size());
    for (int64_t i : indices)
        if (i < 0 || i >= count_)
            throw std::out_of_range("IdxDataset: index " + std::to_string(i) + " outside 0.." +
                                    std::to_string(count_ - 1));
    const auto idx = torch::tensor(indices, torch::kInt64).reshape({n});
    Batch batch(images_.index_select(0, idx), labels_.index_select(0, idx), idx);
    batch.raw_input = normalization_;
    return batch;
}

int64_t IdxDataset::label(int64_t index) const {
    if (index < 0 || index >= count_)
        throw std::out_of_range("IdxDataset: index " + std::to_string(index) + " out of range");
    return labels_.data_ptr<int64_t>()[index];
}

bool IdxDataset::isDigitsFolder(const std::string& folder) {
    fs::path p(folder);
    std::string name = p.filename().string();
    if (name.empty()) name = p.parent_path().filename().string();   // "…/mnist/"
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return name.find("mnist") != std::string::npos && name.find("fashion") == std::string::npos;
}

std::vector<std::string> IdxDataset::classNamesForFolder(const std::string& folder) {
    return isDigitsFolder(folder) ? kDigitClasses : kFashionClasses;
}

}  // namespace hearth
