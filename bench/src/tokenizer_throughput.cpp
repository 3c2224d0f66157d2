// tokenizer_bench: Hearth's BertTokenizer on a text corpus, one thread; compare with Hugging
// Face's Rust tokenizer through bench/tokenizer_compare.sh.
//
//   tokenizer_bench VOCAB CORPUS.json [--repeat N] [--max-length L]
//
// CORPUS.json is the tokenizer fixture's format ({"cases": [{"text": ...}, ...]}); prints texts/s,
// MB/s and the pieces per text.
#include "engine/text/BertTokenizer.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: tokenizer_bench VOCAB CORPUS.json [--repeat N] [--max-length L]\n");
        return 2;
    }
    int repeat = 20;
    int64_t max_length = 512;
    for (int i = 3; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--repeat") repeat = std::stoi(argv[i + 1]);
        if (flag == "--max-length") max_length = std::stoll(argv[i + 1]);
    }
    try {
        const auto tokenizer = hearth::BertTokenizer::fromFile(argv[1]);
        std::ifstream in(argv[2]);
        const auto corpus = nlohmann::json::parse(in);
        std::vector<std::string> texts;
        size_t bytes = 0;
        for (const auto& c : corpus["cases"]) {
            texts.push_back(c["text"].get<std::string>());
            bytes += texts.back().size();
        }
        size_t pieces = 0;
        const auto start = std::chrono::steady_clock::now();
        for (int r = 0; r < repeat; ++r)
            for (const auto& t : texts) pieces += tokenizer.encode(t, max_length).size();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double n = static_cast<double>(texts.size()) * repeat;
        std::printf("hearth: %zu texts x %d in %.2f s: %.0f texts/s, %.1f MB/s, %.1f ids per text\n", texts.size(),
                    repeat, s, n / s, static_cast<double>(bytes) * repeat / s / 1e6, static_cast<double>(pieces) / n);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tokenizer_bench: %s\n", e.what());
        return 3;
    }
}
