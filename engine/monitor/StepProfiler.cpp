#include "engine/monitor/StepProfiler.h"

#include "engine/strategy/Strategy.h"

#ifdef HEARTH_WITH_CUDA
#include "engine/monitor/CudaTimer.h"
#endif

#include <algorithm>
#include <utility>

namespace hearth {

namespace {

size_t index(Section s) { return static_cast<size_t>(s); }

#ifdef HEARTH_WITH_CUDA
// CUDA event slots: a section's begin at 2*s, its end at 2*s + 1.
int beginSlot(Section s) { return 2 * static_cast<int>(s); }
int endSlot(Section s) { return 2 * static_cast<int>(s) + 1; }
#endif

}  // namespace

#ifndef HEARTH_WITH_CUDA
// Without CUDA the timer is never created; this keeps unique_ptr<CudaTimer> complete.
class CudaTimer {};
#endif

void StepProfiler::Totals::add(const Totals& o) {
    for (size_t i = 0; i < ms.size(); ++i) ms[i] += o.ms[i];
    step_ms += o.step_ms;
    sync_ms += o.sync_ms;
    profiled += o.profiled;
    micro_batches += o.micro_batches;
}

StepProfiler::StepProfiler(int64_t every_n_groups, int64_t cuda_device, std::function<dist::CommStats()> comm_stats)
    : every_n_(std::max<int64_t>(every_n_groups, 1)), comm_stats_(std::move(comm_stats)) {
#ifdef HEARTH_WITH_CUDA
    if (cuda_device >= 0) cuda_ = std::make_unique<CudaTimer>(cuda_device);
#else
    (void)cuda_device;
#endif
}

StepProfiler::~StepProfiler() = default;

void StepProfiler::beginGroup() {
    // Counted by groups that ended: a group opened for the epoch's last (empty) fetch never ends
    // and does not shift the sampling. The process's first group is its warm-up (first
    // allocations, kernel and primitive selection, workers starting): for the default CNN on the
    // CPU it took 3x a later step, 25x (1.9 s) in a process started cold, where a 1-epoch run's
    // breakdown read 528 ms a step against the loop's 127. Sampling starts with the second.
    profiling_ = groups_ > 0 && (groups_ - 1) % every_n_ == 0;
    group_ms_ = {};
    group_sync_ms_ = 0.0;
    micro_open_ = false;
    group_start_ = Clock::now();
}

void StepProfiler::begin(Section section) {
    // Unprofiled steps read no clock, except for the metric sync (timed on every group).
    if (!profiling_ && section != Section::Sync) return;
    started_[index(section)] = Clock::now();
    if (!profiling_ || !cuda_) return;
#ifdef HEARTH_WITH_CUDA
    if (section == Section::HostToDevice) {
        // A micro-batch's device work starts with its copy: one CudaTimer step per micro-batch.
        if (micro_open_) cuda_->endStep();
        cuda_->beginStep(next_tag_);
        host_parts_.push_back(HostPart{next_tag_, micro_wait_ms_});
        ++next_tag_;
        micro_open_ = true;
    }
    if (section != Section::DataWait && section != Section::Sync) cuda_->mark(beginSlot(section));
#endif
}

void StepProfiler::end(Section section) {
    if (!profiling_ && section != Section::Sync) return;
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - started_[index(section)]).count();
    if (section == Section::Sync) {
        // Timed on every group: it happens once per logging interval.
        interval_.sync_ms += ms;
        group_sync_ms_ += ms;
        return;
    }
    if (!profiling_) return;
    if (!cuda_) {
        group_ms_[index(section)] += ms;
        return;
    }
#ifdef HEARTH_WITH_CUDA
    if (section == Section::DataWait) {
        micro_wait_ms_ = ms;
    } else if (micro_open_) {
        cuda_->mark(endSlot(section));
    }
#endif
}

void StepProfiler::endGroup(int64_t micro_batches) {
    ++groups_;
    interval_.micro_batches += micro_batches;
    micro_batches_ += micro_batches;
    if (!profiling_) return;
    profiling_ = false;
    if (!cuda_) {
        const double wall = std::chrono::duration<double, std::milli>(Clock::now() - group_start_).count();
        interval_.profiled += micro_batches;
        for (size_t i = 0; i < group_ms_.size(); ++i) {
            if (i != index(Section::Sync)) interval_.ms[i] += group_ms_[i];
        }
        interval_.step_ms += std::max(0.0, wall - group_sync_ms_);
        return;
    }
#ifdef HEARTH_WITH_CUDA
    if (micro_open_) cuda_->endStep();
    micro_open_ = false;
    collectDevice(false);
#endif
}

void StepProfiler::collectDevice(bool wait) {
#ifdef HEARTH_WITH_CUDA
    if (!cuda_) return;
    for (const auto& step : cuda_->collect(wait)) {
        double wait_ms = 0.0;
        while (!host_parts_.empty() && host_parts_.front().tag <= step.tag) {
            if (host_parts_.front().tag == step.tag) wait_ms = host_parts_.front().data_wait_ms;
            host_parts_.pop_front();
        }
        std::array<double, kSectionCount> ms{};
        double span = 0.0;
        for (int s = 0; s < kSectionCount; ++s) {
            const auto b = static_cast<size_t>(beginSlot(static_cast<Section>(s)));
            const auto e = static_cast<size_t>(endSlot(static_cast<Section>(s)));
            if (b < step.recorded.size() && step.recorded[b] && step.recorded[e]) {
                ms[static_cast<size_t>(s)] = std::max(0.0, step.at_ms[e] - step.at_ms[b]);
            }
            if (e < step.recorded.size() && step.recorded[e]) span = std::max(span, step.at_ms[e]);
        }
        ms[index(Section::DataWait)] = wait_ms;
        addProfiled(ms, span + wait_ms);
    }
#else
    (void)wait;
#endif
}

void StepProfiler::addProfiled(const std::array<double, kSectionCount>& ms, double step_ms) {
    for (size_t i = 0; i < ms.size(); ++i) interval_.ms[i] += ms[i];
    interval_.step_ms += step_ms;
    ++interval_.profiled;
}

StepBreakdown StepProfiler::means(const Totals& t) {
    StepBreakdown b;
    b.profiled = t.profiled;
    if (t.profiled > 0) {
        const auto n = static_cast<double>(t.profiled);
        b.data_wait_ms = t.ms[index(Section::DataWait)] / n;
        b.host_to_device_ms = t.ms[index(Section::HostToDevice)] / n;
        b.forward_ms = t.ms[index(Section::Forward)] / n;
        b.backward_ms = t.ms[index(Section::Backward)] / n;
        b.optimizer_ms = t.ms[index(Section::OptimizerStep)] / n;
        b.step_ms = t.step_ms / n;
    }
    if (t.micro_batches > 0) {
        b.sync_ms = t.sync_ms / static_cast<double>(t.micro_batches);
        if (t.profiled > 0) b.step_ms += b.sync_ms;
    }
    return b;
}

// The gradient communication the strategy waited for since `last` (its running means turned into
// totals), per micro-batch: moved from backward into its own part.
void StepProfiler::subtractCommWait(StepBreakdown& b, CommMark& last) const {
    if (!comm_stats_) return;
    const dist::CommStats now = comm_stats_();
    const double comm_total = now.comm_ms * static_cast<double>(now.steps);
    const double overlap_total = now.overlap_ms * static_cast<double>(now.steps);
    const double exposed = (comm_total - last.comm_total) - (overlap_total - last.overlap_total);
    const int64_t micro = micro_batches_ - last.micro_batches;
    last = CommMark{comm_total, overlap_total, micro_batches_};
    if (now.steps == 0 || micro <= 0 || b.profiled == 0) return;
    b.comm_wait_ms = std::min(std::max(0.0, exposed / static_cast<double>(micro)), b.backward_ms);
    b.backward_ms -= b.comm_wait_ms;
}

StepBreakdown StepProfiler::takeInterval() {
    collectDevice(false);
    StepBreakdown b = means(interval_);
    epoch_.add(interval_);
    interval_ = {};
    subtractCommWait(b, interval_comm_);
    return b;
}

StepBreakdown StepProfiler::takeEpoch(bool wait) {
    collectDevice(wait);
    epoch_.add(interval_);
    interval_ = {};
    StepBreakdown b = means(epoch_);
    epoch_ = {};
    subtractCommWait(b, epoch_comm_);
    return b;
}

std::unique_ptr<StepProfiler> makeStepProfiler(int64_t profile_every_n_steps, const Strategy& strategy) {
    if (profile_every_n_steps <= 0) return nullptr;
    const torch::Device d = strategy.device();
    return std::make_unique<StepProfiler>(profile_every_n_steps, d.is_cuda() ? std::max<int64_t>(d.index(), 0) : -1,
                                          [&strategy] { return strategy.commStats(); });
}

}  // namespace hearth
