#pragma once
// A column-aligned plain-text table for terminal reports (numbers right-aligned).

#include <string>
#include <vector>

namespace hearth::report {

class TextTable final {
public:
    explicit TextTable(std::vector<std::string> headers);
    void addRow(std::vector<std::string> cells);
    // Columns whose cells all look numeric ("12", "0.8750", "3.2 s", "-") are right-aligned.
    std::string render(const std::string& indent = "") const;

private:
    std::vector<std::string> headers_;
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace hearth::report
