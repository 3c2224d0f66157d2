#pragma once
// ModelFileInfo: what a model file holds, as `hearth-cli inspect FILE` prints it and the
// workbench shows it under model.path (the window does not link LibTorch: it runs the CLI). No
// LibTorch in this header.

#include <string>

namespace hearth {

// A TorchScript file: its parameters (trainable, frozen) and buffers, its top-level submodules
// with their types, and its forward's signature, one fact per line. Throws ConfigError
// ("model.path", ...) naming what the file is instead (see loadTorchScriptModule).
std::string describeTorchScriptFile(const std::string& path);

}  // namespace hearth
