#include "engine/run/PredictionsCsv.h"

#include "engine/config/ExperimentConfig.h"
#include "engine/data/DataError.h"
#include "engine/data/formats/CsvReader.h"
#include "engine/data/formats/WholeFile.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <sstream>

#include <unistd.h>

namespace hearth {

void checkPredictionsOutput(const std::string& output, const std::string& input) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path path(output);
    if (output.empty()) throw ConfigError("--output", "give the CSV file to write the predictions to");
    if (!input.empty() && fs::exists(path, ec) && fs::equivalent(path, fs::path(input), ec))
        throw ConfigError("--output", "'" + output + "' is the input file: the predictions would overwrite it");
    if (fs::is_directory(path, ec)) throw DataError(output + ": is a folder, not a file to write the predictions to");
    const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
    if (!fs::is_directory(folder, ec))
        throw DataError(output + ": cannot write the predictions: no folder '" + folder.string() + "'");
    const bool exists = fs::exists(path, ec);
    if (::access(exists ? path.c_str() : folder.c_str(), W_OK) != 0)
        throw DataError(output + ": cannot write the predictions: " +
                        (exists ? "the file is read-only" : "the folder '" + folder.string() + "' is read-only"));
}

std::vector<int64_t> writePredictionsCsv(const std::string& path, const PredictionsCsvColumns& columns,
                                         const torch::Tensor& probabilities,
                                         const std::vector<std::string>& class_names, PredictResult& result) {
    const int64_t n = probabilities.size(0), classes = probabilities.size(1);
    result.predicted_counts.assign(static_cast<size_t>(classes), 0);
    std::vector<int64_t> predicted(static_cast<size_t>(n));
    std::vector<std::string> unknown;   // true classes the run does not have
    // Whole or not at all: a failure (a full disk, a stop) leaves an earlier file as it was.
    const std::string failed = writeWholeFile(path, [&](std::ostream& out) {
        out << columns.lead_name << ",predicted,confidence";
        if (columns.truth) out << ",true";
        for (const auto& name : class_names) out << "," << csvField("prob:" + name);
        out << "\n";
        const auto p = probabilities.accessor<float, 2>();
        std::ostringstream line;
        line.precision(7);
        for (int64_t i = 0; i < n; ++i) {
            int64_t best = 0;
            for (int64_t c = 1; c < classes; ++c)
                if (p[i][c] > p[i][best]) best = c;
            predicted[static_cast<size_t>(i)] = best;
            ++result.predicted_counts[static_cast<size_t>(best)];
            line.str("");
            line << columns.lead(i) << "," << csvField(class_names[static_cast<size_t>(best)]) << "," << p[i][best];
            if (columns.truth) {
                const std::string truth = columns.truth(i);
                line << "," << csvField(truth);
                if (std::find(class_names.begin(), class_names.end(), truth) != class_names.end()) {
                    ++result.labelled;
                    if (truth == class_names[static_cast<size_t>(best)]) ++result.correct;
                } else if (!truth.empty() && std::find(unknown.begin(), unknown.end(), truth) == unknown.end()) {
                    unknown.push_back(truth);
                }
            }
            for (int64_t c = 0; c < classes; ++c) line << "," << p[i][c];
            out << line.str() << "\n";
        }
    });
    if (!failed.empty()) throw DataError(path + ": cannot write the predictions (" + failed + ")");
    if (!unknown.empty())
        result.notes.push_back("labels that are not one of the model's classes were not scored: " + bracketList(unknown));
    return predicted;
}

std::string scoredLabelColumn(const std::string& path, const std::vector<std::string>& header, const PredictModel& model,
                              const PredictOptions& options) {
    if (options.label_column) return header[headerColumn(path, header, *options.label_column, "label", "--label-column")];
    if (model.run_config &&
        std::find(header.begin(), header.end(), model.run_config->data.label_column) != header.end())
        return model.run_config->data.label_column;
    return "";
}

void cannotLoadCheckpoint(const PredictModel& model, const std::exception& why) {
    throw DataError(model.checkpoint + ": cannot be loaded into the run's model (" + std::string(why.what()).substr(0, 300) +
                    ")");
}

torch::Device predictionDevice() {
    return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
}

torch::Tensor classProbabilities(torch::nn::Module& model, const torch::Device& device, int64_t n, int64_t classes,
                                 int64_t batch_size, std::vector<int64_t> order,
                                 const std::function<torch::Tensor(const std::vector<int64_t>& rows)>& logits,
                                 const PredictProgress& on_progress) {
    if (order.empty()) {
        order.resize(static_cast<size_t>(n));
        std::iota(order.begin(), order.end(), int64_t{0});
    }
    batch_size = std::max<int64_t>(batch_size, 1);
    model.to(device);
    model.eval();
    torch::NoGradGuard no_grad;
    auto probabilities = torch::empty({n, classes}, torch::kFloat32);
    for (int64_t begin = 0; begin < n; begin += batch_size) {
        const std::vector<int64_t> rows(order.begin() + begin, order.begin() + std::min(n, begin + batch_size));
        const auto probs = torch::softmax(logits(rows).to(torch::kFloat32), 1).cpu();
        probabilities.index_copy_(0, torch::tensor(rows, torch::kInt64), probs);
        if (on_progress) on_progress(std::min(n, begin + batch_size), n);
    }
    return probabilities;
}

}  // namespace hearth
