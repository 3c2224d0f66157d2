// The safetensors header checks on arbitrary bytes: only DataError comes out, and an accepted
// layout's tensors lie inside the file and tile its data section.
#include "engine/data/DataError.h"
#include "engine/weights/SafeTensorsHeader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const auto layout = hearth::parseSafeTensorsHeader(data, size, "fuzz.safetensors");
        uint64_t at = 0;
        for (const auto& e : layout.entries) {
            if (e.begin != at || e.end < e.begin || layout.data_offset + e.end > size) __builtin_trap();
            at = e.end;
        }
        if (layout.data_offset + at != size) __builtin_trap();
    } catch (const hearth::DataError&) {
    }
    return 0;
}
