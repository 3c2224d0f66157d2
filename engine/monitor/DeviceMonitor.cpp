#include "engine/monitor/DeviceMonitor.h"

#include "engine/monitor/CudaMemory.h"
#include "engine/monitor/ProcessMemory.h"

#include <algorithm>

namespace hearth {

DeviceMonitor::DeviceMonitor(torch::Device device, std::chrono::milliseconds interval)
    : device_(device), interval_(interval), start_(std::chrono::steady_clock::now()), last_(start_) {
#ifdef HEARTH_WITH_CUDA
    if (device_.is_cuda()) {
        resetCudaPeakStats(device_.index() < 0 ? 0 : device_.index());
    }
#endif
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

void DeviceMonitor::resetPeak() {
#ifdef HEARTH_WITH_CUDA
    if (device_.is_cuda()) {
        resetCudaPeakStats(device_.index() < 0 ? 0 : device_.index());
        peak_bytes_ = 0;
        return;
    }
#endif
    resetPeakRss();
    peak_bytes_ = readProcessMemory().peak_rss_bytes;
}

void DeviceMonitor::poll(EventSink& sink, bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && sampled_ && now - last_ < interval_) {
        return;
    }
    sampled_ = true;
    last_ = now;
    ++polls_;
    latest_.clear();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    sampleHost(sink, elapsed);
    if (device_.is_cuda()) {
        sampleCuda(sink, elapsed);
    }
}

void DeviceMonitor::sampleHost(EventSink& sink, double elapsed) {
    const auto mem = readProcessMemory();
    DeviceSample s;
    s.elapsed_s = elapsed;
    s.device = -1;
    s.name = "host";
    s.allocated_bytes = mem.rss_bytes;
    s.reserved_bytes = mem.rss_bytes;
    s.peak_bytes = mem.peak_rss_bytes;
    s.total_bytes = mem.total_ram_bytes;
    if (!device_.is_cuda()) {
        peak_bytes_ = std::max(peak_bytes_, mem.peak_rss_bytes);
    }
    emit(sink, std::move(s));
}

void DeviceMonitor::sampleCuda(EventSink& sink, double elapsed) {
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
    emit(sink, std::move(s));
#else
    (void)sink;
    (void)elapsed;
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
