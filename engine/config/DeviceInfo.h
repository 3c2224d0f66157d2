#pragma once
// What this machine offers for training, queried from LibTorch without exposing its types.

#include "engine/config/ExperimentConfig.h"

namespace hearth {

DeviceCapabilities queryDeviceCapabilities();

// How this binary was built: Hearth, LibTorch and, in CUDA builds, the CUDA stack inside it.
struct BuildInfo {
    std::string hearth_version;
    std::string git_revision;
    std::string libtorch_version;  // TORCH_VERSION of the headers built against
    bool cuda_built_in = false;
    std::string cuda_version;   // e.g. "13.0"
    std::string cudnn_version;  // e.g. "9.19.0"; empty without cuDNN
    std::string nccl_version;   // e.g. "2.28.9"; empty without NCCL
    int cuda_driver = 0;        // CUDA version the installed driver supports (13000); 0: no driver
};

BuildInfo queryBuildInfo();

// Physical cores among `cpus` (Linux CPU numbers) in the topology under `sysfs_cpu` (distinct
// package and core ids, so two hyperthreads of one core count once); 0 when it cannot be read.
int64_t physicalCores(const std::vector<int>& cpus, const std::string& sysfs_cpu = "/sys/devices/system/cpu");
// The same for the CPUs this process may run on (its affinity mask).
int64_t physicalCoresAvailable();

// "CUDA 13.0 built in (cuDNN 9.19.0, NCCL 2.28.9)" or "CUDA not built in (CPU-only LibTorch)".
std::string describeCudaSupport(const BuildInfo& build);

// The text of `hearth-cli --version`: Hearth, LibTorch, CUDA support and the devices found, e.g.
// "LibTorch 2.11.0, CUDA 13.0 built in (cuDNN 9.19.0, NCCL 2.28.9), no CUDA device found".
std::string versionReport(const std::string& program);

// Versions and hardware recorded with every run.
struct EnvironmentInfo {
    std::string hearth_version;
    std::string git_revision;
    std::string libtorch_version;
    std::string cuda_support;  // describeCudaSupport() of the build that ran
    std::string os;
    std::string cpu;
    int64_t cpu_threads = 0;          // logical CPUs
    int64_t intra_op_threads = 0;     // LibTorch's intra-op pool as used by the run
    std::vector<std::string> devices; // "cpu" or CUDA device names
};

EnvironmentInfo queryEnvironment();

}  // namespace hearth
