#pragma once
// `hearth-cli run`: load/override/validate a config, carry out its launch plan (JobExecution),
// print the report.

#include "JobExecution.h"

#include "engine/config/ExperimentConfig.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace hearth::cli {

struct RunCommandOptions {
    std::string config_path;
    std::vector<std::string> overrides;
    std::string db_path;   // the global --db / $HEARTH_DB
    bool quiet = false;
    bool print_config = false;   // print the effective config as JSON and exit without training
    bool events = false;         // every event as a JSON line on stdout (the workbench follows the run)
    std::optional<int64_t> sweep_id;   // record the run in this sweep (a ladder's step)
};

// Loads the config file (or the built-in default), applies overrides, validates. Prints every
// problem to stderr and returns nullopt when the config cannot run.
std::optional<ExperimentConfig> prepareConfig(const RunCommandOptions& options);
std::string resolveDbPath(const RunCommandOptions& options);

void registerRunCommand(CLI::App& app, RunCommandOptions& options, int& exit_code);
int runCommand(const RunCommandOptions& options);

}  // namespace hearth::cli
