#pragma once
// Human-readable numbers for labels and tables: durations, bytes, rates, percentages.

#include <QString>

#include <cstdint>
#include <string>

namespace hearth::ui {

inline QString qstr(const std::string& s) { return QString::fromStdString(s); }

// The reports' renderings (report::formatDuration, formatBytes), as QStrings.
QString formatDuration(double seconds);          // "42.0 s", "3 min 05 s", "1 h 02 min"
QString formatBytes(int64_t bytes);               // "512.0 MiB", "1.50 GiB"
QString formatRate(double perSecond);             // "1,234", "12.3", "0.52"
QString formatPercent(double fraction, int decimals = 2);   // 0.9123 -> "91.23 %"
QString formatTimestamp(double unixSeconds);      // local "2024-05-01 14:03"

}  // namespace hearth::ui
