#pragma once
// NVML (the NVIDIA Management Library), loaded at run time: dlopen of libnvidia-ml.so.1 (or
// $HEARTH_NVML_LIBRARY), so Hearth has no build dependency on the driver and runs where there is
// none. Reads what nvidia-smi shows per device: utilisation, memory used/total as the driver sees
// it, temperature, power draw and limit, SM clock. Nothing here throws: a missing library is
// `available() == false` with a note; a missing symbol or a failing call leaves that value
// unknown (-1) and adds a one-line note, once per function.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hearth {

struct NvmlReading {
    int64_t index = -1;            // NVML's device index
    std::string name;
    double utilization = -1.0;     // 0..1 (GPU busy share over the driver's last sample period)
    int64_t used_bytes = -1;
    int64_t total_bytes = -1;
    double temperature_c = -1.0;
    double power_w = -1.0;
    double power_limit_w = -1.0;
    double sm_clock_mhz = -1.0;
};

class Nvml {
public:
    // Loads and initialises NVML. `library`: the file to dlopen; empty: $HEARTH_NVML_LIBRARY,
    // else libnvidia-ml.so.1.
    static std::unique_ptr<Nvml> load(const std::string& library = "");
    ~Nvml();
    Nvml(const Nvml&) = delete;
    Nvml& operator=(const Nvml&) = delete;

    bool available() const;
    // Why NVML is unavailable, or "" when it is.
    const std::string& unavailableReason() const;
    int deviceCount() const;
    std::string driverVersion() const;
    // The NVML index of the device at a PCI bus id ("00000000:3B:00.0"); -1 when none.
    int indexForPciBusId(const std::string& bus_id) const;
    NvmlReading read(int index);
    // One line per function that is missing or failed, each reported once; cleared by the call.
    std::vector<std::string> takeNotes();

private:
    Nvml();
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hearth
