#pragma once
// The process-wide settings a run needs before training (device, seeds, threads, deterministic
// algorithms, cuDNN/TF32 switches) and the "what actually ran" map reported in RunStarted.

#include "engine/config/ExperimentConfig.h"
#include "engine/train/Trainer.h"

#include <map>
#include <string>
#include <vector>

namespace hearth {

// accelerator auto -> cuda when available, else cpu. Throws ConfigError when CUDA is asked for
// but absent (device counts and strategies are the strategy's: createStrategy).
torch::Device resolveDevice(const TrainerConfig& trainer, const DeviceCapabilities& caps);

// Seeds, intra-op threads, deterministic algorithms, cuDNN benchmark and TF32. These are
// process-wide in LibTorch, so every run sets all of them (a previous run's values never leak).
void applyGlobalSettings(const ExperimentConfig& config, torch::Device device);

// Dotted key -> effective value, for every toggle (n/a ones say why).
std::map<std::string, std::string> effectiveSettings(const ExperimentConfig& config, torch::Device device,
                                                     const Trainer& trainer, const std::string& checkpoint_path);

// One line per requested toggle that has no effect here (so nothing is ignored silently).
std::vector<std::string> ineffectiveToggles(const ExperimentConfig& config, torch::Device device,
                                            const Trainer& trainer);

}  // namespace hearth
