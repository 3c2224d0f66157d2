#pragma once
// CsvReader: RFC 4180 parsing of a whole CSV file (quoted fields, doubled quotes, separators and
// line breaks inside quotes, CRLF or LF) into records that remember the line they start on.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hearth {

struct CsvRecord {
    std::vector<std::string> fields;
    int64_t line = 0;   // 1-based line of the file where the record starts
};

struct CsvTable {
    std::string path;
    std::vector<std::string> header;
    std::vector<CsvRecord> records;   // data rows, without the header
    std::string encoding_note;        // set when the file was not UTF-8 and was read as Windows-1252
};

// Parses `text` (the content of `path`, used in messages). The first record is the header;
// every row must have as many fields as the header. Empty lines are skipped. Throws DataError
// "<path>:<line>: ..." for a wrong field count, an unterminated quote or stray characters after
// a closing quote, and "<path>: empty file" when there is no header.
CsvTable parseCsv(const std::string& text, const std::string& path);

// Reads and parses the file at `path`; DataError when it cannot be read. A file that is not valid
// UTF-8 is read as Windows-1252 (what Excel on Windows saves) and says so in encoding_note.
CsvTable readCsvFile(const std::string& path);

// The header of the CSV file at `path`, read from its first 64 KiB (a look before loading, e.g. to
// check the columns a config names): nullopt when the header is longer than that. DataError when
// the file cannot be read or is empty. Field names that are not UTF-8 are read as Windows-1252.
std::optional<std::vector<std::string>> readCsvHeader(const std::string& path);

// The index of `column` in `header` (the file at `path`). When it is not there: DataError
// "<path>: no <what> column 'x' (did you mean 'y'?); the columns are [a, b] (<key>)", `key` naming
// the setting that chose it (e.g. "data.label_column"; left out when empty).
size_t headerColumn(const std::string& path, const std::vector<std::string>& header, const std::string& column,
                    const std::string& what, const std::string& key);

// Names as the data's messages list them: "[a, b, c]" (columns, labels).
inline std::string bracketList(const std::vector<std::string>& names) {
    std::string text;
    for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
    return "[" + text + "]";
}

// One field as a CSV writer writes it (RFC 4180): quoted, with quotes doubled, when it holds a
// comma, a quote or a line break. What the exports and predictions write; parseCsv reads it back.
inline std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

}  // namespace hearth
