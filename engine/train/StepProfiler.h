#pragma once
// StepProfiler: the step-time breakdown. It times the sections of one accumulation group (one
// optimizer step) in every `every_n_groups`: on the CPU with the wall clock, on a GPU with CUDA
// events read back once the device has passed them (no synchronisation in the hot path), the
// data wait always with the wall clock (it is host time). The metric read-back (Sync) happens
// once per logging interval, so it is timed on every group and spread over all micro-batches.
// Results are means per micro-batch, for the logging interval and for the epoch.

#include "engine/events/Events.h"
#include "engine/train/Profiler.h"

#include <chrono>
#include <deque>
#include <memory>

namespace hearth {

class CudaTimer;

class StepProfiler final : public Profiler {
public:
    // cuda_device < 0: wall clock (CPU training).
    StepProfiler(int64_t every_n_groups, int64_t cuda_device);
    ~StepProfiler() override;

    void begin(Section section) override;
    void end(Section section) override;
    void beginGroup() override;
    void endGroup(int64_t micro_batches) override;

    // Means per micro-batch since the last call. On a GPU, steps whose events the device has not
    // passed yet count in a later call; `wait` (epoch end) synchronises on them first.
    StepBreakdown takeInterval();
    StepBreakdown takeEpoch(bool wait);

private:
    struct Totals {
        std::array<double, kSectionCount> ms{};
        double step_ms = 0.0;        // profiled micro-batches' own time, sync excluded
        double sync_ms = 0.0;        // every micro-batch's
        int64_t profiled = 0;        // profiled micro-batches
        int64_t micro_batches = 0;   // all micro-batches
        void add(const Totals& o);
    };
    struct HostPart {                // a profiled micro-batch's host-timed part, waiting for its events
        int64_t tag = 0;
        double data_wait_ms = 0.0;
    };
    using Clock = std::chrono::steady_clock;

    void addProfiled(const std::array<double, kSectionCount>& ms, double step_ms);
    void collectDevice(bool wait);
    static StepBreakdown means(const Totals& t);

    int64_t every_n_;
    std::unique_ptr<CudaTimer> cuda_;
    int64_t groups_ = 0;
    bool profiling_ = false;
    // The open group (wall clock) or micro-batch (CUDA).
    std::array<Clock::time_point, kSectionCount> started_{};
    std::array<double, kSectionCount> group_ms_{};
    Clock::time_point group_start_{};
    double group_sync_ms_ = 0.0;
    double micro_wait_ms_ = 0.0;     // CUDA: the open micro-batch's data wait
    bool micro_open_ = false;
    int64_t next_tag_ = 0;
    std::deque<HostPart> host_parts_;
    Totals interval_, epoch_;
};

}  // namespace hearth
