// A fake NVML (compiled as C++ with C linkage: the project builds no C).
/* A fake NVML (libnvidia-ml.so.1) with the few functions Hearth calls, so the device-statistics
 * path is tested without a GPU or a driver. Behaviour from the environment:
 *   FAKE_NVML_DEVICES=N          devices (default 2)
 *   FAKE_NVML_FAIL=nvmlDevice... that function returns NVML_ERROR_NOT_SUPPORTED
 *   FAKE_NVML_INIT_FAIL=1        nvmlInit_v2 returns NVML_ERROR_DRIVER_NOT_LOADED
 * Built twice: once whole, once with -DFAKE_NVML_NO_POWER (nvmlDeviceGetPowerUsage missing).
 * Device i reads: name "Fake GPU i", utilisation 40+10i %, memory used (2+i) GiB of 80 GiB,
 * 55+i degrees, 150+i W of a 700 W limit, SM clock 1980 MHz, PCI bus id 00000000:0i:00.0. */
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {

typedef int nvmlReturn_t;
typedef struct FakeDevice { unsigned index; } FakeDevice;
typedef FakeDevice* nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;

enum { OK = 0, ERR_INVALID = 2, ERR_NOT_SUPPORTED = 3, ERR_DRIVER = 9, ERR_NOT_FOUND = 6 };

static FakeDevice devices[8] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};

static unsigned count(void) {
    const char* n = getenv("FAKE_NVML_DEVICES");
    unsigned v = n ? (unsigned)atoi(n) : 2u;
    return v > 8 ? 8 : v;
}

static int failing(const char* name) {
    const char* f = getenv("FAKE_NVML_FAIL");
    return f && strcmp(f, name) == 0;
}

nvmlReturn_t nvmlInit_v2(void) {
    const char* f = getenv("FAKE_NVML_INIT_FAIL");
    return f && *f == '1' ? ERR_DRIVER : OK;
}
nvmlReturn_t nvmlShutdown(void) { return OK; }

const char* nvmlErrorString(nvmlReturn_t rc) {
    switch (rc) {
        case OK: return "Success";
        case ERR_INVALID: return "Invalid Argument";
        case ERR_NOT_SUPPORTED: return "Not Supported";
        case ERR_NOT_FOUND: return "Not Found";
        case ERR_DRIVER: return "Driver Not Loaded";
        default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* out, unsigned int length) {
    snprintf(out, length, "999.99-fake");
    return OK;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* n) {
    *n = count();
    return OK;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
    if (index >= count()) return ERR_INVALID;
    *device = &devices[index];
    return OK;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, nvmlDevice_t* device) {
    unsigned domain = 0, bus = 0, dev = 0, fn = 0;
    if (sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return ERR_INVALID;
    if (domain != 0 || dev != 0 || bus >= count()) return ERR_NOT_FOUND;
    *device = &devices[bus];
    return OK;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
    *index = device->index;
    return OK;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
    if (failing("nvmlDeviceGetName")) return ERR_NOT_SUPPORTED;
    snprintf(name, length, "Fake GPU %u", device->index);
    return OK;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* u) {
    if (failing("nvmlDeviceGetUtilizationRates")) return ERR_NOT_SUPPORTED;
    u->gpu = 40 + 10 * device->index;
    u->memory = 20;
    return OK;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* m) {
    if (failing("nvmlDeviceGetMemoryInfo")) return ERR_NOT_SUPPORTED;
    m->total = 80ULL << 30;
    m->used = (2ULL + device->index) << 30;
    m->free = m->total - m->used;
    return OK;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, unsigned int sensor, unsigned int* t) {
    if (failing("nvmlDeviceGetTemperature") || sensor != 0) return ERR_NOT_SUPPORTED;
    *t = 55 + device->index;
    return OK;
}

#ifndef FAKE_NVML_NO_POWER
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* mw) {
    if (failing("nvmlDeviceGetPowerUsage")) return ERR_NOT_SUPPORTED;
    *mw = 150000 + 1000 * device->index;
    return OK;
}
#endif

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* mw) {
    (void)device;
    if (failing("nvmlDeviceGetEnforcedPowerLimit")) return ERR_NOT_SUPPORTED;
    *mw = 700000;
    return OK;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, unsigned int type, unsigned int* mhz) {
    (void)device;
    if (failing("nvmlDeviceGetClockInfo") || type != 1) return ERR_NOT_SUPPORTED;
    *mhz = 1980;
    return OK;
}

}  // extern "C"
