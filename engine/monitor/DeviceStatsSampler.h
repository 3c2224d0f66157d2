#pragma once
// DeviceStatsSampler: a thread that reads NVML for a set of devices and this process's CPU
// utilisation every `period` (2 Hz by default), off the training thread: NVML calls can take
// milliseconds. The training thread's DeviceMonitor takes the latest snapshot when it emits.

#include "engine/monitor/Nvml.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hearth {

class DeviceStatsSampler final {
public:
    struct Snapshot {
        double cpu_utilization = -1.0;  // this process's CPU time over wall time over all cores, 0..1
        std::vector<NvmlReading> gpus;  // in the order of `nvml_indices`
    };

    // nvml may be null or unavailable (CPU utilisation only). Samples once before returning.
    DeviceStatsSampler(std::unique_ptr<Nvml> nvml, std::vector<int> nvml_indices,
                       std::chrono::milliseconds period = std::chrono::milliseconds(500));
    ~DeviceStatsSampler();
    DeviceStatsSampler(const DeviceStatsSampler&) = delete;
    DeviceStatsSampler& operator=(const DeviceStatsSampler&) = delete;

    Snapshot latest() const;
    int64_t samplesTaken() const;
    // NVML's one-line notes (missing or failing functions), each once.
    std::vector<std::string> takeNotes();

private:
    void run();
    void sample();

    std::unique_ptr<Nvml> nvml_;
    std::vector<int> indices_;
    std::chrono::milliseconds period_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    Snapshot latest_;
    int64_t taken_ = 0;
    double last_cpu_s_ = 0.0;
    std::chrono::steady_clock::time_point last_wall_;
    std::thread thread_;
};

// The process's CPU time (user + system, all threads), in seconds.
double processCpuSeconds();

}  // namespace hearth
