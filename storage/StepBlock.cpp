#include "storage/StepBlock.h"

#include "engine/events/EventFields.h"

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace hearth::stepblock {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "step blocks are stored little-endian; add byte swapping for big-endian hosts");

// Where each stored field of a step sits, as a byte offset into StepMetrics: a block is read
// a million rows at a time, so the table is resolved once instead of per value.
const std::vector<size_t>& slotOffsets() {
    static const std::vector<size_t> offsets = [] {
        std::vector<size_t> out;
        StepMetrics probe;
        const auto* base = reinterpret_cast<const char*>(&probe);
        for (const auto* f : fields::stored(fields::stepFields())) {
            if (f->type != fields::Type::Int && f->type != fields::Type::Real)
                throw std::logic_error("step field '" + f->name + "' is stored in blocks and must be int64 or double");
            out.push_back(static_cast<size_t>(static_cast<const char*>(f->at(probe)) - base));
        }
        return out;
    }();
    return offsets;
}

}  // namespace

size_t fieldCount() { return slotOffsets().size(); }

std::string pack(const StepMetrics* steps, size_t count) {
    const auto& offsets = slotOffsets();
    std::string out(count * offsets.size() * 8, '\0');
    char* p = out.data();
    for (size_t i = 0; i < count; ++i) {
        const auto* step = reinterpret_cast<const char*>(&steps[i]);
        for (size_t offset : offsets) {
            std::memcpy(p, step + offset, 8);
            p += 8;
        }
    }
    return out;
}

void unpackAppend(const void* data, size_t bytes, size_t field_count, std::vector<StepMetrics>& out) {
    if (field_count == 0 || data == nullptr) return;
    const auto& offsets = slotOffsets();
    const size_t known = std::min(field_count, offsets.size());
    const size_t row_bytes = field_count * 8;
    const size_t rows = bytes / row_bytes;
    const char* base = static_cast<const char*>(data);
    for (size_t i = 0; i < rows; ++i, base += row_bytes) {
        auto* step = reinterpret_cast<char*>(&out.emplace_back());
        for (size_t f = 0; f < known; ++f) std::memcpy(step + offsets[f], base + f * 8, 8);
    }
}

}  // namespace hearth::stepblock
