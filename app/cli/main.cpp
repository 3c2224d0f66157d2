// hearth-cli: the headless twin of the workbench (servers, CI, GPU machines).
#include "LocalLauncher.h"
#include "PredictCommand.h"
#include "ResumeCommand.h"
#include "RunCommand.h"
#include "StoreCommands.h"
#include "SweepCommand.h"
#include "TuneCommand.h"

#include "engine/config/ConfigSchema.h"
#include "engine/config/DeviceInfo.h"
#include "engine/config/KeyNames.h"
#include "engine/config/Spelling.h"
#include "engine/weights/ModelFileInfo.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

namespace {

std::vector<std::string> subcommandNames(CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
    return names;
}

// The long option names of `app` ("--set"; short ones are single letters, where every other is
// one letter off).
std::vector<std::string> longOptionNames(const CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::Option* option : app.get_options())
        for (const auto& l : option->get_lnames()) names.push_back("--" + l);
    return names;
}

// The first word where a command goes, when it is no command (CLI11 says only "A subcommand is
// required"); "" when it is one or there is none. `command` is set to the command when it is one.
std::string unknownCommand(CLI::App& app, int argc, char** argv, CLI::App*& command) {
    command = nullptr;
    const auto names = subcommandNames(app);
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--db") { ++i; continue; }   // the top level's one option with a value
        if (arg.rfind('-', 0) == 0) continue;
        if (std::find(names.begin(), names.end(), arg) == names.end()) return arg;
        command = app.get_subcommand(arg);
        return "";
    }
    return "";
}

// Each long option on the command line that neither hearth-cli nor `command` has, with the options
// it likely meant; a config key's name as an option ("--precision") with the --set that sets it.
void printOptionHints(const CLI::App& app, const CLI::App* command, int argc, char** argv) {
    std::vector<std::string> known = longOptionNames(app);
    if (command) {
        const auto own = longOptionNames(*command);
        known.insert(known.end(), own.begin(), own.end());
    }
    const bool takes_set = std::find(known.begin(), known.end(), "--set") != known.end();
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--") break;
        if (arg.rfind("--", 0) != 0) continue;
        const std::string name = arg.substr(0, arg.find('='));
        if (std::find(known.begin(), known.end(), name) != known.end()) continue;
        const char* where = command ? " " : "";
        const char* command_name = command ? command->get_name().c_str() : "";
        if (const std::string hint = hearth::didYouMean(name, known, ""); !hint.empty()) {
            std::fprintf(stderr, "hint: hearth-cli%s%s has no option %s%s\n", where, command_name, name.c_str(), hint.c_str());
            continue;
        }
        if (!takes_set) continue;
        // The value typed with it ("--precision=bf16", "--precision bf16"), else a placeholder.
        std::string value = "VALUE";
        if (const size_t eq = arg.find('='); eq != std::string::npos)
            value = arg.substr(eq + 1);
        else if (i + 1 < argc && argv[i + 1][0] != '-')
            value = argv[i + 1];
        // "--precision": trainer.precision; "--max-epochs": trainer.max_epochs; "--learning-rate"
        // (the form's label): optimizer.lr; "--trainer.precision": itself.
        const std::string word = name.substr(2);
        const auto keys = hearth::findConfigKey(word) ? std::vector<std::string>{word} : hearth::configKeysCalled(word);
        for (const auto& key : keys)
            std::fprintf(stderr, "hint: config keys are set with --set: --set %s=%s (hearth-cli keys %s says more)\n",
                         key.c_str(), value.c_str(), key.c_str());
    }
}

// CLI11's message for a value outside an option's set ("--format: htm not in {html,pdf,csv}"):
// the value likely meant.
void printChoiceHint(const std::string& message) {
    const size_t colon = message.find(": "), not_in = message.rfind(" not in {");
    if (colon == std::string::npos || not_in == std::string::npos || not_in < colon || message.back() != '}') return;
    const std::string value = message.substr(colon + 2, not_in - colon - 2);
    std::vector<std::string> choices;
    std::stringstream list(message.substr(not_in + 9, message.size() - not_in - 10));
    for (std::string choice; std::getline(list, choice, ',');) choices.push_back(choice);
    if (const auto meant = hearth::likelyMeant(value, choices); !meant.empty())
        std::fprintf(stderr, "hint: did you mean %s %s?\n", message.substr(0, colon).c_str(),
                     hearth::alternatives(meant, "").c_str());
}

int runCli(int argc, char** argv) {
    hearth::cli::followParentProcess();            // a job started by Hearth ends with its parent
    hearth::cli::rememberArguments(argc, argv);   // the local launcher starts its ranks with them
    CLI::App app{"Hearth: train LibTorch models and compare runs, headless.", "hearth-cli"};
    app.require_subcommand(1);
    app.fallthrough();   // --db may come after the subcommand: `hearth-cli runs --db x.sqlite`
    // Computed only when asked: it looks for CUDA devices, which initialises the driver.
    app.set_version_flag(
        "--version",
        [] {
            std::string report = hearth::versionReport("hearth-cli");
            report.pop_back();  // CLI11 adds the final newline
            return report;
        },
        "Print Hearth's version, the LibTorch and CUDA it was built with, and the devices it sees");

    int exit_code = 0;
    hearth::cli::RunCommandOptions run_options;
    hearth::cli::SweepCommandOptions sweep_options;
    app.add_option("--db", run_options.db_path,
                   "Run database (default: $HEARTH_DB, else $XDG_DATA_HOME/hearth/runs.sqlite)")
        ->envname("HEARTH_DB");
    hearth::cli::registerRunCommand(app, run_options, exit_code);
    hearth::cli::ResumeCommandOptions resume_options;
    hearth::cli::registerResumeCommand(app, run_options, resume_options, exit_code);
    std::string keys_prefix;
    auto* keys = app.add_subcommand("keys", "List every config key: type, default, allowed values and what it does");
    keys->add_option("prefix", keys_prefix, "Only keys starting with this, e.g. trainer or data.");
    keys->callback([&keys_prefix, &exit_code] {
        const std::string text = hearth::describeConfigKeys(keys_prefix);
        if (text.empty()) {
            // A typo of a key or group, or a word that names keys ("learning_rate", the form's "Source").
            const auto meant = hearth::configKeysMeant(keys_prefix, hearth::configKeysAndGroups());
            std::fprintf(stderr, "error: no config key starts with '%s'%s; hearth-cli keys lists them all\n",
                         keys_prefix.c_str(), hearth::didYouMean(meant).c_str());
            exit_code = hearth::cli::kExitBadConfig;
            return;
        }
        std::fputs(text.c_str(), stdout);
    });
    std::string inspect_path;
    auto* inspect = app.add_subcommand("inspect", "Summarise a model file (TorchScript): parameters, submodules, forward");
    inspect->add_option("file", inspect_path, "A module saved with torch.jit.save (model.path)")->required();
    inspect->callback([&inspect_path, &exit_code] {
        try {
            std::fputs(hearth::describeTorchScriptFile(inspect_path).c_str(), stdout);
        } catch (const hearth::ConfigError& e) {
            std::fprintf(stderr, "error: %s\n", e.what());
            exit_code = hearth::cli::kExitBadConfig;
        }
    });
    hearth::cli::registerSweepCommand(app, sweep_options, run_options.db_path, exit_code);
    hearth::cli::StoreCommandContext store_context{run_options.db_path};
    hearth::cli::registerStoreCommands(app, store_context, exit_code);
    hearth::cli::registerPredictCommand(app, store_context, exit_code);
    hearth::cli::registerTuneCommand(app, run_options.db_path, exit_code);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // 0 for --help and --version; a word that is no command is said so, with the one it likely
        // meant; an unknown option gets the options it likely meant after CLI11's message.
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
        CLI::App* command = nullptr;
        if (const std::string word = unknownCommand(app, argc, argv, command); !word.empty()) {
            std::fprintf(stderr, "error: '%s' is not a hearth-cli command%s\nRun with --help for the commands.\n",
                         word.c_str(), hearth::didYouMean(word, subcommandNames(app)).c_str());
            return hearth::cli::kExitBadConfig;
        }
        app.exit(e);
        // `hearth-cli predict 3 shirt.png`: the inputs are named by what they are.
        if (command && command->get_name() == "predict" && dynamic_cast<const CLI::ExtrasError*>(&e))
            std::fprintf(stderr, "hint: predict takes image files and folders with --images "
                                 "(hearth-cli predict RUN --images FILE... -o OUT.csv), a CSV of texts with --input\n");
        printOptionHints(app, command, argc, argv);
        printChoiceHint(e.what());
        // CLI11 has its own codes; the contract says 2 for bad arguments.
        return hearth::cli::kExitBadConfig;
    }
    return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
    // Every command turns the errors it expects into messages and exit codes 2-4; anything else
    // is a bug, reported as such rather than ending in std::terminate.
    try {
        return runCli(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: unexpected internal error (please report it): %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "error: unexpected internal error (please report it)\n");
    }
    return 1;
}
