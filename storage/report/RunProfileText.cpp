// Terminal renderings of where a run's time and memory went (`hearth-cli show` and `compare`).
#include "storage/report/RunReport.h"
#include "storage/report/TextTable.h"

#include "engine/metrics/RunProfile.h"

#include <cmath>

namespace hearth::report {
namespace {

std::string ms(double v) { return formatFixed(v, v < 10.0 ? 2 : 1) + " ms"; }

std::string shareText(double part, double whole) {
    return whole > 0.0 ? formatFixed(100.0 * part / whole, 1) + "%" : "-";
}

std::string orDash(double v, const std::string& text) { return v < 0.0 ? "-" : text; }

}  // namespace

std::string breakdownText(const std::vector<EpochMetrics>& epochs) {
    const auto mean = meanBreakdown(epochs);
    if (!mean) return "  (not measured: trainer.profile_every_n_steps was 0, or the run predates it)\n";
    std::vector<std::string> headers{"PART", "RUN", "SHARE"};
    std::vector<const EpochMetrics*> profiled;
    for (const auto& e : epochs) {
        if (e.breakdown.profiled > 0) profiled.push_back(&e);
    }
    // Per-epoch columns while they fit a terminal.
    const bool per_epoch = profiled.size() > 1 && profiled.size() <= 6;
    if (per_epoch) {
        for (const auto* e : profiled) headers.push_back("EPOCH " + std::to_string(e->epoch));
    }
    TextTable t(headers);
    const auto run_parts = breakdownParts(*mean);
    for (size_t i = 0; i < run_parts.size(); ++i) {
        const auto& p = run_parts[i];
        if (p.key == "comm_wait" && mean->comm_wait_ms == 0.0) continue;
        std::vector<std::string> row{p.label, ms(p.value), shareText(p.value, mean->step_ms)};
        if (per_epoch) {
            for (const auto* e : profiled) row.push_back(ms(breakdownParts(e->breakdown)[i].value));
        }
        t.addRow(std::move(row));
    }
    std::vector<std::string> total{"Step (measured)", ms(mean->step_ms), "100.0%"};
    if (per_epoch) {
        for (const auto* e : profiled) total.push_back(ms(e->breakdown.step_ms));
    }
    t.addRow(std::move(total));
    int64_t count = 0;
    for (const auto* e : profiled) count += e->breakdown.profiled;
    return t.render("  ") + "  per micro-batch; " + std::to_string(count) + " micro-batches profiled" +
           (profiled.size() > 1 ? " (RUN leaves out epoch 0, the warm-up)" : "") + "\n";
}

std::string memoryText(const MemoryBreakdown& m) {
    TextTable t({"PART", "BYTES", "SHARE"});
    double total = 0.0;
    const auto parts = memoryParts(m);
    for (const auto& p : parts) total += p.value;
    for (const auto& p : parts) {
        if ((p.key == "reserved_unused" || p.key == "cuda_graph") && p.value == 0.0) continue;
        t.addRow({p.label, formatBytes(static_cast<int64_t>(p.value)), shareText(p.value, total)});
    }
    t.addRow({"Peak (measured)", formatBytes(m.peak_bytes), "-"});
    if (m.offloaded_bytes > 0) t.addRow({"Offloaded to host", formatBytes(m.offloaded_bytes), "-"});
    const bool host = m.device.rfind("cuda", 0) != 0;
    return t.render("  ") + "  on " + m.device +
           (host ? "; activations = CPU tensor bytes at peak - before training - gradients - optimizer state; "
                   "heap beyond tensors = what peak RSS grew by beyond them; other = what the process held before "
                   "training beyond the parameters (its libraries, the loaded data)\n"
                 : "; from the caching allocator (activations = the most a forward pass kept allocated for its "
                   "backward; other = the rest of the peak: library workspaces, the backward's temporaries)" +
                   std::string(m.offloaded_bytes > 0 ? "; offloaded to host = the optimizer's state and copies in host "
                                                       "memory (trainer.offload_optimizer), not in the peak: what "
                                                       "offload saved on the device"
                                                     : "") +
                   "\n");
}

std::string devicesText(const std::vector<DeviceSummary>& devices) {
    TextTable t({"RANK", "DEVICE", "NAME", "UTIL MEAN", "UTIL MAX", "MEMORY PEAK", "TOTAL", "TEMP MAX", "POWER",
                 "SM CLOCK", "SAMPLES"});
    for (const auto& d : devices) {
        const std::string power = d.power_mean_w < 0.0 ? "-"
                                  : formatFixed(d.power_mean_w, 0) + " W" +
                                        (d.power_limit_w > 0.0 ? " / " + formatFixed(d.power_limit_w, 0) + " W" : "");
        t.addRow({std::to_string(d.rank), d.device < 0 ? "host" : "gpu " + std::to_string(d.device), d.name,
                  orDash(d.utilization_mean, formatFixed(100.0 * d.utilization_mean, 0) + "%"),
                  orDash(d.utilization_max, formatFixed(100.0 * d.utilization_max, 0) + "%"),
                  formatBytes(d.memory_peak_bytes), d.total_bytes > 0 ? formatBytes(d.total_bytes) : "-",
                  orDash(d.temperature_max_c, formatFixed(d.temperature_max_c, 0) + " C"), power,
                  orDash(d.sm_clock_mean_mhz, formatFixed(d.sm_clock_mean_mhz, 0) + " MHz"),
                  std::to_string(d.samples)});
    }
    return t.render("  ") + "  host: this process's CPU share of all cores and its RSS; GPU: NVML (the driver's view)\n";
}

}  // namespace hearth::report
