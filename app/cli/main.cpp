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
#include "engine/weights/ModelFileInfo.h"

#include <CLI/CLI.hpp>

#include <cstdio>

namespace {

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
            std::fprintf(stderr, "error: no config key starts with '%s' (hearth-cli keys lists them all)\n",
                         keys_prefix.c_str());
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
        const int code = app.exit(e);
        // CLI11 has its own codes; the contract says 2 for bad arguments (0 for --help/--version).
        return code == 0 ? 0 : hearth::cli::kExitBadConfig;
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
