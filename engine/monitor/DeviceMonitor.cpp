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

void DeviceMonitor::poll(EventSink& sink, bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && sampled_ && now - last_ < interval_) {
        return;
    }
    sampled_ = true;
    last_ = now;
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
    sink.onEvent(s);
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
    sink.onEvent(s);
#else
    (void)sink;
    (void)elapsed;
#endif
}

}  // namespace hearth
