// Device capabilities and the run environment, read from LibTorch, /proc and uname.

#include "engine/config/DeviceInfo.h"

#include "HearthRevision.h"   // generated at build time: HEARTH_GIT_REVISION

#include "engine/TorchCompat.h"
#include "engine/config/ByteSize.h"
#include "engine/monitor/CudaMemory.h"
#ifdef HEARTH_WITH_CUDA
#include "engine/config/CudaInfo.h"
#endif

#include <sched.h>
#include <sys/utsname.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

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

#ifdef HEARTH_WITH_CUDA
std::string cudaVersionText(int packed) {  // 13000 -> "13.0"
    return std::to_string(packed / 1000) + "." + std::to_string((packed % 1000) / 10);
}

#endif

// ", no CUDA device found (...)" or ", N CUDA device(s) (driver CUDA x.y):" plus one line each.
std::string cudaDevicesText(const BuildInfo& build) {
#ifdef HEARTH_WITH_CUDA
    const int driver = build.cuda_driver;
    if (driver == 0) {
        return ", no CUDA device found (no NVIDIA driver)\n";
    }
    const auto count = torch::cuda::is_available() ? static_cast<int64_t>(torch::cuda::device_count()) : 0;
    if (count == 0) {
        return ", no CUDA device found (driver supports CUDA " + cudaVersionText(driver) + ")\n";
    }
    std::string out = ", " + std::to_string(count) + (count == 1 ? " CUDA device" : " CUDA devices") +
                      " (driver supports CUDA " + cudaVersionText(driver) + "):\n";
    for (int64_t i = 0; i < count; ++i) {
        const auto f = cudaDeviceFacts(i);
        out += "  cuda:" + std::to_string(i) + "  " + f.name + ", " + formatBytes(f.total_bytes) + ", compute capability " +
               std::to_string(f.major) + "." + std::to_string(f.minor) + "\n";
    }
    return out;
#else
    (void)build;
    return "\n";
#endif
}

}  // namespace

BuildInfo queryBuildInfo() {
    BuildInfo b;
    b.hearth_version = HEARTH_VERSION;
    b.git_revision = HEARTH_GIT_REVISION;
    b.libtorch_version = TORCH_VERSION;
#ifdef HEARTH_WITH_CUDA
    const auto v = cudaStackVersions();
    b.cuda_built_in = true;
    b.cuda_version = v.cuda;
    b.cudnn_version = v.cudnn;
    b.nccl_version = v.nccl;
    b.cuda_driver = v.driver_cuda;
#endif
    return b;
}

std::string describeCudaSupport(const BuildInfo& build) {
    if (!build.cuda_built_in) {
        return "CUDA not built in (CPU-only LibTorch)";
    }
    std::string extras;
    if (!build.cudnn_version.empty()) extras += "cuDNN " + build.cudnn_version;
    if (!build.nccl_version.empty()) extras += (extras.empty() ? "" : ", ") + ("NCCL " + build.nccl_version);
    return "CUDA " + build.cuda_version + " built in" + (extras.empty() ? "" : " (" + extras + ")");
}

std::string versionReport(const std::string& program) {
    const BuildInfo b = queryBuildInfo();
    std::string cpu = firstValue("/proc/cpuinfo", "model name", ':');
    return program + " " + b.hearth_version + " (git " + b.git_revision + ")\n" + "LibTorch " + b.libtorch_version +
           ", " + describeCudaSupport(b) + cudaDevicesText(b) + "CPU: " + (cpu.empty() ? std::string("unknown") : cpu) +
           ", " + std::to_string(std::thread::hardware_concurrency()) + " logical CPUs\n";
}

namespace {

DeviceCapabilities probeDeviceCapabilities() {
    DeviceCapabilities caps;
    caps.cuda_available = torch::cuda::is_available();
    caps.cuda_device_count = caps.cuda_available ? static_cast<int64_t>(torch::cuda::device_count()) : 0;
#ifdef HEARTH_WITH_CUDA
    caps.cuda_bf16 = caps.cuda_device_count > 0;
    for (int64_t i = 0; i < caps.cuda_device_count; ++i) {
        caps.cuda_device_names.push_back(cudaDeviceName(i));
        caps.cuda_device_memory.push_back(cudaDeviceFacts(i).total_bytes);
        caps.cuda_bf16 = caps.cuda_bf16 && cudaDeviceSupportsBf16(i);
    }
#endif
    caps.cpu_name = firstValue("/proc/cpuinfo", "model name", ':');
    caps.cpu_threads = static_cast<int64_t>(std::thread::hardware_concurrency());
    caps.cpu_fp16_autocast = compat::kCpuFp16Autocast;
    caps.fused_optimizers = compat::kFusedOptimizers;
#ifdef HEARTH_WITH_CUDA
    caps.cuda_graphs = compat::kFusedOptimizers;  // a captured step needs the fused, capturable kernels
#endif
#ifdef HEARTH_WITH_C10D
    caps.distributed = true;
#endif
    return caps;
}

}  // namespace

DeviceCapabilities queryDeviceCapabilities() {
    // Once per process: the devices do not change under a running program, and the probe reads
    // /proc/cpuinfo and asks the CUDA driver (the workbench asked from several places).
    static const DeviceCapabilities caps = probeDeviceCapabilities();
    return caps;
}

int64_t physicalCores(const std::vector<int>& cpus, const std::string& sysfs_cpu) {
    std::set<std::pair<long, long>> cores;   // (package, core)
    for (const int cpu : cpus) {
        const std::string topology = sysfs_cpu + "/cpu" + std::to_string(cpu) + "/topology/";
        long package = -1, core = -1;
        std::ifstream package_file(topology + "physical_package_id"), core_file(topology + "core_id");
        if (!(package_file >> package) || !(core_file >> core)) return 0;
        cores.insert({package, core});
    }
    return static_cast<int64_t>(cores.size());
}

int64_t physicalCoresAvailable() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    return physicalCores(cpus);
}

EnvironmentInfo queryEnvironment() {
    EnvironmentInfo env;
    env.hearth_version = HEARTH_VERSION;
    env.git_revision = HEARTH_GIT_REVISION;
    env.libtorch_version = TORCH_VERSION;
    env.cuda_support = describeCudaSupport(queryBuildInfo());
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
