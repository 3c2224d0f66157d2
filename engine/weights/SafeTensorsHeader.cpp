#include "engine/weights/SafeTensorsHeader.h"

#include "engine/data/DataError.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace hearth {
namespace {

constexpr uint64_t kMaxHeader = 100ull * 1024 * 1024;

int64_t elementBytes(const std::string& dtype) {
    static const std::map<std::string, int64_t> known{{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
                                                      {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1}};
    const auto it = known.find(dtype);
    return it == known.end() ? 0 : it->second;
}

}  // namespace

SafeTensorsLayout parseSafeTensorsHeader(const uint8_t* data, uint64_t size, const std::string& path) {
    const auto fail = [&](const std::string& what) { return DataError("safetensors: '" + path + "': " + what); };
    if (size < 8) throw fail("too short for a safetensors file (" + std::to_string(size) + " bytes)");
    uint64_t header = 0;
    for (int i = 7; i >= 0; --i) header = (header << 8) | data[i];
    if (header > kMaxHeader) throw fail("its header claims " + std::to_string(header) + " bytes (the limit is 100 MB)");
    if (header > size - 8) {
        throw fail("its header claims " + std::to_string(header) + " bytes but the file has only " +
                   std::to_string(size - 8) + " after the length");
    }
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(data + 8, data + 8 + header);
    } catch (const nlohmann::json::exception& e) {
        throw fail(std::string("its header is not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw fail("its header is not a JSON object");
    SafeTensorsLayout layout;
    layout.data_offset = 8 + header;
    const uint64_t data_size = size - 8 - header;
    for (const auto& [name, v] : j.items()) {
        if (name == "__metadata__") continue;
        SafeTensorsEntry e;
        e.name = name;
        if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets") ||
            !v["dtype"].is_string() || !v["shape"].is_array() || !v["data_offsets"].is_array() ||
            v["data_offsets"].size() != 2) {
            throw fail("tensor '" + name + "' needs dtype, shape and data_offsets [begin, end]");
        }
        e.dtype = v["dtype"].get<std::string>();
        e.element_bytes = elementBytes(e.dtype);
        if (e.element_bytes == 0) {
            throw fail("tensor '" + name + "' has dtype " + e.dtype +
                       ", which Hearth cannot read (F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)");
        }
        uint64_t numel = 1;
        for (const auto& d : v["shape"]) {
            if (!d.is_number_unsigned()) throw fail("tensor '" + name + "' has a shape that is not a list of sizes");
            const uint64_t dim = d.get<uint64_t>();
            if (dim > (uint64_t{1} << 62) || (dim > 0 && numel > (uint64_t{1} << 62) / dim))
                throw fail("tensor '" + name + "' is impossibly large");
            numel *= dim;
            e.shape.push_back(static_cast<int64_t>(dim));
        }
        for (const auto& o : v["data_offsets"])
            if (!o.is_number_unsigned()) throw fail("tensor '" + name + "' has offsets that are not byte positions");
        e.begin = v["data_offsets"][0].get<uint64_t>();
        e.end = v["data_offsets"][1].get<uint64_t>();
        if (e.begin > e.end || e.end > data_size) {
            throw fail("tensor '" + name + "' claims bytes " + std::to_string(e.begin) + ".." + std::to_string(e.end) +
                       " but the data section has " + std::to_string(data_size));
        }
        if (numel > data_size || e.end - e.begin != numel * static_cast<uint64_t>(e.element_bytes)) {
            throw fail("tensor '" + name + "' has " + std::to_string(e.end - e.begin) + " bytes for " +
                       std::to_string(numel) + " elements of " + e.dtype);
        }
        layout.entries.push_back(std::move(e));
    }
    // The tensors tile the data section: in offset order, each starts where the last ended.
    std::sort(layout.entries.begin(), layout.entries.end(),
              [](const SafeTensorsEntry& a, const SafeTensorsEntry& b) { return a.begin < b.begin; });
    uint64_t at = 0;
    for (const auto& e : layout.entries) {
        if (e.begin != at) {
            throw fail("tensor '" + e.name + "' starts at byte " + std::to_string(e.begin) + " but the previous one ends at " +
                       std::to_string(at) + (e.begin < at ? " (overlap)" : " (gap)"));
        }
        at = e.end;
    }
    if (at != data_size) throw fail(std::to_string(data_size - at) + " bytes after the last tensor");
    return layout;
}

}  // namespace hearth
