#include "engine/models/SafeTensors.h"

#include "engine/data/DataError.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>
#include <vector>

namespace hearth {

namespace {

constexpr uint64_t kMaxHeader = 100ull * 1024 * 1024;

std::string lastError() {
    return std::error_code(errno, std::generic_category()).message();
}

// A read-only mapping of a whole file, unmapped when the last tensor viewing it goes.
class Mapping {
public:
    explicit Mapping(const std::string& path) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw DataError("safetensors: cannot open '" + path + "': " + lastError());
        struct stat st {};
        if (::fstat(fd, &st) != 0) {
            ::close(fd);
            throw DataError("safetensors: cannot read '" + path + "': " + lastError());
        }
        size_ = static_cast<uint64_t>(st.st_size);
        if (size_ > 0) {
            void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) {
                ::close(fd);
                throw DataError("safetensors: cannot map '" + path + "': " + lastError());
            }
            data_ = static_cast<const uint8_t*>(p);
        }
        ::close(fd);
    }
    ~Mapping() {
        if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    const uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }

private:
    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
};

struct DType {
    torch::ScalarType type;
    int64_t bytes;
};

bool dtypeOf(const std::string& name, DType& out) {
    static const std::map<std::string, DType> known{
        {"F64", {torch::kFloat64, 8}}, {"F32", {torch::kFloat32, 4}}, {"F16", {torch::kFloat16, 2}},
        {"BF16", {torch::kBFloat16, 2}}, {"I64", {torch::kInt64, 8}}, {"I32", {torch::kInt32, 4}},
        {"I16", {torch::kInt16, 2}}, {"I8", {torch::kInt8, 1}}, {"U8", {torch::kUInt8, 1}},
        {"BOOL", {torch::kBool, 1}}};
    const auto it = known.find(name);
    if (it == known.end()) return false;
    out = it->second;
    return true;
}

struct Entry {
    std::string name;
    DType dtype{};
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;
};

}  // namespace

std::map<std::string, torch::Tensor> readSafeTensors(const std::string& path) {
    auto mapping = std::make_shared<Mapping>(path);
    const auto fail = [&](const std::string& what) { return DataError("safetensors: '" + path + "': " + what); };
    if (mapping->size() < 8) throw fail("too short for a safetensors file (" + std::to_string(mapping->size()) + " bytes)");
    uint64_t header = 0;
    for (int i = 7; i >= 0; --i) header = (header << 8) | mapping->data()[i];
    if (header > kMaxHeader) throw fail("its header claims " + std::to_string(header) + " bytes (the limit is 100 MB)");
    if (header > mapping->size() - 8) {
        throw fail("its header claims " + std::to_string(header) + " bytes but the file has only " +
                   std::to_string(mapping->size() - 8) + " after the length");
    }
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(mapping->data() + 8, mapping->data() + 8 + header);
    } catch (const nlohmann::json::exception& e) {
        throw fail(std::string("its header is not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw fail("its header is not a JSON object");
    const uint64_t data_size = mapping->size() - 8 - header;
    std::vector<Entry> entries;
    for (const auto& [name, v] : j.items()) {
        if (name == "__metadata__") continue;
        Entry e;
        e.name = name;
        if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets") ||
            !v["dtype"].is_string() || !v["shape"].is_array() || !v["data_offsets"].is_array() ||
            v["data_offsets"].size() != 2) {
            throw fail("tensor '" + name + "' needs dtype, shape and data_offsets [begin, end]");
        }
        if (!dtypeOf(v["dtype"].get<std::string>(), e.dtype)) {
            throw fail("tensor '" + name + "' has dtype " + v["dtype"].get<std::string>() +
                       ", which Hearth cannot read (F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)");
        }
        uint64_t numel = 1;
        for (const auto& d : v["shape"]) {
            if (!d.is_number_unsigned()) throw fail("tensor '" + name + "' has a shape that is not a list of sizes");
            const uint64_t size = d.get<uint64_t>();
            if (size > 0 && numel > (uint64_t{1} << 62) / size) throw fail("tensor '" + name + "' is impossibly large");
            numel *= size;
            e.shape.push_back(static_cast<int64_t>(size));
        }
        for (const auto& o : v["data_offsets"])
            if (!o.is_number_unsigned()) throw fail("tensor '" + name + "' has offsets that are not byte positions");
        e.begin = v["data_offsets"][0].get<uint64_t>();
        e.end = v["data_offsets"][1].get<uint64_t>();
        if (e.begin > e.end || e.end > data_size) {
            throw fail("tensor '" + name + "' claims bytes " + std::to_string(e.begin) + ".." + std::to_string(e.end) +
                       " but the data section has " + std::to_string(data_size));
        }
        if (e.end - e.begin != numel * static_cast<uint64_t>(e.dtype.bytes)) {
            throw fail("tensor '" + name + "' has " + std::to_string(e.end - e.begin) + " bytes for " +
                       std::to_string(numel) + " elements of " + v["dtype"].get<std::string>());
        }
        entries.push_back(std::move(e));
    }
    // The tensors tile the data section: in offset order, each starts where the last ended.
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
    uint64_t at = 0;
    for (const auto& e : entries) {
        if (e.begin != at) {
            throw fail("tensor '" + e.name + "' starts at byte " + std::to_string(e.begin) + " but the previous one ends at " +
                       std::to_string(at) + (e.begin < at ? " (overlap)" : " (gap)"));
        }
        at = e.end;
    }
    if (at != data_size) throw fail(std::to_string(data_size - at) + " bytes after the last tensor");
    std::map<std::string, torch::Tensor> out;
    const uint8_t* base = mapping->data() + 8 + header;
    for (const auto& e : entries) {
        const uint8_t* p = base + e.begin;
        const auto options = torch::TensorOptions().dtype(e.dtype.type);
        if (reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(e.dtype.bytes) == 0) {
            // A view of the mapping (read-only pages: clone before writing to it).
            out[e.name] = torch::from_blob(const_cast<uint8_t*>(p), e.shape, [mapping](void*) {}, options);
        } else {
            auto t = torch::empty(e.shape, options);
            std::memcpy(t.data_ptr(), p, e.end - e.begin);
            out[e.name] = t;
        }
    }
    return out;
}

std::map<std::string, torch::Tensor> readSafeTensorsFolder(const std::string& folder) {
    namespace fs = std::filesystem;
    const fs::path dir(folder);
    if (fs::exists(dir / "model.safetensors")) return readSafeTensors((dir / "model.safetensors").string());
    const fs::path index = dir / "model.safetensors.index.json";
    if (!fs::exists(index)) {
        throw DataError("safetensors: '" + folder + "' has neither model.safetensors nor model.safetensors.index.json");
    }
    nlohmann::json j;
    try {
        std::ifstream in(index);
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw DataError("safetensors: '" + index.string() + "' is not valid JSON: " + e.what());
    }
    if (!j.contains("weight_map") || !j["weight_map"].is_object()) {
        throw DataError("safetensors: '" + index.string() + "' has no weight_map");
    }
    std::map<std::string, std::vector<std::string>> by_file;
    for (const auto& [name, file] : j["weight_map"].items()) {
        if (!file.is_string()) throw DataError("safetensors: '" + index.string() + "': the file of '" + name + "' is not a name");
        by_file[file.get<std::string>()].push_back(name);
    }
    std::map<std::string, torch::Tensor> out;
    for (const auto& [file, names] : by_file) {
        auto shard = readSafeTensors((dir / file).string());
        for (const auto& name : names) {
            const auto it = shard.find(name);
            if (it == shard.end()) {
                std::string message = "safetensors: '" + index.string() + "' puts '";
                message += name;
                message += "' in ";
                message += file;
                message += ", which does not hold it";
                throw DataError(message);
            }
            out[name] = it->second;
        }
    }
    return out;
}

}  // namespace hearth
