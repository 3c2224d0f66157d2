#pragma once
// DeviceMonitor: samples memory of the training device about once a second (process RSS on the
// host; caching-allocator stats on CUDA) and emits DeviceSample events. Polled from the
// training thread between steps, so sinks see events on one thread and training never waits.

#include "engine/events/Events.h"

#include <torch/torch.h>

#include <chrono>

namespace hearth {

class DeviceMonitor final {
public:
    explicit DeviceMonitor(torch::Device device, std::chrono::milliseconds interval = std::chrono::seconds(1));

    // Emits samples when `interval` has passed since the last ones (or when forced).
    void poll(EventSink& sink, bool force = false);
    // Highest memory seen on the training device (CUDA allocator peak, or host peak RSS).
    int64_t peakBytes() const { return peak_bytes_; }

private:
    void sampleHost(EventSink& sink, double elapsed);
    void sampleCuda(EventSink& sink, double elapsed);

    torch::Device device_;
    std::chrono::milliseconds interval_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_;
    bool sampled_ = false;
    int64_t peak_bytes_ = 0;
};

}  // namespace hearth
