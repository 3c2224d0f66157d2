#pragma once
// `hearth-cli sweep --ladder[=speed|memory]`: runs the technique ladder (or the memory ladder) as
// one sweep and prints the comparison.

#include "RunCommand.h"

#include <CLI/CLI.hpp>

#include <optional>

namespace hearth::cli {

struct SweepCommandOptions {
    RunCommandOptions run;                 // --config / --set / quiet (+ the global --db)
    std::string ladder = "speed";          // speed | memory
    std::optional<int64_t> target_batch;
    int64_t workers = 2;
};

// `db_path` is the global --db value, read when the command runs (after parsing).
void registerSweepCommand(CLI::App& app, SweepCommandOptions& options, const std::string& db_path, int& exit_code);
int sweepCommand(const SweepCommandOptions& options);

}  // namespace hearth::cli
