#include "engine/metrics/RunProfile.h"

#include <algorithm>
#include <map>
#include <utility>

namespace hearth {

std::optional<StepBreakdown> meanBreakdown(const std::vector<EpochMetrics>& epochs) {
    const bool later = std::any_of(epochs.begin(), epochs.end(),
                                   [](const EpochMetrics& e) { return e.epoch > 0 && e.breakdown.profiled > 0; });
    StepBreakdown sum;
    for (const auto& e : epochs) {
        const StepBreakdown& b = e.breakdown;
        if (b.profiled <= 0 || (later && e.epoch == 0)) continue;
        const auto w = static_cast<double>(b.profiled);
        sum.data_wait_ms += w * b.data_wait_ms;
        sum.host_to_device_ms += w * b.host_to_device_ms;
        sum.forward_ms += w * b.forward_ms;
        sum.backward_ms += w * b.backward_ms;
        sum.comm_wait_ms += w * b.comm_wait_ms;
        sum.optimizer_ms += w * b.optimizer_ms;
        sum.sync_ms += w * b.sync_ms;
        sum.step_ms += w * b.step_ms;
        sum.profiled += b.profiled;
    }
    if (sum.profiled == 0) return std::nullopt;
    const auto n = static_cast<double>(sum.profiled);
    for (double* v : {&sum.data_wait_ms, &sum.host_to_device_ms, &sum.forward_ms, &sum.backward_ms, &sum.comm_wait_ms,
                      &sum.optimizer_ms, &sum.sync_ms, &sum.step_ms}) {
        *v /= n;
    }
    return sum;
}

std::vector<ProfilePart> breakdownParts(const StepBreakdown& b) {
    return {
        {"data_wait", "Data wait", b.data_wait_ms},
        {"host_to_device", "Copy to device", b.host_to_device_ms},
        {"forward", "Forward", b.forward_ms},
        {"backward", "Backward", b.backward_ms},
        {"comm_wait", "Communication wait", b.comm_wait_ms},
        {"optimizer", "Optimizer step", b.optimizer_ms},
        {"sync", "Metric sync", b.sync_ms},
        {"other", "Other", std::max(0.0, b.step_ms - b.partsMs())},
    };
}

std::vector<ProfilePart> memoryParts(const MemoryBreakdown& m) {
    return {
        {"parameters", "Parameters", static_cast<double>(m.parameters_bytes)},
        {"gradients", "Gradients", static_cast<double>(m.gradients_bytes)},
        {"optimizer_state", "Optimizer state", static_cast<double>(m.optimizer_state_bytes)},
        {"activations", "Activations", static_cast<double>(m.activations_bytes)},
        // CUDA: the caching allocator's reserve; host: peak RSS beyond the counted tensors.
        {"reserved_unused", m.device.rfind("cuda", 0) == 0 ? "Reserved, unused" : "Heap beyond tensors",
         static_cast<double>(m.reserved_unused_bytes)},
        {"cuda_graph", "CUDA graph pool", static_cast<double>(m.cuda_graph_bytes)},
        {"other", "Other", static_cast<double>(m.other_bytes)},
    };
}

std::vector<std::string> memoryPartLabels(const std::vector<const MemoryBreakdown*>& runs) {
    std::vector<std::vector<std::string>> names;
    for (const MemoryBreakdown* m : runs) {
        if (!m) continue;
        const auto parts = memoryParts(*m);
        names.resize(parts.size());
        for (size_t i = 0; i < parts.size(); ++i)
            if (std::find(names[i].begin(), names[i].end(), parts[i].label) == names[i].end())
                names[i].push_back(parts[i].label);
    }
    std::vector<std::string> labels;
    if (names.empty()) {
        for (const auto& p : memoryParts(MemoryBreakdown{})) labels.push_back(p.label);
        return labels;
    }
    for (const auto& n : names) {
        std::string joined;
        for (const auto& name : n) joined += (joined.empty() ? "" : " / ") + name;
        labels.push_back(joined);
    }
    return labels;
}

std::vector<DeviceSummary> summarizeDevices(const std::vector<DeviceSample>& samples) {
    struct Acc {
        DeviceSummary s;
        double util_sum = 0.0, power_sum = 0.0, clock_sum = 0.0;
        int64_t util_n = 0, power_n = 0, clock_n = 0;
    };
    std::map<std::pair<int64_t, int64_t>, Acc> by_device;
    for (const auto& d : samples) {
        Acc& a = by_device[{d.rank, d.device}];
        a.s.rank = d.rank;
        a.s.device = d.device;
        a.s.name = d.name;
        ++a.s.samples;
        if (d.utilization >= 0.0) {
            a.util_sum += d.utilization;
            ++a.util_n;
            a.s.utilization_max = std::max(a.s.utilization_max, d.utilization);
        }
        const int64_t used = d.driver_used_bytes >= 0 ? d.driver_used_bytes : d.reserved_bytes;
        a.s.memory_peak_bytes = std::max(a.s.memory_peak_bytes, used);
        a.s.total_bytes = std::max(a.s.total_bytes, d.total_bytes);
        a.s.temperature_max_c = std::max(a.s.temperature_max_c, d.temperature_c);
        if (d.power_w >= 0.0) {
            a.power_sum += d.power_w;
            ++a.power_n;
        }
        a.s.power_limit_w = std::max(a.s.power_limit_w, d.power_limit_w);
        if (d.sm_clock_mhz >= 0.0) {
            a.clock_sum += d.sm_clock_mhz;
            ++a.clock_n;
        }
    }
    std::vector<DeviceSummary> out;
    for (auto& [key, a] : by_device) {
        if (a.util_n > 0) a.s.utilization_mean = a.util_sum / static_cast<double>(a.util_n);
        if (a.power_n > 0) a.s.power_mean_w = a.power_sum / static_cast<double>(a.power_n);
        if (a.clock_n > 0) a.s.sm_clock_mean_mhz = a.clock_sum / static_cast<double>(a.clock_n);
        out.push_back(std::move(a.s));
    }
    return out;
}

}  // namespace hearth
