#include "engine/text/TokenizedCorpus.h"

#include "engine/data/CacheFiles.h"
#include "engine/data/formats/WholeFile.h"
#include "engine/monitor/Elapsed.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

namespace hearth {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'H', 'E', 'A', 'R', 'T', 'H', 'T', 'K'};
constexpr uint32_t kFormat = 1;

std::string cacheKey(const std::vector<std::string>& texts, const BertTokenizer& tokenizer, int64_t max_length) {
    Fingerprint f;
    f.number(kFormat);
    f.number(max_length);
    const auto& o = tokenizer.options();
    f.number((o.lowercase ? 1 : 0) | (o.strip_accents.value_or(o.lowercase) ? 2 : 0) | (o.clean_text ? 4 : 0) |
             (o.handle_chinese_chars ? 8 : 0));
    f.number(tokenizer.vocabSize());
    for (const auto& token : tokenizer.vocab()) f.text(token);
    f.number(static_cast<int64_t>(texts.size()));
    for (const auto& text : texts) f.text(text);
    return f.hex();
}

template <typename T>
void writeArray(std::ostream& out, const std::vector<T>& v) {
    out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}

template <typename T>
bool readArray(std::ifstream& in, std::vector<T>& v, uint64_t n) {
    v.resize(n);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T)));
    return static_cast<bool>(in);
}

// nullopt-like: false when the entry is missing, truncated or not ours (then it is rewritten).
bool readCache(const std::string& path, int64_t expected_count, TokenizedCorpus& out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    char magic[8];
    uint32_t format = 0;
    uint64_t count = 0, total = 0, truncated = 0;
    in.read(magic, sizeof magic);
    in.read(reinterpret_cast<char*>(&format), sizeof format);
    in.read(reinterpret_cast<char*>(&count), sizeof count);
    in.read(reinterpret_cast<char*>(&total), sizeof total);
    in.read(reinterpret_cast<char*>(&truncated), sizeof truncated);
    if (!in || std::memcmp(magic, kMagic, sizeof magic) != 0 || format != kFormat ||
        count != static_cast<uint64_t>(expected_count) || total > (uint64_t{1} << 40))
        return false;
    TokenizedCorpus corpus;
    if (!readArray(in, corpus.offsets, count + 1) || !readArray(in, corpus.ids, total)) return false;
    if (corpus.offsets.front() != 0 || static_cast<uint64_t>(corpus.offsets.back()) != total) return false;
    for (size_t i = 1; i < corpus.offsets.size(); ++i)
        if (corpus.offsets[i] < corpus.offsets[i - 1]) return false;
    corpus.truncated = static_cast<int64_t>(truncated);
    out = std::move(corpus);
    return true;
}

// Written whole (writeWholeFile), so a concurrent run never reads half an entry, and two runs
// writing the same entry at once do not mix. A cache that cannot be written is not an error: the
// run goes on with the ids it has.
void writeCache(const std::string& path, const TokenizedCorpus& corpus) {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    writeWholeFile(path, [&](std::ostream& out) {
        const uint64_t count = static_cast<uint64_t>(corpus.size());
        const uint64_t total = corpus.ids.size();
        const auto truncated = static_cast<uint64_t>(corpus.truncated);
        out.write(kMagic, sizeof kMagic);
        out.write(reinterpret_cast<const char*>(&kFormat), sizeof kFormat);
        out.write(reinterpret_cast<const char*>(&count), sizeof count);
        out.write(reinterpret_cast<const char*>(&total), sizeof total);
        out.write(reinterpret_cast<const char*>(&truncated), sizeof truncated);
        writeArray(out, corpus.offsets);
        writeArray(out, corpus.ids);
    });
}

// Encodes every text on `threads` threads (chunks claimed in order); the calling thread reports
// progress until they finish. Each text is encoded without a limit and then cut as transformers
// cuts it ([CLS] + the first max_length-2 pieces + [SEP]) so that truncation can be counted.
TokenizedCorpus encodeAll(const std::vector<std::string>& texts, const BertTokenizer& tokenizer,
                          const TokenizeOptions& options) {
    const size_t n = texts.size();
    std::vector<std::vector<int32_t>> encoded(n);
    std::atomic<size_t> next{0}, done{0};
    std::atomic<int64_t> truncated{0};
    std::mutex mutex;
    std::condition_variable finished;
    std::exception_ptr error;
    constexpr size_t kChunk = 256;
    const auto max_length = static_cast<size_t>(std::max<int64_t>(options.max_length, 2));
    auto work = [&] {
        try {
            for (size_t begin = next.fetch_add(kChunk); begin < n; begin = next.fetch_add(kChunk)) {
                const size_t end = std::min(n, begin + kChunk);
                for (size_t i = begin; i < end; ++i) {
                    std::vector<int32_t> ids = tokenizer.encode(texts[i], INT32_MAX);
                    if (ids.size() > max_length) {
                        ids[max_length - 1] = ids.back();  // [SEP]
                        ids.resize(max_length);
                        truncated.fetch_add(1);
                    }
                    encoded[i] = std::move(ids);
                }
                done.fetch_add(end - begin);
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex);
            if (!error) error = std::current_exception();
            next.store(n);
        }
        std::lock_guard<std::mutex> lock(mutex);
        finished.notify_all();
    };
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const size_t threads = std::min<size_t>(options.threads > 0 ? static_cast<size_t>(options.threads) : cores,
                                            std::max<size_t>(1, (n + kChunk - 1) / kChunk));
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (size_t t = 0; t < threads; ++t) pool.emplace_back(work);
    {
        // Progress only for runs long enough to watch (a second or more).
        const auto start = std::chrono::steady_clock::now();
        std::unique_lock<std::mutex> lock(mutex);
        while (done.load() < n && !error) {
            finished.wait_for(lock, std::chrono::milliseconds(250));
            if (options.progress && done.load() < n && !error &&
                std::chrono::steady_clock::now() - start >= std::chrono::seconds(1)) {
                lock.unlock();
                options.progress(static_cast<int64_t>(done.load()), static_cast<int64_t>(n));
                lock.lock();
            }
        }
    }
    for (auto& thread : pool) thread.join();
    if (error) std::rethrow_exception(error);

    TokenizedCorpus corpus;
    corpus.offsets.reserve(n + 1);
    corpus.offsets.push_back(0);
    size_t total = 0;
    for (const auto& ids : encoded) total += ids.size();
    corpus.ids.reserve(total);
    for (auto& ids : encoded) {
        corpus.ids.insert(corpus.ids.end(), ids.begin(), ids.end());
        corpus.offsets.push_back(static_cast<int64_t>(corpus.ids.size()));
        std::vector<int32_t>().swap(ids);
    }
    corpus.truncated = truncated.load();
    return corpus;
}

}  // namespace

std::string defaultTokenCacheDir() { return defaultCacheDir("tokens"); }

TokenizeResult tokenizeTexts(const std::vector<std::string>& texts, const BertTokenizer& tokenizer,
                             const TokenizeOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    TokenizeResult result;
    if (!options.cache_dir.empty()) {
        result.cache_path =
            (fs::path(options.cache_dir) / (cacheKey(texts, tokenizer, options.max_length) + ".tok")).string();
        result.from_cache = readCache(result.cache_path, static_cast<int64_t>(texts.size()), result.corpus);
    }
    if (!result.from_cache) {
        result.corpus = encodeAll(texts, tokenizer, options);
        if (!result.cache_path.empty()) writeCache(result.cache_path, result.corpus);
    }
    result.seconds = secondsSince(start);
    return result;
}

}  // namespace hearth
