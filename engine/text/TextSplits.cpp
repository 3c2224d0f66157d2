#include "engine/text/TextSplits.h"

#include "engine/data/CsvDataset.h"
#include "engine/data/DataError.h"
#include "engine/data/SplitPlan.h"
#include "engine/data/formats/CsvReader.h"
#include "engine/data/WordNetGlosses.h"
#include "engine/text/BertTokenizer.h"
#include "engine/text/TextCsv.h"
#include "engine/text/TextDataset.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

namespace hearth {
namespace {

namespace fs = std::filesystem;

// One file's samples with their labels as class indices.
struct TextFile {
    std::string path;
    std::vector<std::string> texts;
    std::vector<int64_t> labels;
};

TextFile labelled(LabelledTexts in, const std::map<std::string, int64_t>& index, const std::string& train_path,
                  const std::vector<std::string>& classes) {
    TextFile out{in.path, std::move(in.texts), {}};
    out.labels.reserve(in.labels.size());
    for (size_t i = 0; i < in.labels.size(); ++i) {
        const auto it = index.find(in.labels[i]);
        if (it == index.end())
            throw DataError(in.path + ":" + std::to_string(in.lines[i]) + ": label '" + in.labels[i] +
                            "' does not occur in the training file " + train_path + " (its labels are " +
                            bracketList(classes) + "); every split needs the same label set");
        out.labels.push_back(it->second);
    }
    return out;
}

std::string wordNetPath(const std::string& path) {
    return fs::is_directory(path) ? (fs::path(path) / "data.noun").string() : path;
}

struct SourceFiles {
    TextFile train;
    std::optional<TextFile> val, test;
    std::vector<std::string> classes;
    std::vector<std::string> notes;
};

SourceFiles readWordNet(const DataConfig& config) {
    TextSamples glosses = readWordNetGlosses(wordNetPath(config.path));
    SourceFiles s;
    s.classes = glosses.class_names;
    s.train.path = wordNetPath(config.path);
    s.train.texts = std::move(glosses.texts);
    s.train.labels = std::move(glosses.labels);
    return s;
}

SourceFiles readTextCsvFiles(const DataConfig& config) {
    SourceFiles s;
    LabelledTexts train = readTextCsv(config.path, config.text_column, config.label_column);
    s.classes = sortedClassNames(train.labels);
    if (s.classes.size() < 2)
        throw DataError(config.path + ": every row has the label '" + s.classes.front() +
                        "'; a classifier needs at least 2 classes");
    std::map<std::string, int64_t> index;
    for (size_t i = 0; i < s.classes.size(); ++i) index[s.classes[i]] = static_cast<int64_t>(i);
    auto note = [&s](const LabelledTexts& file) {
        if (file.html_breaks > 0)
            s.notes.push_back(file.path + ": " + std::to_string(file.html_breaks) +
                              " HTML line breaks (<br />) read as line breaks");
        if (!file.encoding_note.empty()) s.notes.push_back(file.encoding_note);
    };
    note(train);
    auto companion = [&](const std::optional<std::string>& path, const char* split) -> std::optional<TextFile> {
        if (!path) return std::nullopt;
        LabelledTexts file = readTextCsv(*path, config.text_column, config.label_column);
        note(file);
        TextFile out = labelled(std::move(file), index, config.path, s.classes);
        std::vector<bool> seen(s.classes.size(), false);
        for (int64_t l : out.labels) seen[static_cast<size_t>(l)] = true;
        std::vector<std::string> missing;
        for (size_t c = 0; c < seen.size(); ++c)
            if (!seen[c]) missing.push_back(s.classes[c]);
        if (!missing.empty())
            s.notes.push_back(std::string("the ") + split + " file " + *path + " has no samples of " +
                              bracketList(missing));
        return out;
    };
    s.val = companion(config.val_path, "validation");
    s.test = companion(config.test_path, "test");
    s.train = labelled(std::move(train), index, config.path, s.classes);
    return s;
}

// The rows of `file` that `splits` use, tokenised, as one TextDataset (positions in `rows` order).
struct UsedRows {
    Indices rows;                                 // sorted row numbers of the file
    std::shared_ptr<const Dataset> dataset;
    int64_t position(int64_t row) const {
        return std::lower_bound(rows.begin(), rows.end(), row) - rows.begin();
    }
};

UsedRows tokenizeRows(const TextFile& file, Indices rows, const BertTokenizer& tokenizer, const DataConfig& config,
                      const std::vector<std::string>& classes, const TextSplitOptions& options,
                      std::vector<std::string>& notes) {
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    std::vector<std::string> texts;
    std::vector<int64_t> labels;
    texts.reserve(rows.size());
    labels.reserve(rows.size());
    for (int64_t r : rows) {
        texts.push_back(file.texts[static_cast<size_t>(r)]);
        labels.push_back(file.labels[static_cast<size_t>(r)]);
    }
    const std::string name = fs::path(file.path).filename().string();
    TokenizeOptions to;
    to.max_length = config.max_length;
    to.cache_dir = options.cache_dir;
    if (options.log)
        to.progress = [&](int64_t done, int64_t total) {
            options.log("tokenizing " + name + ": " + std::to_string(done) + "/" + std::to_string(total) + " texts");
        };
    TokenizeResult tokens = tokenizeTexts(texts, tokenizer, to);
    if (options.log) {
        std::ostringstream line;
        line.precision(2);
        line << std::fixed;
        if (tokens.from_cache)
            line << "token ids of " << texts.size() << " texts of " << name << " read from the cache (" << tokens.seconds
                 << " s)";
        else
            line << "tokenized " << texts.size() << " texts of " << name << " in " << tokens.seconds << " s";
        options.log(line.str());
    }
    if (tokens.corpus.truncated > 0)
        notes.push_back(file.path + ": " + std::to_string(tokens.corpus.truncated) + " of " +
                        std::to_string(texts.size()) + " texts have more than data.max_length=" +
                        std::to_string(config.max_length) + " tokens and were truncated to it");
    TextDatasetOptions dataset_options;
    dataset_options.max_length = config.max_length;
    dataset_options.pad_to_max_length = config.padding == "max_length";
    dataset_options.pad_id = tokenizer.padId();
    UsedRows used;
    used.dataset = std::make_shared<TextDataset>(std::move(tokens.corpus), std::move(texts), std::move(labels), rows,
                                                 classes, dataset_options);
    used.rows = std::move(rows);
    return used;
}

std::shared_ptr<const Dataset> viewOf(const UsedRows& used, const Indices& rows) {
    Indices positions;
    positions.reserve(rows.size());
    for (int64_t r : rows) positions.push_back(used.position(r));
    return sortedSubset(used.dataset, std::move(positions));
}

std::string tokenizerPath(const DataConfig& config, const TextSplitOptions& options) {
    if (config.tokenizer) return *config.tokenizer;
    if (options.tokenizer_fallback) return *options.tokenizer_fallback;
    throw ConfigError("data.tokenizer", "text data needs a tokenizer: set data.tokenizer to a vocab.txt, "
                                        "tokenizer.json or folder, or model.pretrained to a checkpoint folder with one");
}

std::string lengthSummary(const std::vector<const Dataset*>& datasets) {
    std::vector<int64_t> lengths;
    for (const Dataset* d : datasets)
        for (int64_t i = 0; i < d->size(); ++i) lengths.push_back(d->sampleLength(i));
    if (lengths.empty()) return "";
    std::sort(lengths.begin(), lengths.end());
    return "tokens per text: median " + std::to_string(lengths[lengths.size() / 2]) + ", max " +
           std::to_string(lengths.back());
}

}  // namespace

DataSplits loadTextSplits(const DataConfig& config, uint64_t seed, const TextSplitOptions& options) {
    SourceFiles files = config.kind == "wordnet" ? readWordNet(config) : readTextCsvFiles(config);
    // The tokenizer is read after the data files, so a bad data file is reported first.
    const BertTokenizer tokenizer = BertTokenizer::fromFile(tokenizerPath(config, options));
    auto rowsOf = [](const std::optional<TextFile>& f) {
        return f ? std::optional<int64_t>(static_cast<int64_t>(f->texts.size())) : std::nullopt;
    };
    SplitIndices s = planFileSplits(static_cast<int64_t>(files.train.texts.size()), rowsOf(files.val),
                                    rowsOf(files.test), config, seed, files.train.path);

    std::vector<std::string> notes = files.notes;
    Indices train_rows = s.train;
    if (!files.val) train_rows.insert(train_rows.end(), s.val.begin(), s.val.end());
    if (!files.test) train_rows.insert(train_rows.end(), s.test.begin(), s.test.end());
    const UsedRows train = tokenizeRows(files.train, train_rows, tokenizer, config, files.classes, options, notes);
    DataSplits splits;
    splits.train = viewOf(train, s.train);
    if (files.val) {
        const UsedRows val = tokenizeRows(*files.val, s.val, tokenizer, config, files.classes, options, notes);
        splits.val = viewOf(val, s.val);
    } else {
        splits.val = viewOf(train, s.val);
    }
    if (files.test) {
        const UsedRows test = tokenizeRows(*files.test, s.test, tokenizer, config, files.classes, options, notes);
        splits.test = viewOf(test, s.test);
    } else {
        splits.test = viewOf(train, s.test);
    }
    splits.class_names = files.classes;
    splits.is_image = false;
    splits.notes = std::move(notes);
    splits.text.vocab_size = tokenizer.vocabSize();
    splits.text.max_length = config.max_length;
    splits.text.pad_id = tokenizer.padId();
    splits.text.tokenizer = tokenizer.source();
    const std::string what = config.kind == "wordnet" ? "WordNet noun glosses" : "text CSV";
    splits.description = what + " " + fs::path(files.train.path).filename().string() + " " + countsText(splits) +
                         ", " + std::to_string(splits.class_names.size()) + " classes, " +
                         lengthSummary({splits.train.get(), splits.val.get(), splits.test.get()}) +
                         " (max_length " + std::to_string(config.max_length) + ", " + config.padding + " padding)";
    return splits;
}

}  // namespace hearth
