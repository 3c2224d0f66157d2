#pragma once
// `hearth-cli predict`: a trained text classifier (a stored run's best checkpoint, or a Hugging
// Face checkpoint folder with a classification head) over a CSV of texts, writing each row's
// predicted class and every class's probability. Exit codes: 0 done, 2 bad arguments or unknown
// run, 3 bad input, model files or database.

#include "StoreCommands.h"

#include <CLI/CLI.hpp>

namespace hearth::cli {

void registerPredictCommand(CLI::App& app, StoreCommandContext& context, int& exit_code);

}  // namespace hearth::cli
