#include "engine/run/TablePredictor.h"

#include "engine/data/CsvDataset.h"
#include "engine/data/DataError.h"
#include "engine/data/DataModule.h"
#include "engine/models/ModelRegistry.h"
#include "engine/monitor/Elapsed.h"
#include "engine/run/NormalizationFile.h"
#include "engine/run/PredictionsCsv.h"
#include "engine/strategy/CheckpointFile.h"

#include <algorithm>
#include <chrono>

namespace hearth {
namespace {

// The columns of `table` that hold each of the model's features, in the model's order.
std::vector<size_t> featureColumns(const CsvTable& table, const std::vector<std::string>& features) {
    std::vector<std::string> missing;
    std::vector<size_t> columns;
    for (const auto& name : features) {
        const auto first = std::find(table.header.begin(), table.header.end(), name);
        if (first == table.header.end()) {
            missing.push_back(name);
            continue;
        }
        if (std::find(first + 1, table.header.end(), name) != table.header.end())
            throw DataError(table.path + ":1: column '" + name + "' appears twice in the header");
        columns.push_back(static_cast<size_t>(first - table.header.begin()));
    }
    if (missing.size() == 1)   // names the column likely meant
        headerColumn(table.path, table.header, missing.front(), "feature", "");
    if (!missing.empty())
        throw DataError(table.path + ": no columns " + bracketList(missing) + ", which the run's model reads; the columns are " +
                        bracketList(table.header));
    return columns;
}

}  // namespace

PredictResult predictTableCsv(const PredictModel& source, const PredictOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    if (!source.run_config) throw ConfigError("--run", "table predictions need a run (--run) trained on a CSV table");
    const ExperimentConfig& config = *source.run_config;
    if (config.data.kind != "csv")
        throw ConfigError("--input", "the run trained on " + config.data.kind + " data, not a CSV table");
    if (options.batch_size < 1) throw ConfigError("--batch-size", "must be at least 1");
    checkPredictionsOutput(options.output_csv, options.input_csv);
    const CsvTable table = readCsvFile(options.input_csv);
    if (table.records.empty()) throw DataError(table.path + ": no data rows after the header");

    // The run's statistics as it stored them; a run from before they were stored reads its
    // training file again and splits it with its seed.
    DataSplits::Normalization trained;
    PredictResult result;
    if (const auto stored = readNormalizationFile(source.checkpoint, "csv")) {
        trained = stored->normalization;
    } else {
        try {
            trained = loadDataSplits(config.data, config.seed).normalization;
        } catch (const DataError& e) {
            throw DataError(std::string("the run standardised its features with its training rows' statistics, and "
                                        "those cannot be read here (data.path '") +
                            config.data.path + "'): " + e.what());
        }
        result.notes.push_back("the run stored no normalization (it is older): its training rows' statistics were "
                               "computed again from " + config.data.path);
    }
    const std::vector<std::string>& features = trained.features;
    const std::vector<size_t> feature_cols = featureColumns(table, features);
    const std::string label_name = scoredLabelColumn(table.path, table.header, source, options);
    const bool has_label = !label_name.empty();
    const auto label_col = static_cast<size_t>(
        std::find(table.header.begin(), table.header.end(), label_name) - table.header.begin());

    std::vector<std::string> unread;
    for (size_t c = 0; c < table.header.size(); ++c)
        if ((!has_label || c != label_col) && std::find(feature_cols.begin(), feature_cols.end(), c) == feature_cols.end())
            unread.push_back(table.header[c]);
    if (!unread.empty())
        result.notes.push_back("columns the run's model does not read were left aside: " + bracketList(unread));
    if (!table.encoding_note.empty()) result.notes.push_back(table.encoding_note);

    const auto n = static_cast<int64_t>(table.records.size());
    const auto f = static_cast<int64_t>(features.size());
    auto x = torch::empty({n, f}, torch::kFloat32);
    auto xa = x.accessor<float, 2>();
    std::vector<std::string> truth(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
        const CsvRecord& record = table.records[static_cast<size_t>(r)];
        for (int64_t c = 0; c < f; ++c) {
            const auto k = static_cast<size_t>(c);
            const double value = featureValue(table.path, table.header, record, feature_cols[k]);
            xa[r][c] = static_cast<float>((value - trained.scaling.mean[k]) / trained.scaling.std[k]);
        }
        if (has_label) truth[static_cast<size_t>(r)] = labelValue(record.fields[label_col]);
    }

    const auto classes = static_cast<int64_t>(source.class_names.size());
    auto model = createModel(config.model, ModelInput{{f}, classes});
    try {
        loadCheckpointFile(source.checkpoint, *model);
    } catch (const std::exception& e) {
        cannotLoadCheckpoint(source, e);
    }
    const torch::Device device = predictionDevice();
    const auto probabilities =
        classProbabilities(*model, device, n, classes, options.batch_size, {}, [&](const std::vector<int64_t>& rows) {
            // In the file's order (no `order` given): each batch's rows are consecutive.
            return model->forward(x.narrow(0, rows.front(), static_cast<int64_t>(rows.size())).to(device));
        }, options.on_progress);

    result.rows = n;
    result.class_names = source.class_names;
    result.device = device.str();
    PredictionsCsvColumns columns;
    columns.lead_name = "index";
    columns.lead = [](int64_t i) { return std::to_string(i); };
    if (has_label) columns.truth = [&](int64_t i) { return truth[static_cast<size_t>(i)]; };
    writePredictionsCsv(options.output_csv, columns, probabilities, source.class_names, result);
    result.seconds = secondsSince(start);
    return result;
}

}  // namespace hearth
