#pragma once
// `hearth-cli run`: load/override/validate a config, train it, store it, print the report.

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace hearth::cli {

// Exit codes of the CLI contract (ARCHITECTURE.md).
enum ExitCode : int { kExitOk = 0, kExitBadConfig = 2, kExitBadData = 3, kExitTrainingFailed = 4, kExitStopped = 130 };

struct RunCommandOptions {
    std::string config_path;
    std::vector<std::string> overrides;
    std::string db_path;
    bool quiet = false;
};

void registerRunCommand(CLI::App& app, RunCommandOptions& options, int& exit_code);
int runCommand(const RunCommandOptions& options);

}  // namespace hearth::cli
