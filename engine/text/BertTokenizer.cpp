#include "engine/text/BertTokenizer.h"

#include "engine/data/DataError.h"
#include "engine/data/formats/TextEncoding.h"

#include <nlohmann/json.hpp>
#include <unicode/normalizer2.h>
#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hearth {

namespace fs = std::filesystem;

namespace {

std::u32string decode(const std::string& text) {
    std::u32string out;
    out.reserve(text.size());
    const auto* s = reinterpret_cast<const uint8_t*>(text.data());
    const auto length = static_cast<int32_t>(text.size());
    int32_t i = 0;
    while (i < length) {
        UChar32 c = 0;
        U8_NEXT(s, i, length, c);
        out.push_back(c < 0 ? U'\uFFFD' : static_cast<char32_t>(c));
    }
    return out;
}

void appendUtf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (c >> 6)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (c >> 12)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (c >> 18)));
        out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
}

std::string encodeUtf8(const std::u32string& text, size_t begin, size_t end) {
    std::string out;
    out.reserve(end - begin);
    for (size_t i = begin; i < end; ++i) appendUtf8(out, text[i]);
    return out;
}

bool isWhitespace(char32_t c) {
    return c == U'\t' || c == U'\n' || c == U'\r' || u_isUWhiteSpace(static_cast<UChar32>(c));
}

// tokenizers' is_control: the "Other" categories (Cc, Cf, Cn, Co, Cs), except \t \n \r.
bool isControl(char32_t c) {
    if (c == U'\t' || c == U'\n' || c == U'\r') return false;
    switch (u_charType(static_cast<UChar32>(c))) {
        case U_CONTROL_CHAR: case U_FORMAT_CHAR: case U_UNASSIGNED: case U_PRIVATE_USE_CHAR: case U_SURROGATE:
            return true;
        default:
            return false;
    }
}

bool isPunctuation(char32_t c) {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
    switch (u_charType(static_cast<UChar32>(c))) {
        case U_DASH_PUNCTUATION: case U_START_PUNCTUATION: case U_END_PUNCTUATION: case U_CONNECTOR_PUNCTUATION:
        case U_OTHER_PUNCTUATION: case U_INITIAL_PUNCTUATION: case U_FINAL_PUNCTUATION:
            return true;
        default:
            return false;
    }
}

bool isChineseChar(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::u32string toUtf32(const icu::UnicodeString& s) {
    std::u32string out(static_cast<size_t>(s.countChar32()), U'\0');
    UErrorCode status = U_ZERO_ERROR;
    s.toUTF32(reinterpret_cast<UChar32*>(out.data()), static_cast<int32_t>(out.size()), status);
    return out;
}

// BertNormalizer, in its order: clean, CJK, strip accents, lowercase.
std::u32string normalize(const std::u32string& text, const BertTokenizerOptions& o) {
    std::u32string s;
    s.reserve(text.size());
    for (const char32_t c : text) {
        if (o.clean_text) {
            if (c == 0 || c == 0xFFFD || isControl(c)) continue;
            if (isWhitespace(c)) {
                s.push_back(U' ');
                continue;
            }
        }
        if (o.handle_chinese_chars && isChineseChar(c)) {
            s.append({U' ', c, U' '});
        } else {
            s.push_back(c);
        }
    }
    const bool ascii = std::all_of(s.begin(), s.end(), [](char32_t c) { return c < 0x80; });
    if (o.strip_accents.value_or(o.lowercase) && !ascii) {
        UErrorCode status = U_ZERO_ERROR;
        const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
        const auto decomposed = toUtf32(nfd->normalize(
            icu::UnicodeString::fromUTF32(reinterpret_cast<const UChar32*>(s.data()), static_cast<int32_t>(s.size())),
            status));
        if (U_FAILURE(status)) throw DataError(std::string("tokenizer: Unicode normalisation failed: ") + u_errorName(status));
        s.clear();
        for (const char32_t c : decomposed)
            if (u_charType(static_cast<UChar32>(c)) != U_NON_SPACING_MARK) s.push_back(c);
    }
    if (o.lowercase) {
        std::u32string lower;
        lower.reserve(s.size());
        for (const char32_t c : s) {
            if (c < 0x80) {
                lower.push_back(c >= U'A' && c <= U'Z' ? c + 32 : c);
            } else {
                // Each code point on its own (full mapping, no context such as final sigma), as
                // Rust's char::to_lowercase in tokenizers.
                icu::UnicodeString one(static_cast<UChar32>(c));
                lower += toUtf32(one.toLower(icu::Locale::getRoot()));
            }
        }
        s.swap(lower);
    }
    return s;
}

std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw DataError("tokenizer: cannot read '" + path + "'");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

BertTokenizer fromVocabTxt(const std::string& path, BertTokenizerOptions options, bool explicit_options) {
    const std::string text = readAll(path);
    if (!isValidUtf8(text)) throw DataError("tokenizer: '" + path + "' is not a vocabulary: it is not UTF-8 text");
    std::vector<std::string> vocab;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
        vocab.push_back(line);
    }
    const fs::path config = fs::path(path).parent_path() / "tokenizer_config.json";
    if (!explicit_options && fs::exists(config)) {
        try {
            const auto j = nlohmann::json::parse(readAll(config.string()));
            if (j.contains("do_lower_case") && j["do_lower_case"].is_boolean()) options.lowercase = j["do_lower_case"];
            if (j.contains("strip_accents") && j["strip_accents"].is_boolean()) options.strip_accents = j["strip_accents"].get<bool>();
            if (j.contains("tokenize_chinese_chars") && j["tokenize_chinese_chars"].is_boolean())
                options.handle_chinese_chars = j["tokenize_chinese_chars"];
        } catch (const nlohmann::json::exception& e) {
            throw DataError("tokenizer: '" + config.string() + "' is not valid JSON: " + e.what());
        }
    }
    return BertTokenizer(std::move(vocab), options, path);
}

// A parsed tokenizer.json as a tokenizer. Throws DataError, or nlohmann's exceptions for a field of
// another JSON type than tokenizers write ("type": 5, "lowercase": "yes").
BertTokenizer tokenizerOfJson(const nlohmann::json& j, const std::string& path) {
    const auto fail = [&](const std::string& what) { return DataError("tokenizer: '" + path + "': " + what); };
    if (!j.contains("model") || j["model"].value("type", "") != "WordPiece" || !j["model"].contains("vocab") ||
        !j["model"]["vocab"].is_object()) {
        throw fail("not a WordPiece tokenizer (model.type must be \"WordPiece\" with a vocab); Hearth reads BERT tokenizers");
    }
    const auto& map = j["model"]["vocab"];
    std::vector<std::string> vocab(map.size());
    std::vector<bool> seen(map.size(), false);
    for (const auto& [token, id] : map.items()) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= static_cast<int64_t>(map.size()) ||
            seen[id.get<size_t>()]) {
            throw fail("vocab id of '" + token + "' is not one of 0.." + std::to_string(map.size() - 1) + " used once");
        }
        vocab[id.get<size_t>()] = token;
        seen[id.get<size_t>()] = true;
    }
    BertTokenizerOptions o;
    const auto& n = j.value("normalizer", nlohmann::json());
    if (n.is_object()) {
        if (n.value("type", "") != "BertNormalizer") {
            throw fail("normalizer type '" + n.value("type", std::string("?")) + "' is not supported (BertNormalizer is)");
        }
        o.lowercase = n.value("lowercase", true);
        o.clean_text = n.value("clean_text", true);
        o.handle_chinese_chars = n.value("handle_chinese_chars", true);
        if (n.contains("strip_accents") && n["strip_accents"].is_boolean()) o.strip_accents = n["strip_accents"].get<bool>();
    } else {
        o.lowercase = false;
        o.clean_text = false;
        o.handle_chinese_chars = false;
        o.strip_accents = false;
    }
    return BertTokenizer(std::move(vocab), o, path);
}

BertTokenizer fromTokenizerJson(const std::string& path) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(readAll(path));
    } catch (const nlohmann::json::exception& e) {
        throw DataError("tokenizer: '" + path + "' is not valid JSON: " + e.what());
    }
    try {
        return tokenizerOfJson(j, path);
    } catch (const nlohmann::json::exception& e) {
        throw DataError("tokenizer: '" + path + "': not a tokenizer.json as transformers writes it (" + e.what() + ")");
    }
}

}  // namespace

BertTokenizer BertTokenizer::fromFile(const std::string& path) {
    fs::path p(path);
    if (fs::is_directory(p)) {
        if (fs::exists(p / "tokenizer.json")) return fromFile((p / "tokenizer.json").string());
        if (fs::exists(p / "vocab.txt")) return fromFile((p / "vocab.txt").string());
        throw DataError("tokenizer: the folder '" + path + "' has neither tokenizer.json nor vocab.txt");
    }
    if (!fs::exists(p)) throw DataError("tokenizer: '" + path + "' does not exist");
    return p.extension() == ".json" ? fromTokenizerJson(path) : fromVocabTxt(path, {}, false);
}

BertTokenizer BertTokenizer::fromFile(const std::string& path, const BertTokenizerOptions& options) {
    if (fs::path(path).extension() == ".json") {
        throw DataError("tokenizer: '" + path + "' carries its own normalizer settings; pass no options");
    }
    return fromVocabTxt(fs::is_directory(path) ? (fs::path(path) / "vocab.txt").string() : path, options, true);
}

BertTokenizer::BertTokenizer(std::vector<std::string> vocab, BertTokenizerOptions options, std::string source)
    : vocab_(std::move(vocab)), options_(options), source_(std::move(source)) {
    ids_.reserve(vocab_.size());
    for (size_t i = 0; i < vocab_.size(); ++i) ids_[vocab_[i]] = static_cast<int32_t>(i);
    unk_ = specialId("[UNK]");
    cls_ = specialId("[CLS]");
    sep_ = specialId("[SEP]");
    pad_ = specialId("[PAD]");
    for (const char* s : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
        if (ids_.count(s)) specials_.emplace_back(s);
}

int32_t BertTokenizer::specialId(const char* token) const {
    const auto it = ids_.find(token);
    if (it == ids_.end()) {
        throw DataError("tokenizer: '" + source_ + "' is not a BERT vocabulary: it has no " + token + " token (" +
                        std::to_string(vocab_.size()) + " entries read)");
    }
    return it->second;
}

int32_t BertTokenizer::id(const std::string& token) const {
    const auto it = ids_.find(token);
    return it == ids_.end() ? -1 : it->second;
}

void BertTokenizer::appendWordPieces(const std::u32string& word, std::vector<int32_t>& out) const {
    if (static_cast<int>(word.size()) > max_word_chars_) {
        out.push_back(unk_);
        return;
    }
    const size_t before = out.size();
    size_t start = 0;
    std::string candidate;
    while (start < word.size()) {
        size_t end = word.size();
        int32_t found = -1;
        while (start < end) {
            candidate = start > 0 ? prefix_ : std::string();
            candidate += encodeUtf8(word, start, end);
            const auto it = ids_.find(candidate);
            if (it != ids_.end()) {
                found = it->second;
                break;
            }
            --end;
        }
        if (found < 0) {  // one piece cannot be matched: the whole word is unknown
            out.resize(before);
            out.push_back(unk_);
            return;
        }
        out.push_back(found);
        start = end;
    }
}

std::vector<int32_t> BertTokenizer::pieceIds(const std::string& text) const {
    std::vector<int32_t> out;
    // Special tokens first, verbatim in the raw text; the pieces between them go through the pipeline.
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t next = std::string::npos;
        const std::string* which = nullptr;
        for (const auto& s : specials_) {
            const size_t at = text.find(s, pos);
            if (at != std::string::npos && (at < next || (at == next && s.size() > which->size()))) {
                next = at;
                which = &s;
            }
        }
        const std::string segment = text.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
        const std::u32string normalized = normalize(decode(segment), options_);
        std::u32string word;
        for (const char32_t c : normalized) {
            if (isWhitespace(c)) {
                if (!word.empty()) appendWordPieces(word, out);
                word.clear();
            } else if (isPunctuation(c)) {
                if (!word.empty()) appendWordPieces(word, out);
                word.assign(1, c);
                appendWordPieces(word, out);
                word.clear();
            } else {
                word.push_back(c);
            }
        }
        if (!word.empty()) appendWordPieces(word, out);
        if (!which) break;
        out.push_back(ids_.at(*which));
        pos = next + which->size();
    }
    return out;
}

std::vector<std::string> BertTokenizer::tokenize(const std::string& text) const {
    std::vector<std::string> pieces;
    for (const int32_t i : pieceIds(text)) pieces.push_back(vocab_[static_cast<size_t>(i)]);
    return pieces;
}

std::vector<int32_t> BertTokenizer::encode(const std::string& text, int64_t max_length) const {
    auto pieces = pieceIds(text);
    const auto room = static_cast<size_t>(std::max<int64_t>(max_length - 2, 0));
    if (pieces.size() > room) pieces.resize(room);
    std::vector<int32_t> ids;
    ids.reserve(pieces.size() + 2);
    ids.push_back(cls_);
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    ids.push_back(sep_);
    return ids;
}

}  // namespace hearth
