#include "engine/weights/SafeTensors.h"

#include "engine/data/DataError.h"
#include "engine/weights/SafeTensorsHeader.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <system_error>
#include <vector>

namespace hearth {

namespace {

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

torch::ScalarType scalarType(const std::string& dtype) {
    static const std::map<std::string, torch::ScalarType> types{
        {"F64", torch::kFloat64}, {"F32", torch::kFloat32}, {"F16", torch::kFloat16}, {"BF16", torch::kBFloat16},
        {"I64", torch::kInt64},   {"I32", torch::kInt32},   {"I16", torch::kInt16},   {"I8", torch::kInt8},
        {"U8", torch::kUInt8},    {"BOOL", torch::kBool}};
    return types.at(dtype);   // parseSafeTensorsHeader accepted only these
}

}  // namespace

std::map<std::string, torch::Tensor> readSafeTensors(const std::string& path) {
    auto mapping = std::make_shared<Mapping>(path);
    const SafeTensorsLayout layout = parseSafeTensorsHeader(mapping->data(), mapping->size(), path);
    std::map<std::string, torch::Tensor> out;
    const uint8_t* base = mapping->data() + layout.data_offset;
    for (const auto& e : layout.entries) {
        const uint8_t* p = base + e.begin;
        const auto options = torch::TensorOptions().dtype(scalarType(e.dtype));
        if (reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(e.element_bytes) == 0) {
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
