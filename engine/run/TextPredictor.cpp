#include "engine/run/TextPredictor.h"

#include "engine/data/CsvReader.h"
#include "engine/data/DataError.h"
#include "engine/models/HfCheckpoint.h"
#include "engine/models/ModelRegistry.h"
#include "engine/strategy/CheckpointFile.h"
#include "engine/text/BertTokenizer.h"
#include "engine/text/TextCsv.h"
#include "engine/text/TokenizedCorpus.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

namespace hearth {
namespace {

namespace fs = std::filesystem;

struct LoadedModel {
    std::shared_ptr<ClassifierImpl> model;
    BertTokenizer tokenizer;
    std::vector<std::string> class_names;
    int64_t max_length = 512;
};

std::vector<std::string> id2label(const std::string& config_path, int64_t labels) {
    std::ifstream in(config_path);
    const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    std::vector<std::string> names(static_cast<size_t>(labels));
    for (int64_t i = 0; i < labels; ++i) names[static_cast<size_t>(i)] = "LABEL_" + std::to_string(i);
    if (j.is_object() && j.contains("id2label") && j["id2label"].is_object())
        for (const auto& [key, value] : j["id2label"].items()) {
            const int64_t i = std::strtoll(key.c_str(), nullptr, 10);
            if (i >= 0 && i < labels && value.is_string()) names[static_cast<size_t>(i)] = value.get<std::string>();
        }
    return names;
}

LoadedModel fromFolder(const PredictModel& source, const PredictOptions& options) {
    const std::string config = (fs::path(source.folder) / "config.json").string();
    if (!fs::exists(config)) throw DataError(source.folder + ": no config.json (expected a Hugging Face checkpoint folder)");
    const TransformerSpec spec = readTransformerSpec(config);
    auto model = loadPretrainedClassifier(source.folder, spec.familyName(), spec.num_labels);
    for (const auto& note : model->notes())
        if (note.rfind("classifier ", 0) == 0)
            throw DataError(source.folder + ": the checkpoint has no trained classification head (" + note +
                            "); fine-tune it first (hearth-cli run) and predict with --run");
    LoadedModel out{model.ptr(), BertTokenizer::fromFile(options.tokenizer.value_or(source.folder)),
                    id2label(config, spec.num_labels), std::min<int64_t>(spec.max_positions, 512)};
    if (out.tokenizer.vocabSize() > spec.vocab_size)
        throw ConfigError("--tokenizer", "the tokenizer " + out.tokenizer.source() + " has " +
                                             std::to_string(out.tokenizer.vocabSize()) +
                                             " tokens but the model's embeddings have " +
                                             std::to_string(spec.vocab_size) + "; use the checkpoint's own tokenizer");
    return out;
}

LoadedModel fromRun(const PredictModel& source, const PredictOptions& options) {
    const ExperimentConfig& config = *source.run_config;
    if (config.model.name != "bert" && config.model.name != "distilbert")
        throw ConfigError("model.name", "predict reads text; this run trained " + config.model.name + " on " +
                                            config.data.kind + " data");
    if (!fs::exists(source.checkpoint))
        throw DataError(source.checkpoint + ": the run's checkpoint is missing (was the run stopped before its "
                        "first validation, or its artifacts deleted?)");
    std::optional<std::string> tokenizer = options.tokenizer ? options.tokenizer : config.data.tokenizer;
    if (!tokenizer) tokenizer = config.model.pretrained;
    if (!tokenizer) throw ConfigError("data.tokenizer", "the run names no tokenizer; pass --tokenizer");
    BertTokenizer tok = BertTokenizer::fromFile(*tokenizer);
    ModelInput input{{config.data.max_length}, static_cast<int64_t>(source.class_names.size())};
    input.vocab_size = tok.vocabSize();
    input.max_length = config.data.max_length;
    input.pad_id = tok.padId();
    auto model = createModel(config.model, input);
    loadCheckpointFile(source.checkpoint, *model);
    return LoadedModel{model, std::move(tok), source.class_names, config.data.max_length};
}

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

}  // namespace

PredictResult predictTextCsv(const PredictModel& source, const PredictOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    if (options.batch_size < 1) throw ConfigError("--batch-size", "must be at least 1");
    // The input first: a wrong file is reported before a model is loaded.
    CsvTable table = readCsvFile(options.input_csv);
    const auto column = std::find(table.header.begin(), table.header.end(), options.text_column);
    if (column == table.header.end()) {
        std::string columns;
        for (const auto& c : table.header) columns += (columns.empty() ? "" : ", ") + c;
        throw DataError(options.input_csv + ": no text column '" + options.text_column + "'; the columns are [" +
                        columns + "] (use --text-column)");
    }
    const auto col = static_cast<size_t>(column - table.header.begin());
    std::vector<std::string> texts;
    texts.reserve(table.records.size());
    for (auto& record : table.records) {
        texts.push_back(std::move(record.fields[col]));
        replaceHtmlBreaks(texts.back());
    }

    LoadedModel loaded = source.run_config ? fromRun(source, options) : fromFolder(source, options);
    const int64_t max_length = options.max_length.value_or(loaded.max_length);
    TokenizeOptions to;
    to.max_length = max_length;
    const TokenizedCorpus corpus = tokenizeTexts(texts, loaded.tokenizer, to).corpus;

    const torch::Device device = torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
    loaded.model->to(device);
    loaded.model->eval();
    torch::NoGradGuard no_grad;
    const auto n = static_cast<int64_t>(texts.size());
    const auto classes = static_cast<int64_t>(loaded.class_names.size());
    auto probabilities = torch::empty({n, classes}, torch::kFloat32);
    // Longest first in batches (little padding); results land in their rows.
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return corpus.length(a) > corpus.length(b); });
    for (int64_t begin = 0; begin < n; begin += options.batch_size) {
        const int64_t end = std::min(n, begin + options.batch_size);
        const int64_t width = corpus.length(order[static_cast<size_t>(begin)]);
        auto ids = torch::full({end - begin, width}, static_cast<int64_t>(loaded.tokenizer.padId()), torch::kInt64);
        auto mask = torch::zeros({end - begin, width}, torch::kInt64);
        for (int64_t r = begin; r < end; ++r) {
            const int64_t i = order[static_cast<size_t>(r)];
            std::copy_n(corpus.sequence(i), corpus.length(i), ids.data_ptr<int64_t>() + (r - begin) * width);
            std::fill_n(mask.data_ptr<int64_t>() + (r - begin) * width, corpus.length(i), int64_t{1});
        }
        Batch batch;
        batch.set("input_ids", ids.to(device));
        batch.set("attention_mask", mask.to(device));
        const auto probs = torch::softmax(loaded.model->forwardBatch(batch).to(torch::kFloat32), 1).cpu();
        const auto rows = torch::tensor(std::vector<int64_t>(order.begin() + begin, order.begin() + end), torch::kInt64);
        probabilities.index_copy_(0, rows, probs);
    }

    PredictResult result;
    result.rows = n;
    result.class_names = loaded.class_names;
    result.predicted_counts.assign(static_cast<size_t>(classes), 0);
    result.device = device.str();
    if (corpus.truncated > 0)
        result.notes.push_back(std::to_string(corpus.truncated) + " of " + std::to_string(n) + " texts have more than " +
                               std::to_string(max_length) + " tokens and were truncated");
    std::ofstream out(options.output_csv, std::ios::trunc);
    if (!out) throw DataError(options.output_csv + ": cannot write the predictions");
    out << "index,predicted,confidence";
    for (const auto& name : loaded.class_names) out << "," << csvField("prob:" + name);
    out << "\n";
    const auto p = probabilities.accessor<float, 2>();
    std::ostringstream line;
    line.precision(7);
    for (int64_t i = 0; i < n; ++i) {
        int64_t best = 0;
        for (int64_t c = 1; c < classes; ++c)
            if (p[i][c] > p[i][best]) best = c;
        ++result.predicted_counts[static_cast<size_t>(best)];
        line.str("");
        line << i << "," << csvField(loaded.class_names[static_cast<size_t>(best)]) << "," << p[i][best];
        for (int64_t c = 0; c < classes; ++c) line << "," << p[i][c];
        out << line.str() << "\n";
    }
    if (!out) throw DataError(options.output_csv + ": writing the predictions failed");
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace hearth
