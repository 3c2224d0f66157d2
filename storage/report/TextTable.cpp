#include "storage/report/TextTable.h"

#include <algorithm>
#include <cctype>

namespace hearth::report {
namespace {

// UTF-8 aware width: count code points, not bytes (names and class labels may be non-ASCII).
size_t displayWidth(const std::string& s) {
    return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

bool looksNumeric(const std::string& s) {
    if (s.empty() || s == "-") return true;
    const unsigned char first = static_cast<unsigned char>(s[0]);
    return std::isdigit(first) || ((s[0] == '-' || s[0] == '+' || s[0] == '#') && s.size() > 1);
}

}  // namespace

TextTable::TextTable(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void TextTable::addRow(std::vector<std::string> cells) {
    cells.resize(headers_.size());
    rows_.push_back(std::move(cells));
}

std::string TextTable::render(const std::string& indent) const {
    const size_t columns = headers_.size();
    std::vector<size_t> width(columns);
    std::vector<bool> right(columns, true);
    for (size_t c = 0; c < columns; ++c) {
        width[c] = displayWidth(headers_[c]);
        for (const auto& row : rows_) {
            width[c] = std::max(width[c], displayWidth(row[c]));
            right[c] = right[c] && looksNumeric(row[c]);
        }
    }
    std::string out;
    auto emit = [&](const std::vector<std::string>& cells) {
        std::string line = indent;
        for (size_t c = 0; c < columns; ++c) {
            const std::string pad(width[c] - displayWidth(cells[c]), ' ');
            line += right[c] ? pad + cells[c] : cells[c] + (c + 1 < columns ? pad : "");
            if (c + 1 < columns) line += "  ";
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    };
    emit(headers_);
    for (const auto& row : rows_) emit(row);
    return out;
}

}  // namespace hearth::report
