#pragma once
// What this machine offers for training, queried from LibTorch without exposing its types.

#include "engine/config/ExperimentConfig.h"

namespace hearth {

DeviceCapabilities queryDeviceCapabilities();

// Versions and hardware recorded with every run.
struct EnvironmentInfo {
    std::string hearth_version;
    std::string git_revision;
    std::string libtorch_version;
    std::string os;
    std::string cpu;
    int64_t cpu_threads = 0;          // logical CPUs
    int64_t intra_op_threads = 0;     // LibTorch's intra-op pool as used by the run
    std::vector<std::string> devices; // "cpu" or CUDA device names
};

EnvironmentInfo queryEnvironment();

}  // namespace hearth
