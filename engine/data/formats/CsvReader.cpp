#include "engine/data/formats/CsvReader.h"

#include "engine/config/Spelling.h"
#include "engine/data/DataError.h"
#include "engine/data/formats/TextEncoding.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hearth {
namespace {

// A character-level RFC 4180 scanner; `line` follows physical lines for messages.
class CsvScanner {
public:
    CsvScanner(const std::string& text, const std::string& path) : text_(text), path_(path) {
        // A UTF-8 byte order mark (spreadsheet exports) is not part of the first column's name.
        if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;
    }

    // The next non-empty record, or false at the end of the text.
    bool next(CsvRecord& record) {
        while (pos_ < text_.size()) {
            record.fields.clear();
            record.line = line_;
            if (atLineBreak()) {   // an empty line: skipped, like most CSV readers do
                consumeLineBreak();
                continue;
            }
            readRecord(record.fields);
            return true;
        }
        return false;
    }

    size_t position() const { return pos_; }

private:
    bool atLineBreak() const { return text_[pos_] == '\n' || text_[pos_] == '\r'; }

    void consumeLineBreak() {
        if (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ++pos_;
        ++pos_;
        ++line_;
    }

    void readRecord(std::vector<std::string>& fields) {
        while (true) {
            fields.push_back(pos_ < text_.size() && text_[pos_] == '"' ? readQuoted() : readPlain());
            if (pos_ >= text_.size()) return;
            if (text_[pos_] == ',') {
                ++pos_;
                continue;
            }
            consumeLineBreak();
            return;
        }
    }

    std::string readPlain() {
        const size_t start = pos_;
        while (pos_ < text_.size() && text_[pos_] != ',' && !atLineBreak()) ++pos_;
        return text_.substr(start, pos_ - start);
    }

    std::string readQuoted() {
        const int64_t opened_on = line_;
        ++pos_;   // opening quote
        std::string value;
        while (true) {
            if (pos_ >= text_.size())
                throw DataError(path_ + ":" + std::to_string(opened_on) +
                                ": unterminated quoted field (the quote opened here is never closed)");
            const char c = text_[pos_];
            if (c == '"') {
                if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {   // "" is a literal quote
                    value += '"';
                    pos_ += 2;
                    continue;
                }
                ++pos_;
                break;
            }
            if (c == '\n' || (c == '\r' && !(pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n')))
                ++line_;
            value += c;
            ++pos_;
        }
        if (pos_ < text_.size() && text_[pos_] != ',' && !atLineBreak())
            throw DataError(path_ + ":" + std::to_string(line_) + ": unexpected character '" +
                            std::string(1, text_[pos_]) + "' after a closing quote");
        return value;
    }

    const std::string& text_;
    const std::string& path_;
    size_t pos_ = 0;
    int64_t line_ = 1;
};

}  // namespace

CsvTable parseCsv(const std::string& text, const std::string& path) {
    CsvScanner scanner(text, path);
    CsvTable table;
    table.path = path;
    CsvRecord record;
    if (!scanner.next(record)) throw DataError(path + ": empty file (a header row is required)");
    table.header = std::move(record.fields);
    const size_t expected = table.header.size();
    while (scanner.next(record)) {
        if (record.fields.size() != expected)
            throw DataError(path + ":" + std::to_string(record.line) + ": expected " +
                            std::to_string(expected) + " fields, found " +
                            std::to_string(record.fields.size()));
        table.records.push_back(std::move(record));
        record = CsvRecord{};
    }
    return table;
}

CsvTable readCsvFile(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw DataError(path + ": is a folder, not a CSV file");
    if (!std::filesystem::is_regular_file(path, ec)) throw DataError(path + ": no such file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw DataError(path + ": cannot open: " + std::generic_category().message(errno));
    std::ostringstream content;
    content << in.rdbuf();
    if (in.bad()) throw DataError(path + ": read error");
    std::string text = content.str();
    std::string note;
    if (!isValidUtf8(text)) {
        text = windows1252ToUtf8(text);
        note = path + " is not valid UTF-8; it was read as Windows-1252";
    }
    CsvTable table = parseCsv(text, path);
    table.encoding_note = std::move(note);
    return table;
}

std::optional<std::vector<std::string>> readCsvHeader(const std::string& path) {
    constexpr std::streamsize kPrefix = std::streamsize{64} * 1024;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw DataError(path + ": cannot open: " + std::generic_category().message(errno));
    std::string prefix(static_cast<size_t>(kPrefix), '\0');
    in.read(prefix.data(), kPrefix);
    prefix.resize(static_cast<size_t>(in.gcount()));
    const bool whole = in.gcount() < kPrefix || in.peek() == std::char_traits<char>::eof();
    CsvScanner scanner(prefix, path);
    CsvRecord record;
    try {
        if (!scanner.next(record)) throw DataError(path + ": empty file (a header row is required)");
    } catch (const DataError&) {
        if (whole) throw;
        return std::nullopt;   // a quoted header field runs past the prefix
    }
    // A header that reaches the prefix's end may go on past it: its last field would be cut short.
    if (!whole && scanner.position() >= prefix.size()) return std::nullopt;
    for (std::string& field : record.fields)
        if (!isValidUtf8(field)) field = windows1252ToUtf8(field);
    return std::move(record.fields);
}

size_t headerColumn(const std::string& path, const std::vector<std::string>& header, const std::string& column,
                    const std::string& what, const std::string& key) {
    const auto it = std::find(header.begin(), header.end(), column);
    if (it != header.end()) return static_cast<size_t>(it - header.begin());
    throw DataError(path + ": no " + what + " column '" + column + "'" + didYouMean(column, header) +
                    "; the columns are " + bracketList(header) + (key.empty() ? "" : " (" + key + ")"));
}

}  // namespace hearth
