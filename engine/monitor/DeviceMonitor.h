#pragma once
// DeviceMonitor: samples memory of the training device about once a second (process RSS on the
// host; caching-allocator stats on CUDA) and emits DeviceSample events. Polled from the
// training thread between steps, so sinks see events on one thread and training never waits.

#include "engine/events/Events.h"
#include "engine/monitor/DeviceStatsSampler.h"
#include "engine/monitor/PeakFlops.h"

#include <torch/torch.h>

#include <chrono>
#include <vector>

namespace hearth {

// The dense peak of `device` for `precision` (PeakFlops.h): by the CUDA device's name; nullopt on
// the CPU and for a GPU the table does not know.
std::optional<PeakFlops> devicePeakFlops(const torch::Device& device, const std::string& precision, bool tf32);

class DeviceMonitor final {
public:
    explicit DeviceMonitor(torch::Device device, std::chrono::milliseconds interval = std::chrono::seconds(1));
    ~DeviceMonitor();

    // Emits samples when `interval` has passed since the last ones (or when forced).
    void poll(EventSink& sink, bool force = false);
    // Highest memory seen on the training device (CUDA allocator peak, or host peak RSS).
    int64_t peakBytes() const { return peak_bytes_; }
    // Memory in use on the training device now (CUDA: allocated; host: RSS), and the allocator's
    // reserved peak (CUDA; 0 on the host).
    int64_t currentBytes() const;
    int64_t reservedPeakBytes() const;
    // Bytes of tensors held now and at most since resetPeak(): the CUDA caching allocator's
    // allocated bytes, or on the host the counting CPU allocator's (CpuTensorMemory.h; -1 when it
    // could not be installed).
    int64_t tensorBytes() const;
    int64_t tensorPeakBytes() const;
    // Starts the peaks over from now (the CUDA allocator's peaks, or the process's VmHWM and the
    // CPU tensor peak).
    void resetPeak();
    // Starts the tensor peak over (CUDA: the allocator's peaks; host: the CPU tensor peak), leaving
    // the host's peak RSS running: the peak of each phase of a step, within one peak of the whole.
    void resetTensorPeak();
    // A resumed run: samples' elapsed_s continue from the time trained before the interruption.
    void continueFrom(double elapsed_s);
    // The data-parallel rank its samples are marked with.
    void setRank(int64_t rank) { rank_ = rank; }
    // Every sample emitted so far, thinned to about kHistory (when full, every other poll's
    // samples are dropped and the spacing doubles): what a rank other than 0 hands to rank 0.
    static constexpr size_t kHistory = 4096;
    const std::vector<DeviceSample>& history() const { return history_; }
    // The samples of the last poll (host, and the GPU on CUDA).
    const std::vector<DeviceSample>& latest() const { return latest_; }

private:
    void startSampler(EventSink& sink);
    void sampleHost(EventSink& sink, double elapsed, const DeviceStatsSampler::Snapshot& stats);
    void sampleCuda(EventSink& sink, double elapsed, const DeviceStatsSampler::Snapshot& stats);
    void sampleIdleGpus(EventSink& sink, double elapsed, const DeviceStatsSampler::Snapshot& stats);
    void emit(EventSink& sink, DeviceSample sample);

    torch::Device device_;
    std::chrono::milliseconds interval_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_;
    bool sampled_ = false;
    int64_t peak_bytes_ = 0;
    int64_t rank_ = 0;
    std::vector<DeviceSample> history_;
    std::vector<DeviceSample> latest_;
    std::vector<int64_t> history_polls_;  // the poll each history_ sample came from
    int64_t keep_every_ = 1;  // history keeps one poll's samples in keep_every_
    int64_t polls_ = 0;
    // NVML and CPU utilisation, read on the sampler's thread; started at the first poll (when
    // the rank is known). On a CPU run, rank 0 shows every NVML device (an idle GPU is news).
    std::unique_ptr<DeviceStatsSampler> sampler_;
    bool cpu_run_reads_all_gpus_ = false;
};

}  // namespace hearth
