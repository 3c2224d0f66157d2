#include "engine/run/FinderSteps.h"

#include "engine/data/Loader.h"
#include "engine/monitor/CudaMemory.h"
#include "engine/monitor/DeviceMonitor.h"
#include "engine/monitor/Elapsed.h"
#include "engine/monitor/MemoryAccounting.h"
#include "engine/monitor/ProcessMemory.h"
#include "engine/optim/Optimizers.h"
#include "engine/strategy/Strategy.h"
#include "engine/train/Task.h"
#include "engine/train/TrainerParts.h"
#include "engine/train/TrainingError.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <new>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace hearth {
namespace {

// A trial's memory passed the limit while it ran (CPU): the trial fails at once rather than
// growing further.
struct LimitExceeded {
    int64_t peak = 0;
};

// The peak memory of one trial: the process's RSS high-water mark on CPU (reset through
// /proc/self/clear_refs), the caching allocator's peak reserved bytes on CUDA.
class PeakMemory {
public:
    // agree: a rank of a distributed strategy never leaves a step on its own (the others would
    // wait for it in a collective); it notes the excess and the ranks agree after the trial.
    PeakMemory(torch::Device device, int64_t limit, bool agree) : device_(device), limit_(limit), agree_(agree) {}

    // Frees what earlier trials left cached, then starts a new high-water mark.
    void reset() {
        releaseFreed();
        if (device_.is_cuda()) {
#ifdef HEARTH_WITH_CUDA
            resetCudaPeakStats(device_.index());
#endif
            return;
        }
        if (!resetPeakRss()) throw std::runtime_error("cannot reset the peak RSS (writing /proc/self/clear_refs failed)");
    }

    int64_t peak() const {
        if (device_.is_cuda()) {
#ifdef HEARTH_WITH_CUDA
            return cudaMemoryStats(device_.index()).reserved_peak_bytes;
#else
            return 0;
#endif
        }
        return readProcessMemory().peak_rss_bytes;
    }

    // On CPU a trial stops as soon as it is past the limit (the next doubling could exhaust RAM).
    void check() const {
        if (device_.is_cpu() && limit_ > 0 && !agree_) {
            const int64_t now = peak();
            if (now > limit_) throw LimitExceeded{now};
        }
    }

    void releaseFreed() const {
        if (device_.is_cuda()) {
#ifdef HEARTH_WITH_CUDA
            releaseCudaCache();
#endif
            return;
        }
#if defined(__GLIBC__)
        // The run's allocator settings keep freed memory in the heap; give it back so that an
        // earlier, larger trial does not count towards this one's peak.
        malloc_trim(0);
#endif
    }

private:
    torch::Device device_;
    int64_t limit_;
    bool agree_;
};

// One optimizer step's micro-batches (accumulate_grad_batches of them) through the run's own
// training step, then the optimizer step. Returns the mean loss.
double trainStep(TrainingStep& step, torch::optim::Optimizer& optimizer, const TrainerConfig& trainer,
                 const std::function<Batch()>& next_batch, const std::function<void()>& after_phase) {
    const int64_t k = std::max<int64_t>(trainer.accumulate_grad_batches, 1);
    MetricsLogger metrics;
    for (int64_t micro = 0; micro < k; ++micro)
        step.microBatch(next_batch(), k, micro + 1 == k, metrics, [&](Section) { after_phase(); });
    step.optimizerStep(optimizer, trainer.gradient_clip_val);
    after_phase();
    return metrics.intervalTotals().meanLoss();
}

// Batches of one loader, epoch after epoch.
class BatchCycle {
public:
    BatchCycle(std::shared_ptr<const Dataset> data, const LoaderOptions& options, const Strategy& strategy)
        : loader_(std::move(data), options), strategy_(strategy) {
        loader_.startEpoch(0);
    }
    Batch next() {
        auto batch = loader_.next();
        if (!batch) {
            loader_.startEpoch(++epoch_);
            batch = loader_.next();
            if (!batch) throw std::runtime_error("the training split gives no batch of this size");
        }
        return strategy_.toDevice(*batch, loader_.pinsMemory());
    }

private:
    Loader loader_;
    const Strategy& strategy_;
    int64_t epoch_ = 0;
};

std::string describeFailure(const std::string& what) {
    return "out of memory: " + what.substr(0, what.find('\n'));
}

// Runs the trial's steps; every tensor, the optimizer and the loader are gone when it returns or
// throws, so the caller can free the memory before the next trial.
void runTrialSteps(PreparedRun& run, Strategy& strategy, const Task& task, int64_t batch_size,
                   const BatchSizeFinderOptions& options, const PeakMemory& memory, const std::atomic<bool>& stop) {
    ExperimentConfig config = run.config;
    config.trainer.batch_size = batch_size;
    const TrainerConfig& trainer = config.trainer;
    // The training loader's own options (augmentation, length bucketing): a trial sees what a run sees.
    LoaderOptions loader = trainLoaderOptions(config, strategy);
    loader.drop_last = true;  // every step at the full batch size
    BatchCycle batches(run.splits.train, loader, strategy);
    auto optimizer = strategy.setupOptimizer(run.config.optimizer, *run.model);
    run.model->train();
    for (int64_t s = 0; s < options.steps_per_trial && !stop.load(); ++s) {
        if (options.before_step) options.before_step(batch_size);
        TrainingStep step(strategy, *run.model, task);
        trainStep(step, *optimizer, trainer, [&] { return batches.next(); }, [&] { memory.check(); });
    }
    strategy.zeroGrad(*optimizer);
}

BatchSizeTrial runTrial(PreparedRun& run, Strategy& strategy, const Task& task, ModelSnapshot& snapshot,
                        int64_t batch_size, const BatchSizeFinderOptions& options, PeakMemory& memory,
                        const std::atomic<bool>& stop) {
    BatchSizeTrial trial;
    trial.batch_size = batch_size;
    memory.reset();
    const auto start = std::chrono::steady_clock::now();
    try {
        runTrialSteps(run, strategy, task, batch_size, options, memory, stop);
        trial.fits = true;
    } catch (const LimitExceeded&) {
        trial.fits = false;
    } catch (const c10::OutOfMemoryError& e) {
        trial.failure = describeFailure(e.what_without_backtrace());
    } catch (const std::bad_alloc&) {
        trial.failure = "out of memory (host allocation failed)";
    } catch (const c10::Error& e) {
        if (!isOutOfMemoryMessage(e.what_without_backtrace())) throw;
        trial.failure = describeFailure(e.what_without_backtrace());
    } catch (const std::exception& e) {
        if (!isOutOfMemoryMessage(e.what())) throw;
        trial.failure = describeFailure(e.what());
    }
    trial.seconds = secondsSince(start);
    trial.peak_bytes = memory.peak();
    snapshot.restore();  // the steps moved the weights; the next trial starts where this one did
    memory.releaseFreed();
    if (trial.fits && options.memory_limit_bytes > 0 && trial.peak_bytes > options.memory_limit_bytes) {
        trial.fits = false;
    }
    if (strategy.worldSize() > 1) {
        // Every rank ran the same trial; it fits only where it fits on all of them.
        std::vector<double> failed{trial.fits ? 0.0 : 1.0};
        strategy.reduceSum(failed);
        if (trial.fits && failed[0] > 0.0) {
            trial.fits = false;
            trial.failure = "did not fit on another rank";
        }
    }
    if (!trial.fits && trial.failure.empty()) {
        trial.failure = "peak " + formatBytes(trial.peak_bytes) + " > limit " + formatBytes(options.memory_limit_bytes);
    }
    return trial;
}

}  // namespace

ModelSnapshot::ModelSnapshot(torch::nn::Module& module, Strategy& strategy) : module_(module), strategy_(strategy) {
    torch::NoGradGuard no_grad;
    const WeightsAccess weights(strategy_, /*writes=*/false);
    for (const auto& p : module.parameters(/*recurse=*/true)) live_.push_back(p);
    for (const auto& b : module.buffers(/*recurse=*/true)) live_.push_back(b);
    for (const auto& t : live_) saved_.push_back(t.detach().clone());
}

void ModelSnapshot::restore() {
    torch::NoGradGuard no_grad;
    const WeightsAccess weights(strategy_, /*writes=*/true);
    for (size_t i = 0; i < live_.size(); ++i) live_[i].copy_(saved_[i]);
    for (auto& p : module_.parameters(/*recurse=*/true)) p.mutable_grad() = torch::Tensor();
}

bool isOutOfMemoryMessage(const std::string& message) {
    return message.find("out of memory") != std::string::npos || message.find("Out of memory") != std::string::npos;
}

BatchSizeResult searchBatchSize(PreparedRun& run, const BatchSizeFinderOptions& options,
                                const std::atomic<bool>& stop) {
    if (run.device.is_cpu() && options.memory_limit_bytes <= 0) {
        throw ConfigError("memory limit", "on CPU the batch-size finder needs a memory limit to stand in for the "
                                          "GPU's memory (e.g. --memory-limit 4GiB)");
    }
    const int64_t ram = readProcessMemory().total_ram_bytes;
    if (run.device.is_cpu() && options.on_log && ram > 0 && options.memory_limit_bytes > ram / 10 * 9) {
        options.on_log("warning: the memory limit " + formatBytes(options.memory_limit_bytes) + " is above 90% of " +
                       "this machine's RAM (" + formatBytes(ram) + "): a failing trial may exhaust it");
    }
    auto strategy = createStrategy(run.config.trainer, run.device);
    strategy->setupModel(*run.model, run.config.trainer.channels_last);
    ModelSnapshot snapshot(*run.model, *strategy);
    const ClassificationTask task;
    const bool distributed = strategy->worldSize() > 1;
    PeakMemory memory(run.device, options.memory_limit_bytes, distributed);
    // Ranks stop between trials, all at once (a rank leaving mid-trial would strand the others).
    std::atomic<bool> agreed_stop{false};
    const std::atomic<bool>& trial_stop = distributed ? agreed_stop : stop;
    // A batch is at most one rank's shard of the training split (trials drop the last, partial batch).
    const int64_t shard = run.splits.train->size() / std::max<int64_t>(strategy->worldSize(), 1);
    int64_t cap = shard;
    std::string bound = "the training split (" + std::to_string(shard) + " samples" +
                        (strategy->worldSize() > 1 ? " per rank)" : ")");
    if (options.max_batch > 0 && options.max_batch < cap) {
        cap = options.max_batch;
        bound = "the maximum batch asked for (" + std::to_string(cap) + ")";
    }
    memory.releaseFreed();
    const int64_t baseline = run.device.is_cpu() ? readProcessMemory().rss_bytes : 0;
    BatchSizeResult result;
    try {
        result = searchBatchSizes(
            options.start_batch, cap, bound, options,
            [&](int64_t b) {
                BatchSizeTrial t = runTrial(run, *strategy, task, snapshot, b, options, memory, trial_stop);
                if (distributed) agreed_stop.store(strategy->agreeToStop(stop.load()));
                return t;
            },
            trial_stop);
    } catch (...) {
        snapshot.restore();
        throw;
    }
    result.device = run.device.str();
    result.baseline_bytes = baseline;
    result.limit = options.memory_limit_bytes > 0
                       ? formatBytes(options.memory_limit_bytes) + (run.device.is_cpu() ? " (peak RSS of this process)"
                                                                                        : " (peak reserved on the device)")
                       : "the device's memory (out-of-memory errors)";
    return result;
}

FootprintPrediction probeFootprint(PreparedRun& run, const FootprintOptions& options, const std::atomic<bool>& stop) {
    const ExperimentConfig& config = run.config;
    const TrainerConfig& trainer = config.trainer;
    auto strategy = createStrategy(trainer, run.device);
    strategy->setupModel(*run.model, trainer.channels_last);
    const ClassificationTask task;
    const bool cpu = !run.device.is_cuda();
    // The run's own readings: its monitor (which counts the CPU's tensors from here on, as in a run).
    DeviceMonitor monitor(run.device);
    PeakMemory memory(run.device, 0, strategy->worldSize() > 1);
    memory.releaseFreed();
    const MemoryBaseline before = memoryBaseline(monitor.currentBytes(), monitor.tensorBytes(), strategy->gradientBuffers());
    const int64_t before_bytes = before.bytes;
    const int64_t before_tensors = before.tensor_bytes;

    FootprintBase base;
    base.device = run.device.str();
    int64_t total = 0;
    if (cpu) {
        total = readProcessMemory().total_ram_bytes;
        base.capacity = "this machine's RAM (" + formatBytes(total) + ")";
    } else {
#ifdef HEARTH_WITH_CUDA
        total = cudaMemoryStats(run.device.index()).total_bytes;
#endif
        base.capacity = "the memory of " + base.device + " (" + formatBytes(total) + ")";
    }
    base.capacity_bytes = total;
    if (options.capacity_bytes > 0) {
        base.capacity_bytes = options.capacity_bytes;
        base.capacity = "the memory given (" + formatBytes(options.capacity_bytes) + ")";
    }

    const std::vector<int64_t> sizes =
        options.batch_sizes.empty() ? footprintProbeSizes(trainer.batch_size) : options.batch_sizes;
    const int64_t k = std::max<int64_t>(trainer.accumulate_grad_batches, 1);
    const int64_t steps = std::max<int64_t>(options.steps_per_probe, 2);
    std::vector<FootprintProbe> probes;
    HeldBytes held;
    for (size_t i = 0; i < sizes.size() && !stop.load(); ++i) {
        const int64_t b = sizes[i];
        if (options.on_progress)
            options.on_progress(static_cast<double>(i) / static_cast<double>(sizes.size()),
                                "probe " + std::to_string(i + 1) + ": batch " + std::to_string(b));
        ExperimentConfig probe_config = config;
        probe_config.trainer.batch_size = b;
        memory.reset();
        std::vector<TimedStep> timed;
        // The tensor peak of each phase of a step (absolute bytes, the largest over the steps): the
        // forward and backward passes grow with the batch, the optimizer step's temporaries do not.
        int64_t pass_peak = -1, optimizer_peak = -1, reserved_peak = 0;
        // GPU: what each forward keeps for its backward (the run's DeviceStatsMonitor measures the same).
        int64_t kept = 0, micro_start = 0;
        const auto afterPhase = [&](Section ended) {
            if (!cpu && ended == Section::Forward) kept = std::max(kept, monitor.tensorBytes() - micro_start);
        };
        const auto phasePeak = [&] {
            reserved_peak = std::max(reserved_peak, monitor.reservedPeakBytes());
            const int64_t peak = monitor.tensorPeakBytes();
            monitor.resetTensorPeak();
            return peak;
        };
        try {
            LoaderOptions loader = trainLoaderOptions(probe_config, *strategy);
            loader.drop_last = true;
            BatchCycle batches(run.splits.train, loader, *strategy);
            auto optimizer = strategy->setupOptimizer(config.optimizer, *run.model);
            run.model->train();
            for (int64_t s = 0; s < steps && !stop.load(); ++s) {
                const auto started = std::chrono::steady_clock::now();
                TrainingStep step(*strategy, *run.model, task);
                MetricsLogger metrics;
                phasePeak();
                for (int64_t micro = 0; micro < k; ++micro) {
                    // From before the batch reaches the device, as the run counts from the last batch's end.
                    if (!cpu) micro_start = monitor.tensorBytes();
                    step.microBatch(batches.next(), k, micro + 1 == k, metrics, afterPhase);
                }
                pass_peak = std::max(pass_peak, phasePeak());
                // The gradients before the optimizer step frees or zeroes them; its state after it
                // (created lazily), as the run's monitor counts them.
                if (s == 0) held = measureHeldBytes(*run.model, *optimizer, strategy->gradientBuffers());
                step.optimizerStep(*optimizer, trainer.gradient_clip_val);
                if (s == 0) held.optimizer_state = measureHeldBytes(*run.model, *optimizer).optimizer_state;
                metrics.intervalTotals().meanLoss();  // reads the loss back: the device has finished the step
                optimizer_peak = std::max(optimizer_peak, phasePeak());
                if (s > 0) timed.push_back({millisecondsSince(started), k});
            }
            strategy->zeroGrad(*optimizer);
        } catch (const c10::Error& e) {
            if (!isOutOfMemoryMessage(e.what_without_backtrace())) throw;
            throw TrainingError("the probe at batch " + std::to_string(b) + " " + kFootprintOutOfMemory +
                                    ": the run at batch " +
                                    std::to_string(trainer.batch_size) + " will not fit",
                                "a smaller trainer.batch_size, 16-mixed or bf16-mixed, activation checkpointing");
        }
        FootprintProbe probe;
        probe.batch_size = b;
        probe.step_ms = microBatchShareMs(timed);
        for (const TimedStep& step : timed) probe.timed_micro_batches += step.micro_batches;
        const int64_t held_bytes = held.gradients + held.optimizer_state;
        const int64_t tensor_peak = std::max(pass_peak, optimizer_peak);
        probe.peak_bytes = cpu ? memory.peak() : tensor_peak;
        if (!cpu) {
            // The allocator's allocated peak beyond the held tensors; its reserve beyond that peak.
            probe.activations_bytes = std::max<int64_t>(0, tensor_peak - before_tensors - held_bytes);
            probe.workspace_bytes = std::max<int64_t>(0, reserved_peak - tensor_peak);
        } else if (tensor_peak >= 0 && before_tensors >= 0) {
            const HostPeakSplit split = splitHostPeak(probe.peak_bytes, before_bytes, tensor_peak, before_tensors, held_bytes);
            probe.activations_bytes = split.activations;
            probe.workspace_bytes = split.heap_beyond_tensors;
        } else {
            // A host whose tensors could not be counted: the peak RSS alone.
            probe.activations_bytes = std::max<int64_t>(0, probe.peak_bytes - before_bytes - held_bytes);
        }
        if (tensor_peak >= 0 && before_tensors >= 0) {
            probe.pass_bytes = std::max<int64_t>(0, pass_peak - before_tensors - held_bytes);
            probe.optimizer_bytes = std::max<int64_t>(0, optimizer_peak - before_tensors - held_bytes);
        }
        probe.kept_bytes = kept;
        probes.push_back(probe);
        memory.releaseFreed();
    }
    if (probes.empty()) throw TrainingError("the probe was stopped before it measured anything", "");
    base.parameters_bytes = held.parameters;
    base.gradients_bytes = held.gradients;
    base.optimizer_state_bytes = held.optimizer_state;
    base.other_bytes = std::max<int64_t>(0, before_bytes - held.parameters);
    if (options.on_progress) options.on_progress(1.0, "done");
    FootprintPrediction prediction = extrapolateFootprint(base, probes, trainer.batch_size, k);
    prediction.world_size = strategy->worldSize();
    return prediction;
}

LrFinderResult sweepLearningRate(PreparedRun& run, const LrFinderOptions& options, const std::atomic<bool>& stop) {
    if (!(options.min_lr > 0.0) || !(options.max_lr > options.min_lr)) {
        throw ConfigError("lr range", "the sweep needs 0 < min lr < max lr");
    }
    if (options.steps < 2) throw ConfigError("steps", "the sweep needs at least 2 steps");
    auto strategy = createStrategy(run.config.trainer, run.device);
    strategy->setupModel(*run.model, run.config.trainer.channels_last);
    ModelSnapshot snapshot(*run.model, *strategy);
    LrFinderResult result;
    try {
        const ClassificationTask task;
        BatchCycle batches(run.splits.train, trainLoaderOptions(run.config, *strategy), *strategy);
        auto optimizer = strategy->setupOptimizer(run.config.optimizer, *run.model);
        run.model->train();
        const double ratio = options.max_lr / options.min_lr;
        double average = 0.0, best = 0.0;
        const bool distributed = strategy->worldSize() > 1;
        for (int64_t i = 0; i < options.steps; ++i) {
            if (distributed ? strategy->agreeToStop(stop.load()) : stop.load()) {
                result.stopped = true;
                break;
            }
            LrPoint point;
            point.lr = options.min_lr * std::pow(ratio, static_cast<double>(i) / static_cast<double>(options.steps - 1));
            setLearningRate(*optimizer, point.lr);
            TrainingStep step(*strategy, *run.model, task);
            point.loss = trainStep(step, *optimizer, run.config.trainer, [&] { return batches.next(); }, [] {});
            if (distributed) {
                // The mean over ranks: every rank sees one curve and stops at the same step.
                std::vector<double> loss{point.loss};
                strategy->reduceSum(loss);
                point.loss = loss[0] / static_cast<double>(strategy->worldSize());
            }
            // Lightning's smoothing: a bias-corrected exponential moving average.
            average = options.smoothing * average + (1.0 - options.smoothing) * point.loss;
            point.smoothed_loss = average / (1.0 - std::pow(options.smoothing, static_cast<double>(i + 1)));
            result.points.push_back(point);
            if (options.on_point) options.on_point(point);
            if (options.on_progress) {
                options.on_progress(static_cast<double>(i + 1) / static_cast<double>(options.steps),
                                    "step " + std::to_string(i + 1) + "/" + std::to_string(options.steps));
            }
            if (!std::isfinite(point.smoothed_loss) ||
                (i > 1 && point.smoothed_loss > options.divergence * best)) {
                result.diverged = true;
                break;
            }
            if (i == 0 || point.smoothed_loss < best) best = point.smoothed_loss;
        }
        strategy->zeroGrad(*optimizer);
    } catch (...) {
        snapshot.restore();
        throw;
    }
    snapshot.restore();
    result.suggestion_index = steepestDescent(result.points, options.skip_begin, options.skip_end);
    if (result.suggestion_index) result.suggestion = result.points[*result.suggestion_index].lr;
    return result;
}

}  // namespace hearth
