#include "engine/text/TextCsv.h"

#include "engine/data/formats/CsvReader.h"
#include "engine/data/DataError.h"

#include <algorithm>
#include <cctype>

namespace hearth {
namespace {

std::string trim(const std::string& s) {
    const auto begin = s.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos) return "";
    return s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1);
}

size_t columnIndex(const CsvTable& table, const std::string& column, const char* what) {
    return headerColumn(table.path, table.header, column, what,
                        std::string(what) == "text" ? "data.text_column; predict: --text-column" : "data.label_column");
}

// Length of a <br>, <br/> or <br /> tag at `i` (case-insensitive), 0 when there is none.
size_t breakTagAt(const std::string& s, size_t i) {
    if (i + 3 > s.size() || s[i] != '<' || std::tolower(static_cast<unsigned char>(s[i + 1])) != 'b' ||
        std::tolower(static_cast<unsigned char>(s[i + 2])) != 'r')
        return 0;
    size_t j = i + 3;
    while (j < s.size() && s[j] == ' ') ++j;
    if (j < s.size() && s[j] == '/') ++j;
    return j < s.size() && s[j] == '>' ? j + 1 - i : 0;
}

}  // namespace

int64_t replaceHtmlBreaks(std::string& text) {
    if (text.find('<') == std::string::npos) return 0;
    std::string out;
    out.reserve(text.size());
    int64_t count = 0;
    for (size_t i = 0; i < text.size();) {
        if (const size_t n = breakTagAt(text, i)) {
            out.push_back('\n');
            i += n;
            ++count;
        } else {
            out.push_back(text[i++]);
        }
    }
    text = std::move(out);
    return count;
}

LabelledTexts readTextCsv(const std::string& path, const std::string& text_column, const std::string& label_column,
                          bool for_prediction) {
    CsvTable table = readCsvFile(path);
    const size_t text_col = columnIndex(table, text_column, "text");
    const bool labelled = !label_column.empty();
    const size_t label_col = labelled ? columnIndex(table, label_column, "label") : 0;
    LabelledTexts out;
    out.path = path;
    out.encoding_note = table.encoding_note;
    out.texts.reserve(table.records.size());
    for (auto& record : table.records) {
        std::string text = std::move(record.fields[text_col]);
        out.html_breaks += replaceHtmlBreaks(text);
        const std::string where = path + ":" + std::to_string(record.line);
        auto fail = [&where](const std::string& column, const char* problem) {
            std::string message = where;
            message.append(", column '").append(column).append("': ").append(problem);
            return DataError(message);
        };
        if (!for_prediction && trim(text).empty()) throw fail(text_column, "the text is empty (remove the row or give it text)");
        if (labelled) {
            std::string label = trim(record.fields[label_col]);
            if (label.empty() && !for_prediction) throw fail(label_column, "the label is empty");
            out.labels.push_back(std::move(label));
        }
        out.texts.push_back(std::move(text));
        out.lines.push_back(record.line);
    }
    if (out.texts.empty()) throw DataError(path + ": no data rows after the header");
    return out;
}

}  // namespace hearth
