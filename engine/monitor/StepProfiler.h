#pragma once
// StepProfiler: the step-time breakdown. It times the sections of one accumulation group (one
// optimizer step) in every `every_n_groups`, starting with the second (the process's first is
// its warm-up): on the CPU with the wall clock, on a GPU with CUDA events read back once the
// device has passed them (no synchronisation in the hot path), the data wait always with the
// wall clock (it is host time). The metric read-back (Sync) happens once per logging interval, so
// it is timed on every group and spread over all micro-batches.
// Results are means per micro-batch, for the logging interval and for the epoch. Under a
// data-parallel strategy the exposed gradient communication (the strategy's CommStats:
// communication minus its overlap with backward) is moved from backward into comm_wait.

#include "engine/dist/CommStats.h"
#include "engine/events/Events.h"
#include "engine/monitor/Profiler.h"

#include <chrono>
#include <deque>
#include <functional>
#include <memory>

namespace hearth {

class CudaTimer;

class StepProfiler final : public Profiler {
public:
    // cuda_device < 0: wall clock (CPU training). comm_stats: the strategy's running
    // communication statistics (empty: one device, no communication).
    StepProfiler(int64_t every_n_groups, int64_t cuda_device, std::function<dist::CommStats()> comm_stats = {});
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
    // The communication totals and micro-batches when a breakdown was last taken.
    struct CommMark {
        double comm_total = 0.0, overlap_total = 0.0;
        int64_t micro_batches = 0;
    };
    using Clock = std::chrono::steady_clock;

    void subtractCommWait(StepBreakdown& b, CommMark& last) const;
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
    std::function<dist::CommStats()> comm_stats_;
    int64_t micro_batches_ = 0;      // in every group that ended
    CommMark interval_comm_, epoch_comm_;
};

class Strategy;

// The profiler `trainer.profile_every_n_steps` asks for on `strategy`'s device, reading its
// communication statistics; null when 0 (off). The strategy must outlive it.
std::unique_ptr<StepProfiler> makeStepProfiler(int64_t profile_every_n_steps, const Strategy& strategy);

}  // namespace hearth
