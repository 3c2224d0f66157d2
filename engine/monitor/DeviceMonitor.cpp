#include "engine/monitor/DeviceMonitor.h"

#include "engine/monitor/CpuTensorMemory.h"
#include "engine/monitor/CudaMemory.h"
#include "engine/monitor/ProcessMemory.h"

#include <malloc.h>

#include <algorithm>

namespace hearth {

std::optional<PeakFlops> devicePeakFlops(const torch::Device& device, const std::string& precision, bool tf32) {
#ifdef HEARTH_WITH_CUDA
    if (device.is_cuda()) return densePeakFlops(cudaDeviceName(device.index() < 0 ? 0 : device.index()), precision, tf32);
#else
    (void)precision;
    (void)tf32;
#endif
    (void)device;
    return std::nullopt;
}

DeviceMonitor::DeviceMonitor(torch::Device device, std::chrono::milliseconds interval)
    : device_(device), interval_(interval), start_(std::chrono::steady_clock::now()), last_(start_) {
#ifdef HEARTH_WITH_CUDA
    if (device_.is_cuda()) {
        resetCudaPeakStats(device_.index() < 0 ? 0 : device_.index());
    }
#endif
    if (!device_.is_cuda()) installCpuTensorCounting();
}

int64_t DeviceMonitor::tensorBytes() const {
#ifdef HEARTH_WITH_CUDA
    if (device_.is_cuda()) return cudaMemoryStats(device_.index() < 0 ? 0 : device_.index()).allocated_bytes;
#endif
    const auto stats = cpuTensorMemory();
    return stats.counting ? stats.current_bytes : -1;
}

int64_t DeviceMonitor::tensorPeakBytes() const {
#ifdef HEARTH_WITH_CUDA
    if (device_.is_cuda()) return cudaMemoryStats(device_.index() < 0 ? 0 : device_.index()).allocated_peak_bytes;
#endif
    const auto stats = cpuTensorMemory();
    return stats.counting ? stats.peak_bytes : -1;
}

int64_t DeviceMonitor::currentBytes() const {
#ifdef HEARTH_WITH_CUDA
    if (device_.is_cuda()) return cudaMemoryStats(device_.index() < 0 ? 0 : device_.index()).allocated_bytes;
#endif
    return readProcessMemory().rss_bytes;
}

int64_t DeviceMonitor::reservedPeakBytes() const {
#ifdef HEARTH_WITH_CUDA
    if (device_.is_cuda()) return cudaMemoryStats(device_.index() < 0 ? 0 : device_.index()).reserved_peak_bytes;
#endif
    return 0;
}

void DeviceMonitor::continueFrom(double elapsed_s) {
    start_ = std::chrono::steady_clock::now() -
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(elapsed_s));
}

void DeviceMonitor::resetTensorPeak() {
#ifdef HEARTH_WITH_CUDA
    if (device_.is_cuda()) {
        resetCudaPeakStats(device_.index() < 0 ? 0 : device_.index());
        return;
    }
#endif
    resetCpuTensorPeak();
}

void DeviceMonitor::resetPeak() {
#ifdef HEARTH_WITH_CUDA
    if (device_.is_cuda()) {
        resetCudaPeakStats(device_.index() < 0 ? 0 : device_.index());
        peak_bytes_ = 0;
        return;
    }
#endif
    // Heap freed by what ran before (an earlier run of a sweep in this process) goes back to the
    // system first, so the baseline and the peak count only what this run holds.
    malloc_trim(0);
    resetPeakRss();
    resetCpuTensorPeak();
    peak_bytes_ = readProcessMemory().peak_rss_bytes;
}

DeviceMonitor::~DeviceMonitor() = default;

void DeviceMonitor::startSampler(EventSink& sink) {
    auto nvml = Nvml::load();
    std::vector<int> indices;
    if (!nvml->available()) {
        sink.onEvent(LogLine{LogLine::Level::Info, "device statistics: " + nvml->unavailableReason() +
                                                       "; showing CPU utilisation and process memory"});
    } else if (device_.is_cuda()) {
        int index = static_cast<int>(device_.index() < 0 ? 0 : device_.index());
#ifdef HEARTH_WITH_CUDA
        // CUDA and NVML number devices differently (CUDA_VISIBLE_DEVICES, ordering): match by bus.
        const int by_bus = nvml->indexForPciBusId(cudaPciBusId(index));
        if (by_bus >= 0) index = by_bus;
#endif
        indices.push_back(index);
    } else if (rank_ == 0) {
        cpu_run_reads_all_gpus_ = true;
        for (int i = 0; i < nvml->deviceCount(); ++i) indices.push_back(i);
    }
    sampler_ = std::make_unique<DeviceStatsSampler>(std::move(nvml), std::move(indices));
}

void DeviceMonitor::poll(EventSink& sink, bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && sampled_ && now - last_ < interval_) {
        return;
    }
    if (!sampler_) {
        startSampler(sink);
    }
    sampled_ = true;
    last_ = now;
    ++polls_;
    latest_.clear();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const DeviceStatsSampler::Snapshot stats = sampler_->latest();
    for (const auto& note : sampler_->takeNotes()) {
        sink.onEvent(LogLine{LogLine::Level::Warning, note});
    }
    sampleHost(sink, elapsed, stats);
    if (device_.is_cuda()) {
        sampleCuda(sink, elapsed, stats);
    } else if (cpu_run_reads_all_gpus_) {
        sampleIdleGpus(sink, elapsed, stats);
    }
}

namespace {

void applyReading(DeviceSample& s, const NvmlReading& r) {
    s.utilization = r.utilization;
    s.driver_used_bytes = r.used_bytes;
    s.temperature_c = r.temperature_c;
    s.power_w = r.power_w;
    s.power_limit_w = r.power_limit_w;
    s.sm_clock_mhz = r.sm_clock_mhz;
    if (s.total_bytes <= 0 && r.total_bytes > 0) s.total_bytes = r.total_bytes;
    if (s.name.empty()) s.name = r.name;
}

}  // namespace

// A CPU run on a machine with GPUs: what the driver says about each of them (used memory is
// every process's, so the bars show the driver's view, not this run's).
void DeviceMonitor::sampleIdleGpus(EventSink& sink, double elapsed, const DeviceStatsSampler::Snapshot& stats) {
    for (const auto& r : stats.gpus) {
        DeviceSample s;
        s.elapsed_s = elapsed;
        s.device = r.index;
        s.name = r.name.empty() ? "GPU " + std::to_string(r.index) : r.name;
        applyReading(s, r);
        s.allocated_bytes = std::max<int64_t>(r.used_bytes, 0);
        s.reserved_bytes = 0;
        s.peak_bytes = 0;
        emit(sink, std::move(s));
    }
}

void DeviceMonitor::sampleHost(EventSink& sink, double elapsed, const DeviceStatsSampler::Snapshot& stats) {
    const auto mem = readProcessMemory();
    DeviceSample s;
    s.elapsed_s = elapsed;
    s.device = -1;
    s.name = "host";
    s.allocated_bytes = mem.rss_bytes;
    s.reserved_bytes = mem.rss_bytes;
    s.peak_bytes = mem.peak_rss_bytes;
    s.total_bytes = mem.total_ram_bytes;
    s.utilization = stats.cpu_utilization;
    if (!device_.is_cuda()) {
        peak_bytes_ = std::max(peak_bytes_, mem.peak_rss_bytes);
    }
    emit(sink, std::move(s));
}

void DeviceMonitor::sampleCuda(EventSink& sink, double elapsed, const DeviceStatsSampler::Snapshot& stats) {
#ifdef HEARTH_WITH_CUDA
    const int64_t index = device_.index() < 0 ? 0 : device_.index();
    const auto st = cudaMemoryStats(index);
    DeviceSample s;
    s.elapsed_s = elapsed;
    s.device = index;
    s.name = cudaDeviceName(index);
    s.allocated_bytes = st.allocated_bytes;
    s.reserved_bytes = st.reserved_bytes;
    s.peak_bytes = st.allocated_peak_bytes;
    s.total_bytes = st.total_bytes;
    peak_bytes_ = std::max(peak_bytes_, st.allocated_peak_bytes);
    if (!stats.gpus.empty()) applyReading(s, stats.gpus.front());
    emit(sink, std::move(s));
#else
    (void)sink;
    (void)elapsed;
    (void)stats;
#endif
}

void DeviceMonitor::emit(EventSink& sink, DeviceSample sample) {
    sample.rank = rank_;
    latest_.push_back(sample);
    if (polls_ % keep_every_ == 0) {
        if (history_.size() >= kHistory) {
            // Thin out by poll (a poll may take two samples, host and GPU): keep the polls at
            // multiples of the doubled spacing.
            keep_every_ *= 2;
            std::vector<DeviceSample> kept;
            std::vector<int64_t> kept_polls;
            for (size_t i = 0; i < history_.size(); ++i) {
                if (history_polls_[i] % keep_every_ != 0) continue;
                kept.push_back(history_[i]);
                kept_polls.push_back(history_polls_[i]);
            }
            history_ = std::move(kept);
            history_polls_ = std::move(kept_polls);
        }
        if (polls_ % keep_every_ == 0) {
            history_.push_back(sample);
            history_polls_.push_back(polls_);
        }
    }
    sink.onEvent(sample);
}

}  // namespace hearth
