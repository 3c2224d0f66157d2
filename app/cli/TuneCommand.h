#pragma once
// `hearth-cli tune`: the batch-size finder (--batch-size: the largest batch that fits the device's
// memory, or --memory-limit on CPU) and the learning-rate finder (--lr: an exponential sweep and
// the steepest-descent suggestion) on the same config inputs as `run`. Exit codes as `run`: 2 bad
// config or arguments, 3 bad data, 4 training failed, 130 stopped.

#include <CLI/CLI.hpp>

namespace hearth::cli {

void registerTuneCommand(CLI::App& app, int& exit_code);

}  // namespace hearth::cli
