#include "engine/monitor/Nvml.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <set>

namespace hearth {
namespace {

// NVML's C ABI, declared here (nvml.h is not needed to build): the handful of calls Hearth makes.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr unsigned kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
constexpr unsigned kClockSm = 1;         // NVML_CLOCK_SM

struct nvmlUtilization_t {
    unsigned int gpu;
    unsigned int memory;
};
struct nvmlMemory_t {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using CountFn = nvmlReturn_t (*)(unsigned int*);
using HandleByIndexFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using HandleByPciFn = nvmlReturn_t (*)(const char*, nvmlDevice_t*);
using IndexFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using NameFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using UtilFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using MemoryFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using TemperatureFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, unsigned int*);
using UIntFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using ClockFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, unsigned int*);
using DriverFn = nvmlReturn_t (*)(char*, unsigned int);

}  // namespace

struct Nvml::Impl {
    void* lib = nullptr;
    bool initialised = false;
    std::string reason;
    std::mutex mutex;  // notes
    std::set<std::string> noted;
    std::vector<std::string> notes;

    ErrorStringFn error_string = nullptr;
    ShutdownFn shutdown = nullptr;
    CountFn count = nullptr;
    HandleByIndexFn handle_by_index = nullptr;
    HandleByPciFn handle_by_pci = nullptr;
    IndexFn index_of = nullptr;
    NameFn name = nullptr;
    UtilFn utilization = nullptr;
    MemoryFn memory = nullptr;
    TemperatureFn temperature = nullptr;
    UIntFn power = nullptr;
    UIntFn power_limit = nullptr;
    ClockFn clock = nullptr;
    DriverFn driver = nullptr;

    template <typename Fn>
    Fn symbol(const char* primary, const char* fallback = nullptr) {
        void* p = dlsym(lib, primary);
        if (!p && fallback) p = dlsym(lib, fallback);
        return reinterpret_cast<Fn>(p);
    }

    std::string errorText(nvmlReturn_t rc) const {
        const char* text = error_string ? error_string(rc) : nullptr;
        return text ? std::string(text) : "error " + std::to_string(rc);
    }

    void note(const std::string& function, const std::string& what) {
        std::lock_guard lock(mutex);
        if (!noted.insert(function).second) return;
        notes.push_back("NVML: " + function + " " + what + "; that value is shown as unknown");
    }

    // Calls `fn` when present; notes a missing function or a failure once. True on success.
    template <typename Fn, typename... Args>
    bool call(Fn fn, const char* function, Args... args) {
        if (!fn) {
            note(function, "is missing from the library");
            return false;
        }
        const nvmlReturn_t rc = fn(args...);
        if (rc != kSuccess) {
            note(function, "failed (" + errorText(rc) + ")");
            return false;
        }
        return true;
    }
};

Nvml::Nvml() : impl_(std::make_unique<Impl>()) {}

std::unique_ptr<Nvml> Nvml::load(const std::string& library) {
    std::unique_ptr<Nvml> nvml(new Nvml());
    Impl& d = *nvml->impl_;
    std::string file = library;
    if (file.empty()) {
        const char* env = std::getenv("HEARTH_NVML_LIBRARY");  // NOLINT(concurrency-mt-unsafe): nothing sets it
        file = env && *env ? env : "libnvidia-ml.so.1";
    }
    d.lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!d.lib) {
        const char* err = dlerror();  // NOLINT(concurrency-mt-unsafe): loaded once per run, on one thread
        d.reason = "NVML not found (" + std::string(err ? err : file) + ")";
        return nvml;
    }
    const auto init = d.symbol<InitFn>("nvmlInit_v2", "nvmlInit");
    d.error_string = d.symbol<ErrorStringFn>("nvmlErrorString");
    d.shutdown = d.symbol<ShutdownFn>("nvmlShutdown");
    d.count = d.symbol<CountFn>("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    d.handle_by_index = d.symbol<HandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    if (!init || !d.count || !d.handle_by_index) {
        d.reason = "NVML library " + file + " lacks nvmlInit_v2, nvmlDeviceGetCount_v2 or nvmlDeviceGetHandleByIndex_v2";
        return nvml;
    }
    const nvmlReturn_t rc = init();
    if (rc != kSuccess) {
        d.reason = "NVML did not initialise (" + d.errorText(rc) + ")";
        return nvml;
    }
    d.initialised = true;
    d.handle_by_pci = d.symbol<HandleByPciFn>("nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
    d.index_of = d.symbol<IndexFn>("nvmlDeviceGetIndex");
    d.name = d.symbol<NameFn>("nvmlDeviceGetName");
    d.utilization = d.symbol<UtilFn>("nvmlDeviceGetUtilizationRates");
    d.memory = d.symbol<MemoryFn>("nvmlDeviceGetMemoryInfo");
    d.temperature = d.symbol<TemperatureFn>("nvmlDeviceGetTemperature");
    d.power = d.symbol<UIntFn>("nvmlDeviceGetPowerUsage");
    d.power_limit = d.symbol<UIntFn>("nvmlDeviceGetEnforcedPowerLimit");
    d.clock = d.symbol<ClockFn>("nvmlDeviceGetClockInfo");
    d.driver = d.symbol<DriverFn>("nvmlSystemGetDriverVersion");
    return nvml;
}

Nvml::~Nvml() {
    if (impl_->initialised && impl_->shutdown) impl_->shutdown();
    if (impl_->lib) dlclose(impl_->lib);
}

bool Nvml::available() const { return impl_->initialised; }

const std::string& Nvml::unavailableReason() const { return impl_->reason; }

int Nvml::deviceCount() const {
    if (!available()) return 0;
    unsigned int n = 0;
    if (!impl_->call(impl_->count, "nvmlDeviceGetCount_v2", &n)) return 0;
    return static_cast<int>(n);
}

std::string Nvml::driverVersion() const {
    char text[96] = {};
    if (!available() || !impl_->call(impl_->driver, "nvmlSystemGetDriverVersion", text,
                                     static_cast<unsigned int>(sizeof text)))
        return "";
    return text;
}

int Nvml::indexForPciBusId(const std::string& bus_id) const {
    if (!available()) return -1;
    nvmlDevice_t device = nullptr;
    unsigned int index = 0;
    if (!impl_->call(impl_->handle_by_pci, "nvmlDeviceGetHandleByPciBusId_v2", bus_id.c_str(), &device)) return -1;
    if (!impl_->call(impl_->index_of, "nvmlDeviceGetIndex", device, &index)) return -1;
    return static_cast<int>(index);
}

NvmlReading Nvml::read(int index) {
    NvmlReading r;
    r.index = index;
    Impl& d = *impl_;
    nvmlDevice_t device = nullptr;
    if (!available() || !d.call(d.handle_by_index, "nvmlDeviceGetHandleByIndex_v2", static_cast<unsigned int>(index), &device))
        return r;
    char name[96] = {};
    if (d.call(d.name, "nvmlDeviceGetName", device, name, static_cast<unsigned int>(sizeof name))) r.name = name;
    nvmlUtilization_t util{};
    if (d.call(d.utilization, "nvmlDeviceGetUtilizationRates", device, &util)) r.utilization = util.gpu / 100.0;
    nvmlMemory_t memory{};
    if (d.call(d.memory, "nvmlDeviceGetMemoryInfo", device, &memory)) {
        r.used_bytes = static_cast<int64_t>(memory.used);
        r.total_bytes = static_cast<int64_t>(memory.total);
    }
    unsigned int value = 0;
    if (d.call(d.temperature, "nvmlDeviceGetTemperature", device, kTemperatureGpu, &value)) r.temperature_c = value;
    if (d.call(d.power, "nvmlDeviceGetPowerUsage", device, &value)) r.power_w = value / 1000.0;  // milliwatts
    if (d.call(d.power_limit, "nvmlDeviceGetEnforcedPowerLimit", device, &value)) r.power_limit_w = value / 1000.0;
    if (d.call(d.clock, "nvmlDeviceGetClockInfo", device, kClockSm, &value)) r.sm_clock_mhz = value;
    return r;
}

std::vector<std::string> Nvml::takeNotes() {
    std::lock_guard lock(impl_->mutex);
    std::vector<std::string> out;
    out.swap(impl_->notes);
    return out;
}

}  // namespace hearth
