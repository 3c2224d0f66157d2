// Byte sizes as people write them and read them (see ByteSize.h).

#include "engine/config/ByteSize.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <regex>

namespace hearth {

std::optional<int64_t> parseByteSize(const std::string& text) {
    static const std::regex pattern(R"(^\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*$)");
    std::smatch m;
    if (!std::regex_match(text, m, pattern)) return std::nullopt;
    std::string unit = m[2].str();
    std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::tolower(c); });
    const double kib = 1024.0;
    double scale = 0.0;
    if (unit.empty() || unit == "b") scale = 1.0;
    else if (unit == "k" || unit == "kib" || unit == "ki") scale = kib;
    else if (unit == "m" || unit == "mib" || unit == "mi") scale = kib * kib;
    else if (unit == "g" || unit == "gib" || unit == "gi") scale = kib * kib * kib;
    else if (unit == "t" || unit == "tib" || unit == "ti") scale = kib * kib * kib * kib;
    else if (unit == "kb") scale = 1e3;
    else if (unit == "mb") scale = 1e6;
    else if (unit == "gb") scale = 1e9;
    else if (unit == "tb") scale = 1e12;
    else return std::nullopt;
    const double bytes = std::stod(m[1].str()) * scale;
    if (!(bytes >= 1.0) || bytes > 9.0e18) return std::nullopt;
    return static_cast<int64_t>(std::llround(bytes));
}

std::string formatBytes(int64_t bytes) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (std::fabs(value) >= 1024.0 && unit < 4) {
        value /= 1024.0;
        ++unit;
    }
    char text[32];
    if (unit == 0) std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
    else std::snprintf(text, sizeof text, unit >= 3 ? "%.2f %s" : "%.1f %s", value, units[unit]);
    return text;
}

}  // namespace hearth
