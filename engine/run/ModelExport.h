#pragma once
// A trained run's model written in a format other programs load: TorchScript for a run of a
// TorchScript model (its module with the best checkpoint's weights; torch.jit.load reads it).

#include "engine/config/ExperimentConfig.h"

#include <string>

namespace hearth {

// Writes `out`: the module model.path names, holding the weights of `checkpoint` (the run's
// best.pt). Throws ConfigError("--format", ...) for a run that did not train a TorchScript model,
// ConfigError("model.path", ...) when its module file cannot be read any more.
void exportTorchScript(const ExperimentConfig& run_config, const std::string& checkpoint, const std::string& out);

}  // namespace hearth
