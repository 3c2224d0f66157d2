#pragma once
// Byte sizes as people write them (a memory budget on the command line) and read them (messages).

#include <cstdint>
#include <optional>
#include <string>

namespace hearth {

// "4GiB", "4G", "512MiB", "512M", "1.5GB", "100000" (bytes) -> bytes; nullopt when not a size.
// K/M/G/T and KiB/MiB/GiB/TiB are binary (as RAM is sold); KB/MB/GB/TB are decimal.
std::optional<int64_t> parseByteSize(const std::string& text);
// Every byte count Hearth shows, in the CLI, the reports and the workbench alike: "2.31 GiB",
// "512.0 MiB", "3.5 KiB", "812 B" (binary units; a negative count, a change, keeps its sign).
std::string formatBytes(int64_t bytes);

}  // namespace hearth
