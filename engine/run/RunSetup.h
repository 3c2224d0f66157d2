#pragma once
// What a run needs before training: the config checked and resolved for this machine, the
// process-wide settings (device, seeds, threads, deterministic algorithms, cuDNN/TF32 switches),
// the data and the model (prepareRun, shared by training and the finders), and the "what actually
// ran" map reported in RunStarted.

#include "engine/config/ExperimentConfig.h"
#include "engine/train/Trainer.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hearth {

// A config made ready to train on this machine: "auto" resolved, global settings applied, data
// loaded and the model built from the seed (not yet placed on the device).
struct PreparedRun {
    ExperimentConfig config;  // trainer resolved for this machine (the requested one is the caller's)
    torch::Device device = torch::kCPU;
    DataSplits splits;
    std::shared_ptr<ClassifierImpl> model;
};

// Validates (ConfigError naming every problem), resolves, applies the global settings, checks
// every path (DataError listing the missing ones), loads the splits (DataError when the training
// split is empty) and builds the model after re-seeding. `log` gets loading progress (text data).
PreparedRun prepareRun(const ExperimentConfig& requested, const std::function<void(const std::string&)>& log);

// accelerator auto -> cuda when available, else cpu. Throws ConfigError when CUDA is asked for
// but absent (device counts and strategies are the strategy's: createStrategy).
torch::Device resolveDevice(const TrainerConfig& trainer, const DeviceCapabilities& caps);

// Seeds, intra-op threads, deterministic algorithms, cuDNN benchmark and TF32. These are
// process-wide in LibTorch, so every run sets all of them (a previous run's values never leak).
void applyGlobalSettings(const ExperimentConfig& config, torch::Device device);

// Dotted key -> effective value, for every toggle (n/a ones say why).
std::map<std::string, std::string> effectiveSettings(const ExperimentConfig& config, torch::Device device,
                                                     const Trainer& trainer, const std::string& checkpoint_path);

// One line per key of the config as given (not resolved) that is set away from its default and
// has no effect on this machine (so nothing is ignored silently): validate()'s warnings, which
// follow the key table's no-effect rules, as the form's enablement does.
std::vector<std::string> ineffectiveToggles(const ExperimentConfig& requested);

}  // namespace hearth
