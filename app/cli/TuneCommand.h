#pragma once
// `hearth-cli tune`: the batch-size finder (--batch-size: the largest batch that fits the device's
// memory, or --memory-limit on CPU) and the learning-rate finder (--lr: an exponential sweep and
// the steepest-descent suggestion) on the same config inputs as `run`. Exit codes as `run`: 2 bad
// config or arguments, 3 bad data, 4 training failed, 130 stopped.

#include <CLI/CLI.hpp>

#include <string>

namespace hearth::cli {

// db_path: the global --db / $HEARTH_DB (a launch of several ranks keeps their logs beside it).
void registerTuneCommand(CLI::App& app, const std::string& db_path, int& exit_code);

}  // namespace hearth::cli
