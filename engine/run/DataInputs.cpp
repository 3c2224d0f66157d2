#include "engine/run/DataInputs.h"

#include "engine/data/DataError.h"
#include "engine/data/formats/CsvReader.h"

#include <algorithm>
#include <optional>

namespace hearth {

std::vector<ConfigIssue> dataInputProblems(const ExperimentConfig& config) {
    std::vector<ConfigIssue> issues = inputProblems(config);
    const DataConfig& d = config.data;
    const bool text = d.kind == "text_csv";
    if (d.kind != "csv" && !text) return issues;
    const auto flagged = [&issues](const std::string& key) {
        return std::any_of(issues.begin(), issues.end(), [&key](const ConfigIssue& i) { return i.key == key; });
    };
    std::vector<std::pair<std::string, std::string>> files{{"data.path", d.path}};
    if (d.val_path) files.emplace_back("data.val_path", *d.val_path);
    if (d.test_path) files.emplace_back("data.test_path", *d.test_path);
    std::vector<ConfigIssue> columns;
    for (const auto& file : files) {
        const std::string& key = file.first;
        const std::string& path = file.second;
        if (path.empty() || flagged(key)) continue;
        std::optional<std::vector<std::string>> header;
        try {
            header = readCsvHeader(path);
        } catch (const DataError& e) {
            columns.push_back({key, e.what()});
            continue;
        }
        if (!header) continue;   // a header past 64 KiB: the load checks it
        const auto check = [&](const std::string& column, const char* what, const std::string& column_key) {
            try {
                headerColumn(path, *header, column, what, "");   // the issue's key names the setting
            } catch (const DataError& e) {
                columns.push_back({column_key, e.what()});
            }
        };
        if (text) check(d.text_column, "text", "data.text_column");
        check(d.label_column, "label", "data.label_column");
    }
    issues.insert(issues.end(), columns.begin(), columns.end());
    return issues;
}

}  // namespace hearth
