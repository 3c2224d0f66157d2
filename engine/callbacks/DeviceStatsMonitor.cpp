#include "engine/callbacks/DeviceStatsMonitor.h"

#include "engine/config/ByteSize.h"
#include "engine/monitor/MemoryAccounting.h"
#include "engine/optim/OffloadedOptimizer.h"
#include "engine/strategy/Strategy.h"
#include "engine/train/RankReport.h"

#include <algorithm>
#include <cstdio>

namespace hearth {
namespace {

// The monitor emits through the Trainer (the run's sink, on the training thread).
class ContextSink final : public EventSink {
public:
    explicit ContextSink(TrainerContext& ctx) : ctx_(ctx) {}
    void onEvent(const Event& event) override { ctx_.emit(event); }

private:
    TrainerContext& ctx_;
};

}  // namespace

DeviceStatsMonitor::DeviceStatsMonitor(torch::Device device) : monitor_(device) {}

void DeviceStatsMonitor::onFitStart(TrainerContext& ctx) {
    monitor_.setRank(ctx.strategy().rank());
    // The memory breakdown's baseline: what the process (or the device) holds before training.
    memory_ = MemoryBreakdown{};
    first_step_ = -1;
    optimizer_state_measured_ = false;
    monitor_.resetPeak();
    const int64_t tensors = monitor_.tensorBytes();
    // A resumed fit's optimizer holds its loaded state already (a fresh one creates it at the first step).
    const int64_t loaded_state = measureHeldBytes(ctx.model(), ctx.optimizer()).optimizer_state;
    const MemoryBaseline baseline =
        memoryBaseline(monitor_.currentBytes(), tensors, ctx.strategy().gradientBuffers(), loaded_state);
    baseline_bytes_ = baseline.bytes;
    baseline_tensor_bytes_ = baseline.tensor_bytes;
    batch_end_bytes_ = tensors;
    forward_kept_bytes_ = -1;
    train_tensor_peak_ = -1;
}

// Host: the tensor peak starts over with each epoch's training loop, so that what validation and
// the checkpoints after it hold (a sharded optimizer's state gathered on rank 0 to be written:
// zero1's "activations" on an MLP 2x2048 were rank 0 holding every rank's Adam state) is not
// taken for the step's. The peak RSS keeps running: the run's peak stays the whole fit's.
void DeviceStatsMonitor::onTrainEpochStart(TrainerContext& ctx) {
    if (!ctx.strategy().device().is_cuda()) monitor_.resetTensorPeak();
}

// A read of the caching allocator's counters on the host: no device sync.
void DeviceStatsMonitor::onForwardEnd(TrainerContext& ctx) {
    if (!ctx.strategy().device().is_cuda()) return;
    forward_kept_bytes_ = std::max(forward_kept_bytes_, monitor_.tensorBytes() - batch_end_bytes_);
}

void DeviceStatsMonitor::onResume(TrainerContext& ctx) {
    monitor_.continueFrom(ctx.progress().elapsed_s);
}

void DeviceStatsMonitor::onBeforeOptimizerStep(TrainerContext& ctx) {
    if (first_step_ >= 0) return;
    first_step_ = ctx.state().global_step + 1;
    // The first step's gradients, before the optimizer step frees or zeroes them.
    const HeldBytes held = measureHeldBytes(ctx.model(), ctx.optimizer(), ctx.strategy().gradientBuffers());
    memory_.parameters_bytes = held.parameters;
    memory_.gradients_bytes = held.gradients;
}

void DeviceStatsMonitor::onTrainBatchEnd(TrainerContext& ctx) {
    if (!optimizer_state_measured_ && first_step_ >= 0 && ctx.state().global_step >= first_step_) {
        // After the first optimizer step: its state is created lazily (a resumed one's was loaded).
        const HeldBytes held = measureHeldBytes(ctx.model(), ctx.optimizer());
        memory_.optimizer_state_bytes = held.optimizer_state;
        memory_.offloaded_bytes = held.offloaded;
        optimizer_state_measured_ = true;
    }
    if (ctx.strategy().device().is_cuda()) {
        batch_end_bytes_ = monitor_.tensorBytes();
    } else {
        train_tensor_peak_ = std::max(train_tensor_peak_, monitor_.tensorPeakBytes());
    }
    ContextSink sink(ctx);
    monitor_.poll(sink);
}

void DeviceStatsMonitor::onMetricsSync(TrainerContext& ctx, double local_samples_per_sec) {
    ContextSink sink(ctx);
    shareLiveRanks(ctx.strategy(), monitor_, local_samples_per_sec, sink);
}

void DeviceStatsMonitor::onEvalBatchEnd(TrainerContext& ctx) {
    ContextSink sink(ctx);
    monitor_.poll(sink);
}

void DeviceStatsMonitor::onFitEnd(TrainerContext& ctx) {
    ContextSink sink(ctx);
    monitor_.poll(sink, /*force=*/true);
    measureMemory(ctx);
    const FitProgress& progress = ctx.progress();
    RankTotals totals;
    totals.samples = progress.fit.rank_samples;
    totals.train_time_s = progress.fit.rank_train_s;
    totals.data_wait_s = progress.fit.rank_wait_s;
    totals.peak_memory_bytes = monitor_.peakBytes();
    totals.steps = progress.loop.global_step;
    if (!memory_.device.empty()) {  // measured: at least one optimizer step
        totals.gradients_bytes = memory_.gradients_bytes;
        totals.optimizer_state_bytes = memory_.optimizer_state_bytes;
    }
    // The run's peak is its largest process's; the breakdown (its peak included) is this rank's.
    ctx.recordMemory(reportRanks(ctx.strategy(), monitor_, totals, sink), memory_);
    // What offload saved and what it cost, in the run's log (the breakdown stores the bytes).
    if (OffloadedOptimizer* off = offloaded(ctx.optimizer()); off && off->steps() > 0) {
        char ms[32];
        std::snprintf(ms, sizeof ms, "%.2f", off->stepMsTotal() / static_cast<double>(off->steps()));
        ctx.log(LogLine::Level::Info,
                std::string("optimizer offloaded: ") +
                    (memory_.offloaded_bytes > 0 ? formatBytes(memory_.offloaded_bytes) + " of optimizer state and "
                                                   "copies in host memory instead of on " + memory_.device
                                                 : std::string("a CPU run, nothing moved off a device")) +
                    "; each step took " + ms + " ms for the gradients to the host, the CPU step and the values back");
    }
}

void DeviceStatsMonitor::measureMemory(TrainerContext& ctx) {
    const torch::Device device = ctx.strategy().device();
    memory_.device = device.str();
    memory_.peak_bytes = monitor_.peakBytes();
    if (!optimizer_state_measured_) {
        memory_.device.clear();  // no optimizer step in this fit: nothing to break down
        return;
    }
    memory_.other_bytes = std::max<int64_t>(0, baseline_bytes_ - memory_.parameters_bytes);
    const int64_t held = memory_.gradients_bytes + memory_.optimizer_state_bytes;
    if (device.is_cuda()) {
        // The peak is the allocated peak. Activations are what a forward pass keeps for its backward;
        // the rest of the peak beyond the counted tensors is Other: cuDNN and cuBLAS workspaces,
        // the backward's temporaries, what the device held before fit beyond the parameters. (The
        // peak less the counted parts would call a convolution's workspace an activation, and per-block
        // checkpointing would seem to save nothing.)
        if (forward_kept_bytes_ >= 0) {
            memory_.activations_bytes = std::max<int64_t>(0, forward_kept_bytes_);
            memory_.other_bytes = std::max<int64_t>(0, memory_.peak_bytes - memory_.parameters_bytes - held -
                                                          memory_.activations_bytes);
        } else {
            memory_.activations_bytes = std::max<int64_t>(0, memory_.peak_bytes - baseline_bytes_ - held);
        }
        memory_.reserved_unused_bytes = std::max<int64_t>(0, monitor_.reservedPeakBytes() - memory_.peak_bytes);
    } else if (train_tensor_peak_ < 0 || baseline_tensor_bytes_ < 0) {
        // A host whose tensors could not be counted (peak RSS).
        memory_.activations_bytes = std::max<int64_t>(0, memory_.peak_bytes - baseline_bytes_ - held);
    } else {
        // Host: activations from the counted tensor bytes; what the peak RSS grew beyond them
        // (the C heap keeping freed blocks, oneDNN's scratchpads) is the reserved-unused share.
        const HostPeakSplit split =
            splitHostPeak(memory_.peak_bytes, baseline_bytes_, train_tensor_peak_, baseline_tensor_bytes_, held);
        memory_.activations_bytes = split.activations;
        memory_.reserved_unused_bytes = split.heap_beyond_tensors;
    }
}

}  // namespace hearth
