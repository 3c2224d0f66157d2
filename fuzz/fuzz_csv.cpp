// The CSV reader (RFC 4180, UTF-8 with the Windows-1252 fallback) on arbitrary text.
#include "engine/data/DataError.h"
#include "engine/data/formats/CsvReader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const hearth::CsvTable table = hearth::parseCsv(text, "fuzz.csv");
        // Every row was checked to have as many fields as the header.
        for (const auto& record : table.records)
            if (record.fields.size() != table.header.size() || record.line < 1) __builtin_trap();
    } catch (const hearth::DataError&) {
    }
    return 0;
}
