#include "StoreCommands.h"

#include "LadderTable.h"
#include "OptionChecks.h"
#include "ReportSamples.h"

#include "engine/config/RunName.h"
#include "engine/run/ModelExport.h"
#include "storage/ProcessIdentity.h"
#include "storage/RunStore.h"
#include "storage/report/BrowserPrint.h"
#include "storage/report/ComparisonPage.h"
#include "storage/report/RunPage.h"
#include "storage/report/RunReport.h"
#include "storage/tensorboard/TensorBoardExport.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

namespace hearth::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitBadArguments = 2;
constexpr int kExitBadDatabase = 3;

// Ends a command with an exit code and a one-line message.
struct CommandError {
    int code;
    std::string message;
};

struct Options {
    std::string run, name, text, format, out_path, status, tag, csv_path, baseline;
    std::vector<std::string> runs, words;
    int64_t limit = 0;
    int64_t sweep = 0;
    bool remove = false, yes = false, all = false;
};

std::unique_ptr<RunStore> openStore(const StoreCommandContext& context) {
    const std::string path = context.databasePath();
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw CommandError{kExitBadDatabase, "There is no run database at '" + path +
                                                 "' (runs are stored there by `hearth-cli run`; choose another with --db)."};
    try {
        return std::make_unique<RunStore>(path);
    } catch (const StoreError& e) {
        throw CommandError{kExitBadDatabase, e.what()};
    }
}

int64_t resolve(const RunStore& store, const std::string& id_or_prefix) {
    try {
        return store.resolveRun(id_or_prefix);
    } catch (const StoreError& e) {
        throw CommandError{kExitBadArguments, e.what()};
    }
}

// Runs `body`, turning every failure into a message on `err` and an exit code.
template <typename Body>
void runCommand(StoreCommandContext& context, int& exit_code, Body&& body) {
    try {
        body();
        exit_code = kExitOk;
    } catch (const CommandError& e) {
        *context.err << "error: " << e.message << "\n";
        exit_code = e.code;
    } catch (const StoreError& e) {
        *context.err << "error: " << e.what() << "\n";
        exit_code = kExitBadDatabase;
    }
}

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : separator) + p;
    return out;
}

// Writes `content` to the file `path`, or to standard output for "-". True when it went to a file.
bool writeOutput(StoreCommandContext& context, const std::string& path, const std::string& content) {
    if (path == "-") {
        *context.out << content;
        return false;
    }
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << content;
    file.close();
    if (!file)
        throw CommandError{kExitBadArguments, "Cannot write '" + path + "': " + std::generic_category().message(errno) + "."};
    return true;
}

void listRuns(StoreCommandContext& context, const Options& o) {
    const std::string path = context.databasePath();
    std::error_code ec;
    if (context.db_option.empty() && context.subcommand_db.empty() && !std::filesystem::exists(path, ec)) {
        *context.out << "No runs yet ('" << path << "' does not exist).\n";
        return;
    }
    const auto store = openStore(context);
    RunFilter filter;
    filter.status = o.status;
    filter.tag = o.tag;
    filter.text = o.name;
    filter.limit = o.limit;
    const auto runs = store->listRuns(filter);
    if (!o.csv_path.empty()) {
        if (writeOutput(context, o.csv_path, report::historyCsv(runs)))
            *context.out << "Wrote " << runs.size() << " run(s) to " << o.csv_path
                         << " (one row per run, config flattened)\n";
        return;
    }
    if (runs.empty()) {
        *context.out << "No runs match in '" << path << "'.\n";
        return;
    }
    *context.out << report::runsTable(runs);
}

void compareRuns(StoreCommandContext& context, const Options& o) {
    if (o.runs.size() < 2) throw CommandError{kExitBadArguments, "compare needs at least two runs."};
    const auto store = openStore(context);
    std::vector<report::StoredRun> runs;
    for (const auto& r : o.runs) runs.push_back(report::loadRun(*store, resolve(*store, r)));
    *context.out << report::comparisonText(runs);
    // The runs of one speed ladder: that ladder judged over all its repeats; of one memory ladder:
    // its table.
    std::optional<LadderOfRuns> ladder;
    try {
        ladder = ladderOfRuns(*store, summariesOf(runs));
    } catch (const StoreError& e) {
        *context.out << "\nThe runs are one ladder's, but its plan cannot be read: " << e.what() << "\n";
    }
    if (ladder && ladder->memory) {
        *context.out << "\nThe memory ladder (sweep #" << ladder->summary.sweep_id
                     << "):" << memoryLadderText(ladder->summary, *ladder->memory);
    } else if (ladder) {
        *context.out << "\nThe ladder (sweep #" << ladder->summary.sweep_id << "), judged over every repeat:\n"
                     << ladderSummaryText(ladder->summary);
    }
}

// Writes a report page as HTML, or prints it to PDF with a headless browser.
void writeReport(StoreCommandContext& context, const Options& o, const std::string& html, const std::string& what) {
    if (o.format == "html") {
        if (writeOutput(context, o.out_path, html)) *context.out << "Exported " << what << " to " << o.out_path << "\n";
        return;
    }
    if (o.out_path == "-") throw CommandError{kExitBadArguments, "--format pdf writes a file; give one with --out FILE.pdf."};
    try {
        report::writePdf(html, o.out_path);
    } catch (const report::ExportError& e) {
        throw CommandError{kExitBadArguments, e.what()};
    }
    *context.out << "Exported " << what << " as PDF to " << o.out_path << " (printed by " << report::findBrowser().value_or("?")
                 << ")\n";
}

std::string count(size_t n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

// Several runs, or a sweep's: one comparison page.
void exportComparison(StoreCommandContext& context, const Options& o, const RunStore& store) {
    if (o.format != "html" && o.format != "pdf")
        throw CommandError{kExitBadArguments, "A comparison (several runs, or --sweep) exports as --format html or pdf; "
                                              "export the runs one by one for " + o.format + "."};
    std::vector<int64_t> ids;
    std::string what;
    if (o.sweep > 0) {
        if (!o.runs.empty()) throw CommandError{kExitBadArguments, "Give runs or --sweep, not both."};
        try {
            ids = report::sweepRunIds(store, o.sweep);
        } catch (const StoreError& e) {
            throw CommandError{kExitBadArguments, e.what()};
        }
        what = "sweep #" + std::to_string(o.sweep) + " (" + count(ids.size(), "run") + ")";
    } else {
        for (const auto& r : o.runs) {
            const int64_t id = resolve(store, r);
            if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
        }
        what = "the comparison of " + count(ids.size(), "run");
    }
    std::optional<int64_t> baseline;
    if (!o.baseline.empty()) baseline = resolve(store, o.baseline);
    report::ComparisonPage page;
    try {
        page = report::loadComparisonPage(store, ids, baseline);
    } catch (const StoreError& e) {
        throw CommandError{kExitBadArguments, e.what()};
    }
    writeReport(context, o, report::comparisonPageHtml(page), what);
}

// The run's TorchScript module with its best checkpoint's weights.
void exportScriptedModel(StoreCommandContext& context, const Options& o, RunStore& store, int64_t id) {
    if (o.out_path == "-") throw CommandError{kExitBadArguments, "--format torchscript writes a file; give one with --out FILE.pt."};
    const auto summary = store.run(id);
    if (!summary) throw CommandError{kExitBadArguments, "run #" + std::to_string(id) + " has no stored config"};
    if (const std::string problem = store.checkpointProblem(id); !problem.empty())
        throw CommandError{kExitBadArguments, problem};
    const std::string checkpoint = store.bestCheckpoint(id);
    try {
        exportTorchScript(configFromJson(summary->config_json), checkpoint, o.out_path);
    } catch (const ConfigError& e) {
        throw CommandError{kExitBadArguments, e.what()};
    }
    *context.out << "Exported run #" << id << " as TorchScript to " << o.out_path
                 << " (load it with torch.jit.load)\n";
}

void exportRun(StoreCommandContext& context, const Options& o) {
    const auto store = openStore(context);
    if (o.sweep > 0 || o.runs.size() > 1) {
        exportComparison(context, o, *store);
        return;
    }
    if (o.runs.empty()) throw CommandError{kExitBadArguments, "export needs a run (or several runs, or --sweep ID)."};
    const int64_t id = resolve(*store, o.runs.front());
    if (o.format == "tensorboard") {
        if (o.out_path == "-")
            throw CommandError{kExitBadArguments, "--format tensorboard writes a directory of event files; give one with --out DIR."};
        report::TensorBoardExport written;
        try {
            written = report::exportTensorBoard(*store, id, o.out_path);
        } catch (const report::ExportError& e) {
            throw CommandError{kExitBadArguments, e.what()};
        }
        *context.out << "Exported run #" << id << " for TensorBoard to " << written.run_dir << " (" << written.step_points
                     << " steps, " << written.epoch_points << " epochs, " << written.hparams
                     << " hyperparameters)\nView it with: tensorboard --logdir " << o.out_path << "\n";
        return;
    }
    if (o.format == "torchscript") {
        exportScriptedModel(context, o, *store, id);
        return;
    }
    if (o.format == "html" || o.format == "pdf") {
        report::RunPage page = report::loadRunPage(*store, id);
        addSampleContent(page);
        const auto missing = report::missingParts(page);
        writeReport(context, o, report::runPageHtml(page),
                    "run #" + std::to_string(id) + " (" + count(page.steps.size(), "step") + ", " +
                        count(page.samples.size(), "misclassified sample") +
                        (missing.empty() ? "" : "; " + count(missing.size(), "note") + " on what it lacks") + ")");
        return;
    }
    std::string content;
    if (o.format == "csv") content = report::metricsCsv(*store, id);
    else if (o.format == "json") content = report::runJson(*store, id);
    else content = report::runMarkdown(report::loadRun(*store, id));
    if (writeOutput(context, o.out_path, content))
        *context.out << "Exported run #" << id << " (" << o.format << ") to " << o.out_path << "\n";
}

void tagRun(StoreCommandContext& context, const Options& o) {
    const auto store = openStore(context);
    const int64_t id = resolve(*store, o.run);
    std::vector<std::string> tags = store->run(id)->tags;
    for (const auto& tag : tagsFromWords(o.words)) {
        const auto it = std::find(tags.begin(), tags.end(), tag);
        if (o.remove && it != tags.end()) tags.erase(it);
        if (!o.remove && it == tags.end()) tags.push_back(tag);
    }
    store->setTags(id, tags);
    const auto now = store->run(id)->tags;
    *context.out << "Run #" << id << " tags: " << (now.empty() ? "(none)" : joined(now, ", ")) << "\n";
}

// Deletion asks first unless --yes; with no answer (EOF, no terminal) it refuses.
void deleteRuns(StoreCommandContext& context, const Options& o) {
    const auto store = openStore(context);
    std::vector<RunSummary> victims;
    for (const auto& r : o.runs) {
        auto run = store->run(resolve(*store, r));
        // `running` here means alive: a dead writer's run reads as `interrupted`.
        if (run->status == "running" && run->hostname == process::hostName())
            throw CommandError{kExitBadArguments, "Run #" + std::to_string(run->id) + " is still being written by process " +
                                                      std::to_string(run->pid) + "; stop it before deleting it."};
        victims.push_back(std::move(*run));
    }
    std::vector<std::string> labels;
    labels.reserve(victims.size());
    for (const auto& v : victims) labels.push_back("#" + std::to_string(v.id) + " " + v.name);
    if (!o.yes) {
        *context.err << "Delete " << joined(labels, ", ") << " and their files? [y/N] " << std::flush;
        std::string answer;
        if (!std::getline(*context.in, answer))
            throw CommandError{kExitBadArguments, "No confirmation on standard input; nothing deleted (pass --yes to delete without asking)."};
        if (answer != "y" && answer != "Y" && answer != "yes") {
            *context.out << "Nothing deleted.\n";
            return;
        }
    }
    for (const auto& v : victims) store->deleteRun(v.id);
    *context.out << "Deleted " << joined(labels, ", ") << "\n";
}

CLI::App* subcommand(CLI::App& app, StoreCommandContext& context, const std::string& name, const std::string& help) {
    auto* sub = app.add_subcommand(name, help);
    sub->add_option("--db", context.subcommand_db, "Run database (default: the app's --db, $HEARTH_DB, or "
                                                   "~/.local/share/hearth/runs.sqlite)");
    return sub;
}

void registerListing(CLI::App& app, StoreCommandContext& context, int& exit_code, std::shared_ptr<Options> o) {
    auto* runs = subcommand(app, context, "runs", "List stored runs, newest first");
    runs->add_option("--status", o->status, "Only runs with this status")
        ->check(CLI::IsMember({"running", "completed", "failed", "stopped", "interrupted"}));
    runs->add_option("--tag", o->tag, "Only runs with this tag");
    runs->add_option("--name", o->name, "Only runs whose name, notes or tags contain this text");
    runs->add_option("--limit", o->limit, "At most this many runs (0: every run)")->check(atLeast(0, "every run"));
    runs->add_option("--csv", o->csv_path,
                     "Write the runs to this CSV file instead ('-': standard output): one row per run, its "
                     "metrics and its config flattened, for spreadsheets and pandas");
    runs->callback([&context, &exit_code, o] { runCommand(context, exit_code, [&] { listRuns(context, *o); }); });

    auto* show = subcommand(app, context, "show", "Config, environment, timings and report of a run");
    show->add_option("run", o->run, "Run id or unique name prefix")->required();
    show->add_flag("--all", o->all, "Print every config key, not only the ones set away from their defaults");
    show->callback([&context, &exit_code, o] {
        runCommand(context, exit_code, [&] {
            const auto store = openStore(context);
            *context.out << report::runText(report::loadRun(*store, resolve(*store, o->run)), o->all);
        });
    });

    auto* compare = subcommand(app, context, "compare", "Config differences, metrics and speedup of runs");
    compare->add_option("runs", o->runs, "Two or more run ids or name prefixes")->required();
    compare->callback([&context, &exit_code, o] { runCommand(context, exit_code, [&] { compareRuns(context, *o); }); });

    auto* exporter = subcommand(app, context, "export",
                                "Write a run as an HTML or PDF report, CSV metrics, JSON, Markdown or TensorBoard events; "
                                "several runs (or --sweep) as one comparison report");
    exporter->add_option("runs", o->runs,
                         "Run id or unique name prefix; two or more make a comparison report (html, pdf)");
    exporter->add_option("--sweep", o->sweep, "Compare the runs of this sweep (the id `hearth-cli sweep` printed: \"Sweep #N stored\")")
        ->check(atLeast(1));
    exporter->add_option("--baseline", o->baseline, "Comparisons: the run speedups are measured against (default: the first)");
    exporter->add_option("--format", o->format,
                         "html (a self-contained report with interactive charts) | pdf (that report printed by a "
                         "headless Chromium) | csv (Lightning metrics.csv layout) | json | md | tensorboard | "
                         "torchscript (a TorchScript model's run: its module with the best checkpoint's weights, "
                         "for torch.jit.load)")
        ->required()
        ->check(CLI::IsMember({"html", "pdf", "csv", "json", "md", "tensorboard", "torchscript"}));
    exporter->add_option("-o,--out,--output", o->out_path,
                         "Output file ('-' for standard output, not for pdf); for tensorboard a directory, where the run "
                         "becomes the subdirectory <id>-<name>")
        ->required();
    exporter->callback([&context, &exit_code, o] { runCommand(context, exit_code, [&] { exportRun(context, *o); }); });
}

void registerEditing(CLI::App& app, StoreCommandContext& context, int& exit_code, std::shared_ptr<Options> o) {
    auto* tag = subcommand(app, context, "tag", "Add (or with --remove, remove) tags of a run");
    tag->add_option("run", o->run, "Run id or unique name prefix")->required();
    tag->add_option("tags", o->words, "Tags")->required();
    tag->add_flag("--remove", o->remove, "Remove the tags instead of adding them");
    tag->callback([&context, &exit_code, o] { runCommand(context, exit_code, [&] { tagRun(context, *o); }); });

    auto* note = subcommand(app, context, "note", "Set the notes of a run");
    note->add_option("run", o->run, "Run id or unique name prefix")->required();
    note->add_option("text", o->words, "Note text (words are joined with spaces)")->required();
    note->callback([&context, &exit_code, o] {
        runCommand(context, exit_code, [&] {
            const auto store = openStore(context);
            const int64_t id = resolve(*store, o->run);
            store->setNotes(id, joined(o->words, " "));
            *context.out << "Run #" << id << " notes saved.\n";
        });
    });

    auto* rename = subcommand(app, context, "rename", "Rename a run");
    rename->add_option("run", o->run, "Run id or unique name prefix")->required();
    rename->add_option("name", o->name, "New name")->required();
    rename->callback([&context, &exit_code, o] {
        runCommand(context, exit_code, [&] {
            const std::string name = oneLine(o->name);
            if (name.empty()) throw CommandError{kExitBadArguments, "A run's name cannot be blank."};
            const auto store = openStore(context);
            const int64_t id = resolve(*store, o->run);
            store->rename(id, name);
            *context.out << "Run #" << id << " is now '" << name << "'.\n";
        });
    });

    auto* remove = subcommand(app, context, "delete", "Delete runs and their files (asks first)");
    remove->add_option("runs", o->runs, "Run ids or unique name prefixes")->required();
    remove->add_flag("-y,--yes", o->yes, "Do not ask for confirmation");
    remove->callback([&context, &exit_code, o] { runCommand(context, exit_code, [&] { deleteRuns(context, *o); }); });
}

}  // namespace

std::string StoreCommandContext::databasePath() const {
    if (!subcommand_db.empty()) return subcommand_db;
    if (!db_option.empty()) return db_option;
    return RunStore::defaultPath();
}

void registerStoreCommands(CLI::App& app, StoreCommandContext& context, int& exit_code) {
    // One options block for all subcommands: CLI11 fills only the one being run.
    auto options = std::make_shared<Options>();
    registerListing(app, context, exit_code, options);
    registerEditing(app, context, exit_code, options);
}

}  // namespace hearth::cli
