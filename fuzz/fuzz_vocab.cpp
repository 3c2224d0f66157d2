// Reading a tokenizer from arbitrary files: as vocab.txt (first byte even) or tokenizer.json
// (odd). Only DataError comes out; a tokenizer that loads can tokenize.
#include "FuzzFile.h"
#include "engine/data/DataError.h"
#include "engine/text/BertTokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const std::string path =
        hearth::fuzz::writeInput(data + 1, size - 1, (data[0] & 1) ? "tokenizer.json" : "vocab.txt");
    try {
        const auto tokenizer = hearth::BertTokenizer::fromFile(path);
        (void)tokenizer.encode("Hearth reads [CLS] café, naïve 東京 text!", 16);
    } catch (const hearth::DataError&) {
    }
    return 0;
}
