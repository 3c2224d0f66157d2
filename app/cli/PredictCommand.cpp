#include "PredictCommand.h"

#include "OptionChecks.h"
#include "RunCommand.h"

#include "engine/data/DataError.h"
#include "engine/run/ImagePredictor.h"
#include "engine/run/TablePredictor.h"
#include "engine/run/TextPredictor.h"
#include "storage/RunStore.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <unistd.h>

namespace hearth::cli {
namespace {

struct PredictArgs {
    std::string run, model, tokenizer;
    PredictOptions options;
    std::optional<int64_t> max_length;
    std::vector<std::string> images;
    bool json = false;
    bool events = false;
};

// How far the forward passes are: `--events` lines for the workbench (at most ten a second, and
// the last), a line overwritten in place on a terminal, else nothing.
PredictProgress progressReporter(const StoreCommandContext& context, bool events, bool json, const std::string& what) {
    using Clock = std::chrono::steady_clock;
    if (events) {
        auto last = std::make_shared<Clock::time_point>();
        std::ostream* out = context.out;
        return [last, out, what](int64_t done, int64_t total) {
            const auto now = Clock::now();
            if (done < total && now - *last < std::chrono::milliseconds(100)) return;
            *last = now;
            *out << nlohmann::json{{"event", "predict_progress"}, {"done", done}, {"total", total}, {"what", what}}.dump()
                 << std::endl;
        };
    }
    if (json || !isatty(STDERR_FILENO)) return {};
    return [what](int64_t done, int64_t total) {
        std::fprintf(stderr, "\r\033[K%3.0f%%  %lld of %lld %s", 100.0 * static_cast<double>(done) / static_cast<double>(total),
                     static_cast<long long>(done), static_cast<long long>(total), what.c_str());
        if (done >= total) std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
    };
}

// `--json` and `--events`: the summary as one line for a program (the workbench's Predict dialog) to read.
std::string summaryJson(const PredictResult& result, const std::string& what, const std::string& output) {
    nlohmann::json j;
    j["event"] = "predict_summary";
    j["predicted"] = result.rows;
    j["what"] = what;
    j["device"] = result.device;
    j["seconds"] = result.seconds;
    j["output"] = output;
    j["labelled"] = result.labelled;
    j["correct"] = result.correct;
    j["classes"] = nlohmann::json::object();
    for (size_t c = 0; c < result.class_names.size(); ++c) j["classes"][result.class_names[c]] = result.predicted_counts[c];
    j["notes"] = result.notes;
    return j.dump();
}

// The run's config, class names and best checkpoint.
PredictModel fromRun(const StoreCommandContext& context, const std::string& run) {
    const std::string path = context.databasePath();
    if (!std::filesystem::exists(path))
        throw DataError("there is no run database at '" + path + "' (choose one with --db)");
    RunStore store(path);
    int64_t id = 0;
    try {
        id = store.resolveRun(run);
    } catch (const StoreError& e) {
        throw ConfigError("--run", e.what());
    }
    const auto summary = store.run(id);
    const auto started = store.runStarted(id);
    if (!summary || !started) throw ConfigError("--run", "run #" + std::to_string(id) + " has no stored config");
    PredictModel model;
    model.run_config = configFromJson(summary->config_json);
    model.class_names = started->class_names;
    if (const std::string problem = store.checkpointProblem(id); !problem.empty()) throw DataError(problem);
    model.checkpoint = store.bestCheckpoint(id);
    return model;
}

int predict(const StoreCommandContext& context, PredictArgs args) {
    try {
        if (args.run.empty() == args.model.empty())
            throw ConfigError("--run", "give either --run RUN or --model FOLDER");
        PredictModel model;
        if (!args.run.empty()) {
            model = fromRun(context, args.run);
        } else {
            model.folder = args.model;
        }
        if (args.images.empty() == args.options.input_csv.empty())
            throw ConfigError("--input", "give either --input CSV (texts or table rows) or --images FILES/FOLDERS");
        if (model.run_config && isImageKind(model.run_config->data.kind) && args.images.empty())
            throw ConfigError("--images", "the run trained on images (" + model.run_config->data.kind +
                                              "): give image files or folders with --images, not --input");
        if (!args.images.empty() && args.options.label_column)
            throw ConfigError("--label-column", "images are labelled by their class folders, not a column");
        PredictResult result;
        // What is predicted, and what of it is scored.
        const bool images = !args.images.empty(), table = !images && model.run_config && model.run_config->data.kind == "csv";
        const std::string what = images ? "images" : table ? "rows" : "texts";
        const std::string labelled = images ? "images in class folders" : table ? "rows with a label" : "texts with a label";
        const std::string output = args.options.output_csv;
        args.options.on_progress = progressReporter(context, args.events, args.json, what);
        if (images) {
            ImagePredictOptions options;
            options.inputs = args.images;
            options.output_csv = args.options.output_csv;
            options.batch_size = args.options.batch_size;
            options.on_progress = args.options.on_progress;
            result = predictImages(model, options);
        } else if (table) {
            result = predictTableCsv(model, args.options);
        } else {
            if (!args.tokenizer.empty()) args.options.tokenizer = args.tokenizer;
            args.options.max_length = args.max_length;
            result = predictTextCsv(model, args.options);
        }
        if (args.json || args.events) {
            *context.out << summaryJson(result, what, output) << "\n";
            return kExitOk;
        }
        for (const auto& note : result.notes) *context.err << "note: " << note << "\n";
        *context.out << "Predicted " << result.rows << " " << what << " on " << result.device << " in " << result.seconds
                     << " s -> " << output << "\n";
        if (result.labelled > 0)
            *context.out << "  accuracy on the " << result.labelled << " " << labelled << ": "
                         << static_cast<double>(result.correct) / static_cast<double>(result.labelled) << "\n";
        for (size_t c = 0; c < result.class_names.size(); ++c)
            *context.out << "  " << result.class_names[c] << ": " << result.predicted_counts[c] << "\n";
        return kExitOk;
    } catch (const ConfigError& e) {
        *context.err << "error: " << e.what() << "\n";
        return kExitBadConfig;
    } catch (const DataError& e) {
        *context.err << "error: " << e.what() << "\n";
        return kExitBadData;
    } catch (const StoreError& e) {
        *context.err << "error: " << e.what() << "\n";
        return kExitBadData;
    }
}

}  // namespace

void registerPredictCommand(CLI::App& app, StoreCommandContext& context, int& exit_code) {
    auto args = std::make_shared<PredictArgs>();
    auto* sub = app.add_subcommand("predict", "Classify the texts or table rows of a CSV, or image files and folders, with "
                                              "a trained run (or texts with a checkpoint folder)");
    sub->add_option("--db", context.subcommand_db, "Run database (default: the app's --db or $HEARTH_DB)");
    // The run as the store's other commands take it (`hearth-cli predict 3 ...`), or with --run.
    sub->add_option("run,--run", args->run, "A stored run (id or unique name prefix): its best checkpoint");
    sub->add_option("--model", args->model, "A Hugging Face checkpoint folder with a classification head");
    sub->add_option("--input", args->options.input_csv,
                    "CSV file with a header: a text column (text runs) or the training file's feature columns (table "
                    "runs)");
    sub->add_option("--images", args->images,
                    "Image files and folders (.jpg/.jpeg/.png; a folder of class subfolders is labelled) for a run "
                    "trained on images (an image folder, or idx such as Fashion-MNIST: grey, at its size)");
    sub->add_option("-o,--output,--out", args->options.output_csv,
                    "CSV to write: index (texts, rows) or file (images), predicted, confidence, true (images; rows with the "
                    "label column), prob:<class>...")
        ->required();
    sub->add_option("--text-column", args->options.text_column, "The input's text column (default: text)");
    sub->add_option("--label-column", args->options.label_column,
                    "The input's column of true classes, which scores the predictions (default: the run's "
                    "data.label_column where the input has it)");
    sub->add_option("--batch-size", args->options.batch_size, "Texts or images per forward pass (default: 32)")
        ->check(atLeast(1));
    sub->add_option("--max-length", args->max_length, "Tokens per text (default: the run's data.max_length)")
        ->check(between(3, 8192));
    sub->add_option("--tokenizer", args->tokenizer, "vocab.txt, tokenizer.json or folder (default: the model's)");
    sub->add_flag("--json", args->json,
                  "Print the summary as one JSON line (predicted, what, device, seconds, output, labelled, correct, "
                  "classes, notes) instead of text");
    sub->add_flag("--events", args->events,
                  "Print progress as JSON lines ({\"event\": \"predict_progress\", \"done\", \"total\"}, at most ten a "
                  "second), then the --json summary (the workbench's Predict dialog)");
    sub->callback([&context, &exit_code, args] { exit_code = predict(context, *args); });
}

}  // namespace hearth::cli
