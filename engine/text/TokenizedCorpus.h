#pragma once
// TokenizedCorpus: texts turned into token ids once per run: in parallel on every core, with a
// progress callback, and cached on disk under a key made of the texts, the tokenizer's vocabulary
// and options, and max_length, so that a second run over the same files does not tokenise again.
// No LibTorch, no Qt.

#include "engine/text/BertTokenizer.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hearth {

struct TokenizedCorpus {
    std::vector<int32_t> ids;        // every sequence back to back: [CLS] pieces [SEP]
    std::vector<int64_t> offsets;    // size() + 1 entries; sequence i is ids[offsets[i], offsets[i+1])
    int64_t truncated = 0;           // texts that had more than max_length tokens (cut to it)

    int64_t size() const { return offsets.empty() ? 0 : static_cast<int64_t>(offsets.size()) - 1; }
    int64_t length(int64_t i) const {
        return offsets[static_cast<size_t>(i) + 1] - offsets[static_cast<size_t>(i)];
    }
    const int32_t* sequence(int64_t i) const { return ids.data() + offsets[static_cast<size_t>(i)]; }
};

struct TokenizeOptions {
    int64_t max_length = 512;        // [CLS] and [SEP] included, as transformers' truncation=True
    int threads = 0;                 // 0: every core
    std::string cache_dir;           // "" = no cache
    // Called on the calling thread about every quarter second once tokenising has taken a second.
    std::function<void(int64_t done, int64_t total)> progress;
};

struct TokenizeResult {
    TokenizedCorpus corpus;
    bool from_cache = false;
    std::string cache_path;          // the entry read or written ("" without a cache)
    double seconds = 0.0;
};

TokenizeResult tokenizeTexts(const std::vector<std::string>& texts, const BertTokenizer& tokenizer,
                             const TokenizeOptions& options);

// $HEARTH_CACHE_DIR/tokens, else $XDG_CACHE_HOME/hearth/tokens, else ~/.cache/hearth/tokens.
std::string defaultTokenCacheDir();

}  // namespace hearth
