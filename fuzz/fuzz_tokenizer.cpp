// The BERT WordPiece tokenizer (tests/fixtures/tokenizer/vocab.txt) on arbitrary bytes as text:
// no crash on invalid UTF-8, control characters or long words, and encode() keeps its contract.
#include "engine/text/BertTokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const hearth::BertTokenizer tokenizer = hearth::BertTokenizer::fromFile(HEARTH_VOCAB);
    const std::string text(reinterpret_cast<const char*>(data), size);
    (void)tokenizer.tokenize(text);
    const int64_t max_length = 1 + static_cast<int64_t>(size % 64);
    const auto ids = tokenizer.encode(text, max_length);
    if (ids.size() < 2 || static_cast<int64_t>(ids.size()) > std::max<int64_t>(max_length, 2) ||
        ids.front() != tokenizer.clsId() || ids.back() != tokenizer.sepId())
        __builtin_trap();
    for (const int32_t id : ids)
        if (id < 0 || id >= tokenizer.vocabSize()) __builtin_trap();
    return 0;
}
