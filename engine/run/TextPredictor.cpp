#include "engine/run/TextPredictor.h"

#include "engine/data/DataError.h"
#include "engine/data/formats/CsvReader.h"
#include "engine/models/ModelRegistry.h"
#include "engine/monitor/Elapsed.h"
#include "engine/run/PredictionsCsv.h"
#include "engine/strategy/CheckpointFile.h"
#include "engine/text/BertTokenizer.h"
#include "engine/text/TextCsv.h"
#include "engine/text/TextDataset.h"
#include "engine/text/TokenizedCorpus.h"
#include "engine/weights/HfCheckpoint.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <numeric>

namespace hearth {
namespace {

namespace fs = std::filesystem;

struct LoadedModel {
    std::shared_ptr<ClassifierImpl> model;
    BertTokenizer tokenizer;
    std::vector<std::string> class_names;
    int64_t max_length = 512;
};

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
                    spec.label_names, std::min<int64_t>(spec.max_positions, 512)};
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


}  // namespace

PredictResult predictTextCsv(const PredictModel& source, const PredictOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    if (options.batch_size < 1) throw ConfigError("--batch-size", "must be at least 1");
    checkPredictionsOutput(options.output_csv, options.input_csv);
    // The input first: a wrong file is reported before a model is loaded. Texts are read as
    // training reads them (<br /> as a line break); an empty text is classified too.
    // A column of true classes (the run's label column, or --label-column) scores the predictions.
    const auto header = readCsvHeader(options.input_csv);
    const std::string label_column = header ? scoredLabelColumn(options.input_csv, *header, source, options) : "";
    LabelledTexts input = readTextCsv(options.input_csv, options.text_column, label_column, /*for_prediction=*/true);
    const std::vector<std::string> labels = std::move(input.labels);

    LoadedModel loaded = source.run_config ? fromRun(source, options) : fromFolder(source, options);
    const int64_t max_length = options.max_length.value_or(loaded.max_length);
    TokenizeOptions to;
    to.max_length = max_length;
    TokenizedCorpus corpus = tokenizeTexts(input.texts, loaded.tokenizer, to).corpus;
    const int64_t truncated = corpus.truncated;
    const auto n = corpus.size();
    // The training path's batches: each padded to its longest sample, built by TextDataset.
    TextDatasetOptions dataset_options;
    dataset_options.max_length = max_length;
    dataset_options.pad_id = loaded.tokenizer.padId();
    std::vector<int64_t> rows(static_cast<size_t>(n));
    std::iota(rows.begin(), rows.end(), 0);
    const TextDataset texts(std::move(corpus), std::move(input.texts), std::vector<int64_t>(rows.size(), 0), rows,
                            loaded.class_names, dataset_options);

    const torch::Device device = predictionDevice();
    const auto classes = static_cast<int64_t>(loaded.class_names.size());
    // Longest first in batches (little padding); results land in their rows.
    std::vector<int64_t> order = rows;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return texts.sampleLength(a) > texts.sampleLength(b); });
    const auto probabilities = classProbabilities(
        *loaded.model, device, n, classes, options.batch_size, std::move(order), [&](const std::vector<int64_t>& batch_rows) {
            return loaded.model->forwardBatch(onDevice(texts.getBatch(batch_rows), device, /*non_blocking=*/false));
        }, options.on_progress);

    PredictResult result;
    result.rows = n;
    result.class_names = loaded.class_names;
    result.device = device.str();
    if (truncated > 0)
        result.notes.push_back(std::to_string(truncated) + " of " + std::to_string(n) + " texts have more than " +
                               std::to_string(max_length) + " tokens and were truncated");
    PredictionsCsvColumns columns;
    columns.lead_name = "index";
    columns.lead = [](int64_t i) { return std::to_string(i); };
    if (!labels.empty()) columns.truth = [&](int64_t i) { return labels[static_cast<size_t>(i)]; };
    writePredictionsCsv(options.output_csv, columns, probabilities, loaded.class_names, result);
    result.seconds = secondsSince(start);
    return result;
}

}  // namespace hearth
