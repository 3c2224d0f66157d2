#pragma once
// Summaries of where a run's time and memory went, shared by hearth-cli, reports and the
// workbench: the step-time breakdown over a run's epochs, its parts in display order, the memory
// breakdown's parts, and per-device statistics over a run's samples. Plain standard types.

#include "engine/events/Events.h"

#include <optional>
#include <string>
#include <vector>

namespace hearth {

// The run's breakdown: the profiled epochs' means weighted by their profiled micro-batches.
// Epoch 0 (warm-up: first allocations, kernel selection, worker start) is left out when a later
// epoch was profiled. None when nothing was profiled.
std::optional<StepBreakdown> meanBreakdown(const std::vector<EpochMetrics>& epochs);

struct ProfilePart {
    std::string key;    // "forward"
    std::string label;  // "Forward"
    double value = 0.0; // ms (breakdown) or bytes (memory)
};

// Data wait, copy, forward, backward, communication wait, optimizer, metric sync, and "other"
// (the measured step time the timed sections do not cover), in the order a step runs them.
std::vector<ProfilePart> breakdownParts(const StepBreakdown& b);

// Parameters, gradients, optimizer state, activations, reserved-unused, CUDA graph pool, other.
std::vector<ProfilePart> memoryParts(const MemoryBreakdown& m);

// The memory parts' labels for several runs shown together (a table's rows, a chart's legend): a
// part named by its device ("Reserved, unused" on a GPU, "Heap beyond tensors" on the host) takes
// each name its runs use, in run order, joined by " / ". Null entries (runs without a breakdown)
// are passed over; with none left, the host's names.
std::vector<std::string> memoryPartLabels(const std::vector<const MemoryBreakdown*>& runs);

// One device's samples over a run (one rank's view of one device).
struct DeviceSummary {
    int64_t rank = 0;
    int64_t device = -1;          // -1: the process on the host
    std::string name;
    int64_t samples = 0;
    double utilization_mean = -1.0, utilization_max = -1.0;   // 0..1; -1 unknown
    int64_t memory_peak_bytes = 0;   // GPU: driver's used (else allocator reserved); host: RSS
    int64_t total_bytes = 0;
    double temperature_max_c = -1.0;
    double power_mean_w = -1.0, power_limit_w = -1.0;
    double sm_clock_mean_mhz = -1.0;
};
std::vector<DeviceSummary> summarizeDevices(const std::vector<DeviceSample>& samples);

}  // namespace hearth
