// Device capabilities and the run environment, read from LibTorch, /proc and uname.

#include "engine/config/DeviceInfo.h"

#include "engine/TorchCompat.h"
#include "engine/monitor/CudaMemory.h"

#include <sys/utsname.h>

#include <fstream>
#include <string>
#include <thread>

namespace hearth {
namespace {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\"");
    const auto e = s.find_last_not_of(" \t\"\r\n");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// Value of the first "key<sep>value" line of a text file, or "" when absent.
std::string firstValue(const char* path, const std::string& key, char sep) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) != 0) {
            continue;
        }
        const auto pos = line.find(sep);
        if (pos != std::string::npos && trim(line.substr(0, pos)) == key) {
            return trim(line.substr(pos + 1));
        }
    }
    return {};
}

std::string operatingSystem() {
    std::string os;
    struct utsname u {};
    if (uname(&u) == 0) {
        os = std::string(u.sysname) + " " + u.release + " " + u.machine;
    }
    const std::string distro = firstValue("/etc/os-release", "PRETTY_NAME", '=');
    if (!distro.empty()) {
        os += os.empty() ? distro : " (" + distro + ")";
    }
    return os.empty() ? "unknown" : os;
}

}  // namespace

DeviceCapabilities queryDeviceCapabilities() {
    DeviceCapabilities caps;
    caps.cuda_available = torch::cuda::is_available();
    caps.cuda_device_count = caps.cuda_available ? static_cast<int64_t>(torch::cuda::device_count()) : 0;
#ifdef HEARTH_WITH_CUDA
    caps.cuda_bf16 = caps.cuda_device_count > 0;
    for (int64_t i = 0; i < caps.cuda_device_count; ++i) {
        caps.cuda_device_names.push_back(cudaDeviceName(i));
        caps.cuda_bf16 = caps.cuda_bf16 && cudaDeviceSupportsBf16(i);
    }
#endif
    caps.cpu_fp16_autocast = compat::kCpuFp16Autocast;
#if defined(USE_C10D_GLOO) || defined(USE_C10D_NCCL)
    caps.distributed = true;
#endif
    return caps;
}

EnvironmentInfo queryEnvironment() {
    EnvironmentInfo env;
    env.hearth_version = HEARTH_VERSION;
    env.git_revision = HEARTH_GIT_REVISION;
    env.libtorch_version = TORCH_VERSION;
    env.os = operatingSystem();
    env.cpu = firstValue("/proc/cpuinfo", "model name", ':');
    if (env.cpu.empty()) {
        env.cpu = "unknown";
    }
    env.cpu_threads = static_cast<int64_t>(std::thread::hardware_concurrency());
    env.intra_op_threads = static_cast<int64_t>(torch::get_num_threads());
    const auto caps = queryDeviceCapabilities();
    if (caps.cuda_device_names.empty()) {
        env.devices.push_back("cpu");
    } else {
        env.devices = caps.cuda_device_names;
    }
    return env;
}

}  // namespace hearth
