#include "engine/train/Trainer.h"

#include "engine/data/Augment.h"
#include "engine/train/Checkpoint.h"
#include "engine/train/EarlyStopping.h"
#include "engine/train/MemoryAccounting.h"
#include "engine/train/RankReport.h"
#include "engine/train/SafetyCheckpoint.h"
#include "engine/train/TrainingError.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

namespace hearth {

struct Trainer::EpochStats {
    StepBreakdown breakdown;
    MeterTotals totals;  // summed from the step-metric intervals (every interval ends in its epoch)
    int64_t local_samples = 0;  // this rank's (totals are summed over ranks)
    int64_t skipped_steps = 0;
    double wait_ms = 0.0;
    double train_time_s = 0.0;
    std::chrono::steady_clock::time_point start;
};

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

// The gradient communication a data-parallel strategy waited for since `last` (its running
// means turned into totals), per micro-batch: moved from backward into its own part.
void Trainer::subtractCommWait(StepBreakdown& b, CommSnapshot& last) const {
    const dist::CommStats now = strategy_->commStats();
    const double comm_total = now.comm_ms * static_cast<double>(now.steps);
    const double overlap_total = now.overlap_ms * static_cast<double>(now.steps);
    const double exposed = (comm_total - last.comm_total) - (overlap_total - last.overlap_total);
    const int64_t micro = state_.micro_batches - last.micro_batches;
    last = CommSnapshot{comm_total, overlap_total, state_.micro_batches};
    if (now.steps == 0 || micro <= 0 || b.profiled == 0) return;
    b.comm_wait_ms = std::min(std::max(0.0, exposed / static_cast<double>(micro)), b.backward_ms);
    b.backward_ms -= b.comm_wait_ms;
}

TrainerParts defaultTrainerParts(const ExperimentConfig& config, torch::Device device,
                                 const std::string& artifacts_dir) {
    TrainerParts parts;
    parts.strategy = createStrategy(config.trainer, device);
    parts.task = std::make_unique<ClassificationTask>();
    parts.callbacks.push_back(std::make_shared<BestCheckpoint>(config.trainer.checkpoint, artifacts_dir));
    // After the checkpoint: the epoch that ends the fit has already been considered as the best.
    if (config.trainer.early_stopping.monitor != "none")
        parts.callbacks.push_back(std::make_shared<EarlyStopping>(config.trainer.early_stopping));
    // Data-parallel: on every rank (saving a state is a collective), rank 0 alone writes.
    if (config.trainer.safety_checkpoint.keep_last > 0 && (!artifacts_dir.empty() || parts.strategy->worldSize() > 1))
        parts.callbacks.push_back(std::make_shared<SafetyCheckpoint>(config.trainer.safety_checkpoint, artifacts_dir));
    return parts;
}

Trainer::Trainer(const ExperimentConfig& config, torch::Device device, std::shared_ptr<ClassifierImpl> model,
                 const DataSplits& splits, const std::string& artifacts_dir, EventSink& sink,
                 const std::atomic<bool>& stop)
    : Trainer(config, defaultTrainerParts(config, device, artifacts_dir), std::move(model), splits, sink, stop) {}

Trainer::Trainer(const ExperimentConfig& config, TrainerParts parts, std::shared_ptr<ClassifierImpl> model,
                 const DataSplits& splits, EventSink& sink, const std::atomic<bool>& stop)
    : config_(config),
      strategy_(std::move(parts.strategy)),
      task_(std::move(parts.task)),
      callbacks_(std::move(parts.callbacks)),
      profiler_(parts.profiler),
      model_(std::move(model)),
      splits_(splits),
      sink_(sink),
      external_stop_(stop),
      monitor_(strategy_->device()) {
    const auto& t = config_.trainer;
    strategy_->setupModel(*model_, t.channels_last);
    LoaderOptions train_options = strategy_->loaderOptions(t, true, config_.seed);
    const AugmentConfig& augment = config_.data.augment;
    if (augment.random_crop_padding > 0 || augment.horizontal_flip)
        train_options.augment = std::make_shared<ImageAugment>(augment.random_crop_padding, augment.horizontal_flip);
    // Only text samples differ in length; other data keeps the plain shuffled plan.
    train_options.bucket_by_length = config_.data.bucket_by_length && isTextKind(config_.data.kind);
    train_loader_ = std::make_unique<Loader>(splits_.train, train_options);
    // Validation and test are sharded too; evaluate() gathers every rank's rows (each sample once).
    val_loader_ = std::make_unique<Loader>(splits_.val, strategy_->loaderOptions(t, false, config_.seed));
    test_loader_ = std::make_unique<Loader>(splits_.test, strategy_->loaderOptions(t, false, config_.seed));
    optimizer_ = strategy_->setupOptimizer(config_.optimizer, *model_);
    schedule_ = std::make_unique<LearningRateSchedule>(config_.scheduler, config_.optimizer.lr,
                                                       optimizerStepsPerEpoch() * t.max_epochs);
    state_.lr = config_.optimizer.lr;
    monitor_.setRank(strategy_->rank());
    // The step-time breakdown, unless a caller brought its own profiler.
    if (!profiler_ && t.profile_every_n_steps > 0) {
        const torch::Device d = strategy_->device();
        step_profiler_ = std::make_unique<StepProfiler>(t.profile_every_n_steps,
                                                        d.is_cuda() ? std::max<int64_t>(d.index(), 0) : -1);
        profiler_ = step_profiler_.get();
    }
}

Trainer::~Trainer() = default;

int64_t Trainer::groupSize() const {
    return std::max<int64_t>(config_.trainer.accumulate_grad_batches, 1);
}

int64_t Trainer::batchesPerEpoch() const {
    return train_loader_->batchesPerEpoch();
}

int64_t Trainer::optimizerStepsPerEpoch() const {
    return (batchesPerEpoch() + groupSize() - 1) / groupSize();
}

void Trainer::requestStop(const std::string& reason) {
    if (!stop_requested_) {
        log(LogLine::Level::Info, "stopping: " + reason);
    }
    stop_requested_ = true;
}

void Trainer::finishEarly(const std::string& reason) {
    if (finish_reason_.empty()) finish_reason_ = reason;
}

bool Trainer::stopRequested() const {
    return stop_requested_ || external_stop_.load();
}

template <typename Hook>
void Trainer::forEachCallback(Hook&& hook) {
    for (const auto& callback : callbacks_) {
        hook(*callback);
    }
}

FitResult Trainer::fit() {
    FitResult result;
    fit_start_ = Clock::now();
    interval_start_ = fit_start_;
    fit_totals_ = FitTotals{};
    RankTotals rank_totals;
    // The memory breakdown's baseline: what the process (or the device) holds before training.
    monitor_.resetPeak();
    baseline_bytes_ = monitor_.currentBytes();
    baseline_tensor_bytes_ = monitor_.tensorBytes();
    model_->train();
    forEachCallback([this](Callback& c) { c.onFitStart(*this); });
    EpochStats resumed;
    int64_t first_batch = 0;
    if (resume_) {
        applyResume(result, resumed);
        first_batch = state_.batch_in_epoch;
    } else {
        state_.epoch = 0;
    }
    for (; state_.epoch < config_.trainer.max_epochs; ++state_.epoch) {
        EpochStats stats;
        if (first_batch > 0) stats = resumed;   // the interrupted epoch's totals so far
        current_epoch_ = &stats;
        const bool finished = trainEpoch(stats, first_batch);
        first_batch = 0;
        current_epoch_ = nullptr;
        fit_totals_.train_s += stats.train_time_s;
        fit_totals_.samples += stats.totals.samples;
        fit_totals_.rank_samples += stats.local_samples;
        fit_totals_.rank_train_s += stats.train_time_s;
        fit_totals_.rank_wait_s += stats.wait_ms / 1000.0;
        if (!finished) {
            result.stopped = true;
            break;
        }
        // A stop requested during the epoch's last step still leaves a whole epoch: it is
        // validated and recorded (the pass runs to its end), then the run stops.
        const bool stop_after_epoch = strategy_->agreeToStop(stopRequested());
        if (!validateEpoch(stats, result, /*interruptible=*/!stop_after_epoch)) {
            result.stopped = true;
            break;
        }
        state_.epochs_completed = state_.epoch + 1;
        // A callback may ask to stop from its epoch hook (requestStop: stopped, not tested).
        if (stop_after_epoch || strategy_->agreeToStop(stopRequested())) {
            result.stopped = true;
            break;
        }
        // Early stopping (finishEarly) ends the fit as completed; a stop above wins over it. Its
        // metrics are the same on every rank, and agreeing keeps the ranks together regardless.
        if (strategy_->agreeToStop(!finish_reason_.empty())) {
            result.stop_reason = finish_reason_.empty() ? "another rank stopped early" : finish_reason_;
            log(LogLine::Level::Info, result.stop_reason + "; testing the best checkpoint");
            break;
        }
    }
    forEachCallback([this](Callback& c) { c.onFitEnd(*this); });
    monitor_.poll(sink_, /*force=*/true);
    rank_totals.samples = fit_totals_.rank_samples;
    rank_totals.train_time_s = fit_totals_.rank_train_s;
    rank_totals.data_wait_s = fit_totals_.rank_wait_s;
    rank_totals.peak_memory_bytes = monitor_.peakBytes();
    memory_.device = strategy_->device().str();
    memory_.peak_bytes = monitor_.peakBytes();
    if (state_.global_step > 0) {
        memory_.other_bytes = std::max<int64_t>(0, baseline_bytes_ - memory_.parameters_bytes);
        const int64_t held = memory_.gradients_bytes + memory_.optimizer_state_bytes;
        const int64_t tensor_peak = monitor_.tensorPeakBytes();
        if (strategy_->device().is_cuda() || tensor_peak < 0 || baseline_tensor_bytes_ < 0) {
            // CUDA (peak = allocated peak), or a host whose tensors could not be counted (peak RSS).
            memory_.activations_bytes = std::max<int64_t>(0, memory_.peak_bytes - baseline_bytes_ - held);
            memory_.reserved_unused_bytes = std::max<int64_t>(0, monitor_.reservedPeakBytes() - memory_.peak_bytes);
        } else {
            // Host: activations from the counted tensor bytes; what the peak RSS grew beyond them
            // (the C heap keeping freed blocks, oneDNN's scratchpads) is the reserved-unused share.
            const int64_t tensor_growth = std::max<int64_t>(0, tensor_peak - baseline_tensor_bytes_);
            memory_.activations_bytes = std::max<int64_t>(0, tensor_growth - held);
            memory_.reserved_unused_bytes = std::max<int64_t>(
                0, memory_.peak_bytes - baseline_bytes_ - std::max(tensor_growth, held));
        }
    } else {
        memory_.device.clear();  // no optimizer step: nothing to break down
    }
    rank_totals.steps = state_.global_step;
    reportRanks(*strategy_, monitor_, rank_totals, sink_);
    result.epochs_completed = state_.epochs_completed;
    result.global_steps = state_.global_step;
    result.train_time_s = secondsSince(fit_start_);
    result.samples_per_sec =
        fit_totals_.train_s > 0.0 ? static_cast<double>(fit_totals_.samples) / fit_totals_.train_s : 0.0;
    return result;
}

ResumePoint Trainer::resumeFrom(const std::string& path) {
    std::optional<TrainingState> loaded;
    std::string problem;
    try {
        loaded = loadTrainingState(path, *model_, *optimizer_, strategy_->rank(), strategy_->worldSize());
        if (loaded->scaler.has_value() != strategy_->precision().scalesLoss())
            problem = "'" + path + "' was written with another precision than this run's (" +
                      strategy_->precision().name() + ").";
    } catch (const TrainingStateError& e) {
        problem = e.what();
    }
    // Every rank goes on, or none: a rank that could not read its part stops them all here rather
    // than leaving the others in the first collective of the fit.
    if (strategy_->agreeToStop(!problem.empty()) && problem.empty())
        problem = "another rank could not resume from '" + path + "' (its log says why).";
    if (!problem.empty()) throw TrainingStateError(problem);
    strategy_->weightsReplaced();
    TrainingState state = std::move(*loaded);
    ResumePoint point{path, state.loop, state.elapsed_s};
    resume_ = std::move(state);
    return point;
}

// The saved position: the loop, the epoch's totals so far and the fit's, the scaler, the
// generator and the callbacks, applied as fit() starts (after onFitStart).
void Trainer::applyResume(FitResult& result, EpochStats& stats) {
    const TrainingState& r = *resume_;
    state_ = r.loop;
    fit_totals_ = r.fit;
    result.best_val_accuracy = r.fit.best_val_accuracy;
    stats.totals.loss_sum = r.epoch.loss_sum;
    stats.totals.correct = r.epoch.correct;
    stats.totals.samples = r.epoch.samples;
    stats.totals.batches = r.epoch.batches;
    stats.local_samples = r.epoch.local_samples;
    stats.skipped_steps = r.epoch.skipped_steps;
    stats.wait_ms = r.epoch.wait_ms;
    stats.train_time_s = r.epoch.train_time_s;
    fit_start_ = Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(r.elapsed_s));
    monitor_.continueFrom(r.elapsed_s);
    if (auto* scaler = strategy_->precision().scaler(); scaler && r.scaler) scaler->loadState(*r.scaler);
    const auto callbacks = nlohmann::json::parse(r.callbacks_json);
    for (const auto& callback : callbacks_) {
        const std::string key = callback->stateKey();
        if (!key.empty() && callbacks.contains(key)) callback->loadState(*this, callbacks[key].dump());
    }
    setCpuRngState(r.cpu_rng);
    setDeviceRngState(strategy_->device(), r.cuda_rng);
    log(LogLine::Level::Info, "resumed at epoch " + std::to_string(state_.epoch + 1) + ", micro-batch " +
                                  std::to_string(state_.batch_in_epoch) + " (optimizer step " +
                                  std::to_string(state_.global_step) + ")");
    resume_.reset();
}

TrainingState Trainer::captureState() const {
    TrainingState s;
    s.loop = state_;
    s.fit = fit_totals_;
    if (current_epoch_) {
        const EpochStats& e = *current_epoch_;
        s.epoch.loss_sum = e.totals.loss_sum;
        s.epoch.correct = e.totals.correct;
        s.epoch.samples = e.totals.samples;
        s.epoch.batches = e.totals.batches;
        s.epoch.local_samples = e.local_samples;
        s.epoch.skipped_steps = e.skipped_steps;
        s.epoch.wait_ms = e.wait_ms;
        s.epoch.train_time_s = secondsSince(e.start);
    }
    s.elapsed_s = secondsSince(fit_start_);
    if (strategy_->precision().scalesLoss())
        s.scaler = strategy_->precision().scaler()->state();
    nlohmann::json callbacks = nlohmann::json::object();
    for (const auto& callback : callbacks_) {
        const std::string key = callback->stateKey();
        if (!key.empty()) callbacks[key] = nlohmann::json::parse(callback->stateJson());
    }
    s.callbacks_json = callbacks.dump();
    s.cpu_rng = cpuRngState();
    s.cuda_rng = deviceRngState(strategy_->device());
    return s;
}

// Between optimizer steps (an epoch's last, smaller group closed too), with the last interval
// logged: the state then holds everything. The loop is the same on every rank, so is the answer.
bool Trainer::canSaveState() const {
    return current_epoch_ && interval_meter_.empty() &&
           (state_.batch_in_epoch % groupSize() == 0 || state_.batch_in_epoch == batchesPerEpoch());
}

bool Trainer::saveState(const std::string& path) {
    if (!canSaveState()) return false;
    const TrainingState state = captureState();
    if (strategy_->worldSize() == 1) {
        if (!path.empty()) saveTrainingState(path, state, *model_, *optimizer_);
        return true;
    }
    // A collective: every rank's part reaches rank 0, which writes the file.
    const auto parts =
        strategy_->gatherRows(rankStatePart(state, strategy_->shardsOptimizer() ? optimizer_.get() : nullptr));
    if (!path.empty()) saveTrainingState(path, state, *model_, *optimizer_, parts);
    return true;
}

// Returns false when stopped part-way.
bool Trainer::trainEpoch(EpochStats& stats, int64_t first_batch) {
    // A resumed epoch goes on from its next micro-batch, its clock counting the time before.
    stats.start = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(stats.train_time_s));
    state_.batch_in_epoch = first_batch;
    train_loader_->startEpoch(state_.epoch, first_batch);
    forEachCallback([this](Callback& c) { c.onTrainEpochStart(*this); });
    bool stopped = false;
    while (true) {
        if (profiler_ && state_.batch_in_epoch % groupSize() == 0) {
            profiler_->beginGroup();
        }
        std::optional<Batch> host_batch;
        {
            ScopedSection section(profiler_, Section::DataWait);
            host_batch = train_loader_->next();
        }
        if (!host_batch) {
            break;
        }
        const double wait_ms = train_loader_->lastWaitMs();
        stats.wait_ms += wait_ms;
        interval_wait_ms_ += wait_ms;
        Batch batch;
        {
            ScopedSection section(profiler_, Section::HostToDevice);
            batch = strategy_->toDevice(*host_batch, train_loader_->pinsMemory());
        }
        trainMicroBatch(batch, stats);
        stats.local_samples += host_batch->size();
        monitor_.poll(sink_);
        const bool epoch_end = state_.batch_in_epoch == batchesPerEpoch();
        const bool logged_step = interval_meter_.empty();  // the optimizer step may have just logged
        if (epoch_end && !logged_step) {
            emitStepMetrics(stats);
        }
        forEachCallback([this](Callback& c) { c.onTrainBatchEnd(*this); });
        if (strategy_->agreeToStop(stopRequested())) {
            stopped = !epoch_end;
            break;
        }
    }
    if (stopped) {
        // A stop between the micro-batches of one accumulation group drops the partial gradients:
        // stepping on them would use a loss divided by the full group size.
        if (state_.batch_in_epoch % groupSize() != 0) {
            strategy_->zeroGrad(*optimizer_);
            log(LogLine::Level::Info, "stopped inside an accumulation group: its partial gradients were dropped");
        }
        if (!interval_meter_.empty()) {
            emitStepMetrics(stats);
        }
        forEachCallback([this](Callback& c) { c.onTrainStopped(*this); });
    }
    stats.train_time_s = secondsSince(stats.start);
    if (step_profiler_) {
        stats.breakdown = step_profiler_->takeEpoch(/*wait=*/true);
        subtractCommWait(stats.breakdown, epoch_comm_);
    }
    return !stopped;
}

void Trainer::trainMicroBatch(const Batch& batch, EpochStats& stats) {
    const int64_t micro = state_.batch_in_epoch;
    const int64_t k = groupSize();
    const int64_t group_start = (micro / k) * k;
    // The leftover micro-batches at the end of an epoch form a smaller group (as in Lightning).
    const int64_t group_size = std::min(k, batchesPerEpoch() - group_start);
    if (micro == group_start) {
        state_.lr = schedule_->apply(*optimizer_, state_.global_step, state_.epoch);
    }
    torch::Tensor output, loss;
    {
        ScopedSection section(profiler_, Section::Forward);
        output = strategy_->forward(*model_, batch);
        loss = task_->loss(output, batch);
        interval_meter_.add(loss, task_->predict(output.detach()), task_->targets(batch));
    }
    const bool closes_group = micro + 1 == group_start + group_size;
    {
        ScopedSection section(profiler_, Section::Backward);
        strategy_->backward(group_size == 1 ? loss : loss / static_cast<double>(group_size), closes_group);
    }
    if (closes_group && state_.global_step == 0) {
        // The first step's gradients, before the optimizer step frees or zeroes them.
        const HeldBytes held = measureHeldBytes(*model_, *optimizer_);
        memory_.parameters_bytes = held.parameters;
        memory_.gradients_bytes = held.gradients;
    }
    if (strategy_->watchLoss(loss, state_.global_step + 1)) {
        failOnNonFiniteLoss();
    }
    ++state_.batch_in_epoch;
    ++state_.micro_batches;
    if (closes_group) {
        {
            ScopedSection section(profiler_, Section::OptimizerStep);
            if (!strategy_->optimizerStep(*optimizer_, config_.trainer.gradient_clip_val)) {
                ++stats.skipped_steps;
            }
        }
        ++state_.global_step;
        if (state_.global_step == 1) {
            memory_.optimizer_state_bytes = measureHeldBytes(*model_, *optimizer_).optimizer_state;  // created lazily
        }
        if (profiler_) {
            profiler_->endGroup(group_size);
        }
        if (state_.global_step % std::max<int64_t>(config_.trainer.log_every_n_steps, 1) == 0) {
            emitStepMetrics(stats);
        }
    }
}

void Trainer::failOnNonFiniteLoss() {
    const int64_t bad_step = strategy_->firstNonFiniteStep();
    if (bad_step == 0) {
        return;
    }
    const int64_t bad_epoch = (bad_step - 1) / std::max<int64_t>(optimizerStepsPerEpoch(), 1);
    std::ostringstream msg;
    msg << "loss became NaN or infinite at epoch " << bad_epoch + 1 << " step " << bad_step << " (lr " << state_.lr
        << ", precision " << strategy_->precision().name() << ")";
    throw TrainingError(msg.str(),
                        "lower optimizer.lr, set trainer.gradient_clip_val (e.g. 1.0), or check the "
                        "input data for NaN/inf values");
}

// The interval's loss, correct predictions and samples summed over every rank (the strategy's
// reduction; nothing to do on one device). Batches stay this rank's: they time its steps.
MeterTotals Trainer::reducedTotals(const MeterTotals& local) const {
    std::vector<double> values{local.loss_sum, static_cast<double>(local.correct), static_cast<double>(local.samples)};
    strategy_->reduceSum(values);
    MeterTotals total = local;
    total.loss_sum = values[0];
    total.correct = static_cast<int64_t>(values[1]);
    total.samples = static_cast<int64_t>(values[2]);
    return total;
}

void Trainer::emitStepMetrics(EpochStats& stats) {
    MeterTotals totals;
    {
        ScopedSection section(profiler_, Section::Sync);
        failOnNonFiniteLoss();
        const MeterTotals local = interval_meter_.read();
        totals = reducedTotals(local);
        const double local_s = secondsSince(interval_start_);
        shareLiveRanks(*strategy_, monitor_, local_s > 0.0 ? static_cast<double>(local.samples) / local_s : 0.0,
                       sink_);
    }
    const double interval_s = secondsSince(interval_start_);
    stats.totals.add(totals);
    const auto batches = static_cast<double>(std::max<int64_t>(totals.batches, 1));
    StepMetrics m;
    m.epoch = state_.epoch;
    m.batch = state_.batch_in_epoch;
    m.batches_per_epoch = batchesPerEpoch();
    m.global_step = state_.global_step;
    m.loss = totals.meanLoss();
    m.accuracy = totals.accuracy();
    m.lr = state_.lr;
    m.loss_scale = strategy_->precision().lossScale();
    m.samples_per_sec = interval_s > 0.0 ? static_cast<double>(totals.samples) / interval_s : 0.0;
    m.data_wait_ms = interval_wait_ms_ / batches;
    m.step_time_ms = std::max(0.0, interval_s * 1000.0 - interval_wait_ms_) / batches;
    m.elapsed_s = secondsSince(fit_start_);
    const int64_t total_micro = batchesPerEpoch() * config_.trainer.max_epochs;
    const int64_t done = state_.micro_batches;
    m.eta_s = done > 0 ? m.elapsed_s / static_cast<double>(done) *
                             static_cast<double>(std::max<int64_t>(total_micro - done, 0))
                       : 0.0;
    if (step_profiler_) {
        m.breakdown = step_profiler_->takeInterval();
        subtractCommWait(m.breakdown, interval_comm_);
    }
    sink_.onEvent(m);
    interval_meter_.reset();
    interval_wait_ms_ = 0.0;
    interval_start_ = Clock::now();
}

EvalResult Trainer::evaluateAndReport(const std::string& split, Loader& loader, const Dataset& dataset,
                                      bool keep_predictions, bool interruptible) {
    EvalResult result = evaluate(*model_, loader, dataset, *strategy_, *task_, keep_predictions,
                                 [this, interruptible] {
                                     monitor_.poll(sink_);
                                     return !interruptible || !strategy_->agreeToStop(stopRequested());
                                 });
    if (!result.interrupted) {
        EvalReport report;
        report.split = split;
        report.loss = result.loss;
        report.report = ClassificationReport::compute(result.y_true, result.y_pred, splits_.class_names);
        sink_.onEvent(report);
    }
    return result;
}

// Validates, runs the callbacks' epoch-end hooks (the checkpoint), emits EvalReport and
// EpochMetrics. Returns false when a stop interrupted validation.
bool Trainer::validateEpoch(const EpochStats& stats, FitResult& result, bool interruptible) {
    EpochEnd end;
    end.has_val = splits_.val && splits_.val->size() > 0;
    if (end.has_val) {
        const EvalResult val = evaluateAndReport("val", *val_loader_, *splits_.val, false, interruptible);
        if (val.interrupted) {
            return false;
        }
        end.val_loss = val.loss;
        end.val_accuracy = val.accuracy;
    } else if (state_.epoch == 0) {
        log(LogLine::Level::Warning, "no validation split: the checkpoint keeps the last epoch");
    }
    forEachCallback([this, &end](Callback& c) { c.onValidationEnd(*this, end); });
    result.best_val_accuracy = std::max(result.best_val_accuracy, end.val_accuracy);
    fit_totals_.best_val_accuracy = result.best_val_accuracy;
    EpochMetrics e;
    e.epoch = state_.epoch;
    e.global_step = state_.global_step;
    e.train_loss = stats.totals.meanLoss();
    e.train_accuracy = stats.totals.accuracy();
    e.val_loss = end.val_loss;
    e.val_accuracy = end.val_accuracy;
    e.lr = state_.lr;
    e.epoch_time_s = secondsSince(stats.start);
    e.samples_per_sec = stats.train_time_s > 0.0 ? static_cast<double>(stats.totals.samples) / stats.train_time_s : 0.0;
    e.data_wait_share = stats.train_time_s > 0.0 ? std::min(1.0, stats.wait_ms / 1000.0 / stats.train_time_s) : 0.0;
    e.skipped_steps = stats.skipped_steps;
    e.is_best = end.is_best;
    e.breakdown = stats.breakdown;
    sink_.onEvent(e);
    return true;
}

TestResult Trainer::test() {
    TestResult out;
    if (!splits_.test || splits_.test->size() == 0) {
        log(LogLine::Level::Warning, "no test split: skipping the test phase");
        return out;
    }
    forEachCallback([this](Callback& c) { c.onTestStart(*this); });
    auto eval = evaluateAndReport("test", *test_loader_, *splits_.test, true);
    if (eval.interrupted) {
        return out;
    }
    PredictionsReady preds;
    preds.split = "test";
    preds.predictions = std::move(eval.predictions);
    sink_.onEvent(preds);
    out.ran = true;
    out.loss = eval.loss;
    out.accuracy = eval.accuracy;
    return out;
}

}  // namespace hearth
