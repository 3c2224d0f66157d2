#include "engine/data/IdxDataset.h"

#include "engine/data/DataError.h"

#include <zlib.h>

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

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The whole (decompressed) content of a file. zlib reads raw files transparently; a gzip stream
// that ends early keeps what was decoded so the size check can say how much arrived.
struct FileContent {
    std::vector<uint8_t> bytes;
    bool gzip = false;
    bool stream_truncated = false;
};

FileContent readContent(const std::string& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        throw DataError(path + ": no such file");
    gzFile file = gzopen(path.c_str(), "rb");
    if (!file) throw DataError(path + ": cannot open: " + std::generic_category().message(errno));
    gzbuffer(file, 1 << 18);
    FileContent content;
    const auto file_size = static_cast<size_t>(fs::file_size(path, ec));
    content.bytes.reserve(endsWith(path, ".gz") ? file_size * 2 : file_size);
    constexpr unsigned kChunk = 1u << 20;
    while (true) {
        const size_t old = content.bytes.size();
        content.bytes.resize(old + kChunk);
        const int got = gzread(file, content.bytes.data() + old, kChunk);
        content.bytes.resize(old + static_cast<size_t>(std::max(got, 0)));
        if (got <= 0) break;
    }
    int errnum = Z_OK;
    const char* message = gzerror(file, &errnum);
    const std::string zlib_message = message ? message : "";
    content.gzip = gzdirect(file) == 0;
    gzclose(file);
    if (errnum == Z_BUF_ERROR) {
        content.stream_truncated = true;
    } else if (errnum != Z_OK) {
        throw DataError(path + ": cannot decompress (zlib: " + zlib_message + ")");
    }
    return content;
}

uint32_t bigEndian32(const uint8_t* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string hex32(uint32_t value) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", value);
    return buf;
}

// "10000 images of 28x28" / "10000 labels": what the header promises, in the user's words.
std::string promise(const std::vector<int64_t>& dims) {
    if (dims.size() == 1) return std::to_string(dims[0]) + " labels";
    std::string text = std::to_string(dims[0]) + (dims.size() == 3 ? " images of " : " items of ");
    for (size_t i = 1; i < dims.size(); ++i) text += (i > 1 ? "x" : "") + std::to_string(dims[i]);
    return text;
}

}  // namespace

IdxFile readIdxFile(const std::string& path, int expected_rank) {
    FileContent content = readContent(path);
    const std::string holds = std::to_string(content.bytes.size()) + " bytes" +
                              (content.gzip ? " (decompressed)" : "");
    if (content.bytes.size() < 4)
        throw DataError(path + ": truncated: the file holds " + holds +
                        ", too few for an IDX header");
    const uint32_t magic = bigEndian32(content.bytes.data());
    const uint32_t expected_magic = 0x00000800u | static_cast<uint32_t>(expected_rank);
    if (magic != expected_magic)
        throw DataError(path + ": bad magic number " + hex32(magic) + ", expected " +
                        hex32(expected_magic) + " (IDX " +
                        (expected_rank == 1 ? "labels" : "images") + " of unsigned bytes)");
    IdxFile idx;
    idx.header_size = 4 + 4 * static_cast<size_t>(expected_rank);
    if (content.bytes.size() < idx.header_size)
        throw DataError(path + ": truncated: the file holds " + holds + ", the IDX header needs " +
                        std::to_string(idx.header_size));
    int64_t payload = 1;
    for (int d = 0; d < expected_rank; ++d) {
        const int64_t dim = bigEndian32(content.bytes.data() + 4 + 4 * static_cast<std::ptrdiff_t>(d));
        if (dim <= 0 || dim > (int64_t{1} << 31) || (d > 0 && dim > 65536))
            throw DataError(path + ": implausible dimension " + std::to_string(dim) + " in the header");
        idx.dims.push_back(dim);
        payload *= dim;
    }
    const auto expected = static_cast<int64_t>(idx.header_size) + payload;
    const auto actual = static_cast<int64_t>(content.bytes.size());
    if (actual < expected || content.stream_truncated)
        throw DataError(path + ": truncated: header promises " + promise(idx.dims) + " (" +
                        std::to_string(expected) + " bytes) but the file holds " + holds +
                        (content.stream_truncated ? "; the gzip stream ends early" : ""));
    if (actual > expected)
        throw DataError(path + ": header promises " + promise(idx.dims) + " (" +
                        std::to_string(expected) + " bytes) but the file holds " + holds);
    idx.bytes = std::move(content.bytes);
    return idx;
}

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
    if (!fs::is_directory(folder, ec))
        throw DataError(folder + ": IDX data folder does not exist");
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
    mean_ = mean;
    std_ = std > 0.0 ? std : 1.0;   // an all-constant image set would otherwise divide by zero
}

Sample IdxDataset::get(int64_t index) const {
    if (index < 0 || index >= count_)
        throw std::out_of_range("IdxDataset: index " + std::to_string(index) + " outside 0.." +
                                std::to_string(count_ - 1));
    Sample s;
    s.input = images_[index].to(torch::kFloat32).div_(255.0).sub_(mean_).div_(std_);
    s.label = labels_.data_ptr<int64_t>()[index];
    return s;
}

Batch IdxDataset::getBatch(const std::vector<int64_t>& indices) const {
    const auto n = static_cast<int64_t>(indices.size());
    for (int64_t i : indices)
        if (i < 0 || i >= count_)
            throw std::out_of_range("IdxDataset: index " + std::to_string(i) + " outside 0.." +
                                    std::to_string(count_ - 1));
    const auto idx = torch::tensor(indices, torch::kInt64).reshape({n});
    auto images = images_.index_select(0, idx).to(torch::kFloat32).div_(255.0).sub_(mean_).div_(std_);
    return Batch(std::move(images), labels_.index_select(0, idx), idx);
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
