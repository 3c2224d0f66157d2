#pragma once
// TextCsv: labelled texts from a CSV file with a header (IMDB layout: a text column and a label
// column; RFC 4180, so reviews may hold commas, quotes and line breaks). HTML line breaks
// (<br />, <br/>, <br>) become line breaks, which the tokenizer reads as whitespace, as a person
// reads them. No LibTorch, no Qt.

#include <cstdint>
#include <string>
#include <vector>

namespace hearth {

struct LabelledTexts {
    std::string path;
    std::vector<std::string> texts;
    std::vector<std::string> labels;   // as written (trimmed); empty without a label column
    std::vector<int64_t> lines;        // the line each record starts on
    int64_t html_breaks = 0;           // <br /> tags turned into line breaks
    std::string encoding_note;         // set when the file was read as Windows-1252
};

// Throws DataError naming the file (and line) for a missing column (listing the columns there
// are), an empty text or an empty label, unless `for_prediction` (predict classifies every row: an
// empty text is classified, an empty label leaves its row unscored). An empty `label_column`
// reads texts alone.
LabelledTexts readTextCsv(const std::string& path, const std::string& text_column, const std::string& label_column,
                          bool for_prediction = false);

// <br />, <br/>, <br> (any case) -> "\n"; returns how many were replaced.
int64_t replaceHtmlBreaks(std::string& text);

}  // namespace hearth
