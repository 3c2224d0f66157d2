#pragma once
// BertTokenizer: the BERT WordPiece tokenizer as Hugging Face's BertTokenizerFast (the Rust
// `tokenizers` pipeline) runs it, so that ids are identical:
//   special tokens matched verbatim in the raw text -> BertNormalizer (clean control characters,
//   spaces around CJK ideographs, strip accents (NFD, drop Mn), lowercase per code point) ->
//   BertPreTokenizer (split on whitespace, isolate punctuation) -> WordPiece (greedy longest
//   match, "##" continuations, a word over 100 characters or with an unmatched piece is [UNK]) ->
//   [CLS] pieces [SEP], truncated to max_length.
// Unicode properties come from ICU. No LibTorch, no Qt.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace hearth {

struct BertTokenizerOptions {
    bool lowercase = true;                 // do_lower_case
    std::optional<bool> strip_accents;     // unset: follows lowercase (as in transformers)
    bool clean_text = true;
    bool handle_chinese_chars = true;
};

class BertTokenizer {
public:
    // From vocab.txt (one token per line; its id is the line index), tokenizer.json (a
    // BertNormalizer + WordPiece model), or a folder holding either (tokenizer.json first).
    // A vocab.txt next to a tokenizer_config.json takes its do_lower_case / strip_accents.
    // Throws DataError naming the file and what is wrong.
    static BertTokenizer fromFile(const std::string& path);
    static BertTokenizer fromFile(const std::string& path, const BertTokenizerOptions& options);
    // From tokens in id order; `source` names them in errors (a file path). Throws DataError
    // when [UNK], [CLS], [SEP] or [PAD] is missing.
    BertTokenizer(std::vector<std::string> vocab, BertTokenizerOptions options, std::string source = "the vocabulary");

    // The word pieces of `text`, special tokens included where they appear verbatim.
    std::vector<std::string> tokenize(const std::string& text) const;
    // [CLS] ids [SEP], at most max_length ids in all (pieces beyond are dropped); no padding.
    std::vector<int32_t> encode(const std::string& text, int64_t max_length = 512) const;

    int32_t id(const std::string& token) const;  // -1 when not in the vocabulary
    int32_t padId() const { return pad_; }
    int32_t unkId() const { return unk_; }
    int32_t clsId() const { return cls_; }
    int32_t sepId() const { return sep_; }
    int64_t vocabSize() const { return static_cast<int64_t>(vocab_.size()); }
    const BertTokenizerOptions& options() const { return options_; }
    const std::string& source() const { return source_; }  // the file it was read from
    const std::vector<std::string>& vocab() const { return vocab_; }  // tokens in id order

private:
    void appendWordPieces(const std::u32string& word, std::vector<int32_t>& out) const;
    std::vector<int32_t> pieceIds(const std::string& text) const;
    int32_t specialId(const char* token) const;

    std::vector<std::string> vocab_;
    std::unordered_map<std::string, int32_t> ids_;
    std::vector<std::string> specials_;  // matched verbatim before normalising, longest first
    BertTokenizerOptions options_;
    std::string source_;
    int32_t pad_ = 0, unk_ = 0, cls_ = 0, sep_ = 0;
    int max_word_chars_ = 100;
    std::string prefix_ = "##";
};

}  // namespace hearth
