#include "engine/train/Trainer.h"

#include "engine/config/ByteSize.h"
#include "engine/monitor/Elapsed.h"
#include "engine/optim/Optimizers.h"
#include "engine/train/TrainingError.h"

#include <algorithm>
#include <tuple>

namespace hearth {

namespace {

using Clock = MetricsLogger::Clock;

// A text batch's padded length (its model FLOPs grow with it); 0 for other data.
int64_t tokensPerSample(const Batch& batch) {
    return batch.has("input_ids") ? batch.at("input_ids").size(1) : 0;
}

// The time point `seconds` ago: a resumed clock continues from the time saved.
Clock::time_point secondsAgo(double seconds) {
    return Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

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
      model_flops_(model_->forwardFlops()),
      splits_(splits),
      sink_(sink),
      external_stop_(stop) {
    const auto& t = config_.trainer;
    strategy_->setupModel(*model_, t.channels_last);
    train_loader_ = std::make_unique<Loader>(splits_.train, trainLoaderOptions(config_, *strategy_));
    // Validation and test are sharded too; evaluate() gathers every rank's rows (each sample once).
    val_loader_ = std::make_unique<Loader>(splits_.val, strategy_->loaderOptions(t, false, config_.seed));
    test_loader_ = std::make_unique<Loader>(splits_.test, strategy_->loaderOptions(t, false, config_.seed));
    optimizer_ = strategy_->setupOptimizer(config_.optimizer, *model_);
    schedule_ = std::make_unique<LearningRateSchedule>(config_.scheduler, config_.optimizer.lr,
                                                       optimizerStepsPerEpoch() * t.max_epochs);
    progress_.loop.lr = config_.optimizer.lr;
    metrics_.setPeakFlops(parts.peak_flops);
    if (t.cuda_graph == "step") setUpCapture();
    // The step-time breakdown, unless a caller brought its own profiler. A captured step is one
    // launch: it has no parts to time.
    if (!profiler_ && !captured_) {
        step_profiler_ = makeStepProfiler(t.profile_every_n_steps, *strategy_);
        profiler_ = step_profiler_.get();
    }
}

Trainer::~Trainer() = default;

// The monitor's breakdown; a captured step's graph pool is reserved memory the caching allocator
// keeps for the replays: shown as its own part, out of the reserved-unused share.
void Trainer::recordMemory(int64_t peak_bytes, const MemoryBreakdown& breakdown) {
    peak_memory_bytes_ = peak_bytes;
    memory_ = breakdown;
    if (captured_ && !memory_.device.empty()) {
        memory_.cuda_graph_bytes = std::min(captured_->poolBytes(), memory_.reserved_unused_bytes);
        memory_.reserved_unused_bytes -= memory_.cuda_graph_bytes;
    }
}

// trainer.cuda_graph=step (validate() refuses what cannot work; this names it for callers that
// did not validate).
void Trainer::setUpCapture() {
#ifdef HEARTH_WITH_CUDA
    const torch::Device device = strategy_->device();
    if (!device.is_cuda() || strategy_->worldSize() > 1)
        throw ConfigError("trainer.cuda_graph", "step needs one CUDA device and trainer.strategy=auto");
    if (!keepLearningRateOnDevice(*optimizer_))
        throw ConfigError("optimizer.implementation", "trainer.cuda_graph=step needs the fused optimizer kernels");
    captured_ = makeCudaGraphStep(device);
    step_number_ = torch::zeros({1}, torch::TensorOptions().dtype(torch::kInt64).device(device));
    metrics_.start(device);
#else
    throw ConfigError("trainer.cuda_graph", "step needs a CUDA build of Hearth; this one has no CUDA");
#endif
}

int64_t Trainer::optimizerStepsPerEpoch() const {
    return (batchesPerEpoch() + groupSize() - 1) / groupSize();
}

void Trainer::requestStop(const std::string& reason) {
    if (!stop_requested_) log(LogLine::Level::Info, "stopping: " + reason);
    stop_requested_ = true;
}

template <typename Hook>
void Trainer::forEachCallback(Hook&& hook) {
    for (const auto& callback : callbacks_) hook(*callback);
}

FitResult Trainer::fit() {
    FitResult result;
    metrics_.startFit();
    model_->train();
    forEachCallback([this](Callback& c) { c.onFitStart(*this); });
    int64_t first_batch = 0;
    if (resume_) {
        applyResume();  // progress_ is the saved one: the interrupted epoch goes on
        first_batch = progress_.loop.batch_in_epoch;
    } else {
        progress_.loop.epoch = 0;
        progress_.fit = FitTotals{};
    }
    for (; progress_.loop.epoch < config_.trainer.max_epochs; ++progress_.loop.epoch) {
        if (!runEpoch(result, first_batch)) break;
        first_batch = 0;
    }
    // Early stopping's reason, also where a resume started after it (the state keeps it).
    if (!result.stopped) result.stop_reason = progress_.loop.finish_reason;
    forEachCallback([this](Callback& c) { c.onFitEnd(*this); });
    result.best_val_accuracy = progress_.fit.best_val_accuracy;
    result.epochs_completed = progress_.loop.epochs_completed;
    result.global_steps = progress_.loop.global_step;
    result.train_time_s = metrics_.elapsedSeconds();
    result.samples_per_sec =
        progress_.fit.train_s > 0.0 ? static_cast<double>(progress_.fit.samples) / progress_.fit.train_s : 0.0;
    std::tie(result.tflops, result.mfu) = metrics_.achieved(progress_.fit.rank_flops, progress_.fit.rank_train_s);
    return result;
}

// One epoch: trains it (from `first_batch` when resumed), validates it, and decides whether the
// fit goes on (false: stopped, or finished early, as `result` says).
bool Trainer::runEpoch(FitResult& result, int64_t first_batch) {
    if (first_batch == 0) progress_.epoch = EpochProgress{};
    position_ = Position::InEpoch;
    // endStoppedEpoch saved where a stop part-way ended it.
    const bool finished = trainEpoch(first_batch);
    bool validated = false, stop_after_epoch = false;
    if (finished) {
        // Trained, not yet validated: a state saved now resumes into this epoch's validation.
        position_ = Position::EpochTrained;
        // A stop requested during the epoch's last step still leaves a whole epoch: it is
        // validated and recorded (the pass runs to its end), then the run stops.
        stop_after_epoch = strategy_->agreeToStop(stopRequested());
        validated = validateEpoch(/*interruptible=*/!stop_after_epoch);
        // A stop interrupted validation: the last chance to save this epoch's end.
        if (!validated) forEachCallback([this](Callback& c) { c.onTrainStopped(*this); });
    }
    // The fit's totals take the epoch (or the part trained) only now: a state saved above leaves
    // it out, so a resume does not count it twice.
    position_ = Position::None;
    progress_.fit.add(progress_.epoch);
    if (!validated) {
        result.stopped = true;
        return false;
    }
    LoopState& loop = progress_.loop;
    loop.epochs_completed = loop.epoch + 1;
    // Early stopping in the last epoch ends nothing early: the run records no reason (it would
    // read "ended early" after all its epochs), and the log says what early stopping saw.
    if (!loop.finish_reason.empty() && loop.epochs_completed >= config_.trainer.max_epochs) {
        log(LogLine::Level::Info, loop.finish_reason + ", in the last epoch: the fit ends here anyway");
        loop.finish_reason.clear();
    }
    // A callback may ask to stop from its epoch hook (requestStop: stopped, not tested).
    if (stop_after_epoch || strategy_->agreeToStop(stopRequested())) {
        // Where early stopping had also ended the fit, the next epoch is past the last one.
        stopBetweenEpochs(loop.finish_reason.empty() ? loop.epoch + 1 : config_.trainer.max_epochs);
        result.stopped = true;
        return false;
    }
    // Early stopping (finishEarly) ends the fit as completed; a stop above wins over it. Its
    // metrics are the same on every rank, and agreeing keeps the ranks together regardless.
    if (strategy_->agreeToStop(!loop.finish_reason.empty())) {
        if (loop.finish_reason.empty()) loop.finish_reason = "another rank stopped early";
        log(LogLine::Level::Info, loop.finish_reason + "; testing the best checkpoint");
        return false;
    }
    return true;
}

// A stop after a validated epoch, or during the test: the loop moves to `next_epoch`'s start, so a
// state saved there neither trains nor validates the last epoch again. Past the last epoch (the fit
// is over, or early stopping ended it), a resume only tests.
void Trainer::stopBetweenEpochs(int64_t next_epoch) {
    LoopState& loop = progress_.loop;
    loop.epoch = next_epoch;
    loop.batch_in_epoch = 0;
    progress_.epoch = EpochProgress{};
    position_ = Position::BetweenEpochs;
    forEachCallback([this](Callback& c) { c.onTrainStopped(*this); });
    position_ = Position::None;
}

ResumePoint Trainer::resumeFrom(const std::string& path) {
    resume_ = resumeTrainingState(path, *model_, *optimizer_, *strategy_);
    return ResumePoint{path, resume_->progress.loop, resume_->progress.elapsed_s};
}

// The saved position (the fit's progress, whole), the scaler, the generators and the callbacks,
// applied as fit() starts (after onFitStart).
void Trainer::applyResume() {
    const TrainingState& r = *resume_;
    progress_ = r.progress;
    metrics_.startFit(r.progress.elapsed_s);
    if (auto* scaler = strategy_->precision().scaler(); scaler && r.scaler) scaler->loadState(*r.scaler);
    loadCallbackStates(callbacks_, *this, r.callbacks_json);
    setCpuRngState(r.cpu_rng);
    setDeviceRngState(strategy_->device(), r.cuda_rng);
    forEachCallback([this](Callback& c) { c.onResume(*this); });
    const LoopState& loop = progress_.loop;
    const std::string step = "optimizer step " + std::to_string(loop.global_step);
    if (!loop.finish_reason.empty()) {
        log(LogLine::Level::Info, "resumed after early stopping ended the fit (" + step + ", " + loop.finish_reason +
                                      "): testing");
    } else if (loop.epoch >= config_.trainer.max_epochs) {
        log(LogLine::Level::Info, "resumed after the last epoch (" + step + "): testing");
    } else {
        const std::string where = loop.batch_in_epoch == 0                  ? ", the epoch's start"
                                  : loop.batch_in_epoch >= batchesPerEpoch() ? ", the epoch trained: validating it"
                                                                             : "";
        log(LogLine::Level::Info, "resumed at epoch " + std::to_string(loop.epoch + 1) + ", micro-batch " +
                                      std::to_string(loop.batch_in_epoch) + " (" + step + where + ")");
    }
    resume_.reset();
}

// The progress as it stands (its clocks read now), the scaler, the callbacks and the generators.
TrainingState Trainer::captureState() const {
    TrainingState s;
    s.progress = progress_;
    // Inside the epoch its clock runs; once trained, its time is the one trainEpoch recorded.
    if (position_ == Position::InEpoch) s.progress.epoch.train_time_s = secondsSince(epoch_start_);
    s.progress.elapsed_s = metrics_.elapsedSeconds();
    if (strategy_->precision().scalesLoss())
        s.scaler = strategy_->precision().scaler()->state();
    s.callbacks_json = callbackStates(callbacks_);
    s.cpu_rng = cpuRngState();
    s.cuda_rng = deviceRngState(strategy_->device());
    return s;
}

// Inside an epoch: between optimizer steps (an epoch's last, smaller group closed too), with the
// last interval logged; the state then holds everything. Once the epoch is trained (before its
// validation counts) and between epochs, always; elsewhere (validation's callbacks, the test)
// never. The loop is the same on every rank, so is the answer.
bool Trainer::canSaveState() const {
    switch (position_) {
    case Position::InEpoch:
        return metrics_.intervalEmpty() && (progress_.loop.batch_in_epoch % groupSize() == 0 ||
                                            progress_.loop.batch_in_epoch == batchesPerEpoch());
    case Position::EpochTrained:
    case Position::BetweenEpochs:
        return true;
    case Position::None:
        break;
    }
    return false;
}

bool Trainer::saveState(const std::string& path) {
    if (!canSaveState()) return false;
    saveTrainingStateAcrossRanks(path, captureState(), *model_, *optimizer_, *strategy_);
    return true;
}

// Returns false when stopped part-way.
bool Trainer::trainEpoch(int64_t first_batch) {
    EpochProgress& epoch = progress_.epoch;
    // A resumed epoch goes on from its next micro-batch, its clock counting the time before.
    epoch_start_ = secondsAgo(epoch.train_time_s);
    metrics_.startEpoch();
    progress_.loop.batch_in_epoch = first_batch;
    train_loader_->startEpoch(progress_.loop.epoch, first_batch);
    forEachCallback([this](Callback& c) { c.onTrainEpochStart(*this); });
    bool stopped = false;
    while (true) {
        if (profiler_ && progress_.loop.batch_in_epoch % groupSize() == 0) profiler_->beginGroup();
        std::optional<Batch> host_batch;
        {
            ScopedSection section(profiler_, Section::DataWait);
            host_batch = train_loader_->next();
        }
        if (!host_batch) break;
        const double wait_ms = train_loader_->lastWaitMs();
        epoch.wait_ms += wait_ms;
        metrics_.addWait(wait_ms);
        Batch batch;
        {
            ScopedSection section(profiler_, Section::HostToDevice);
            batch = strategy_->toDevice(*host_batch, train_loader_->pinsMemory());
        }
        // Counted before the step: a logged step's interval includes its own micro-batch. Pipeline
        // stages (every rank reads every batch) share its model FLOPs: their mean per device.
        const double readers = strategy_->shardsData() ? 1.0 : static_cast<double>(strategy_->worldSize());
        const double flops =
            model_flops_.training(host_batch->size(), tokensPerSample(*host_batch)) / readers;
        epoch.local_flops += flops;
        metrics_.addFlops(flops);
        trainMicroBatch(batch);
        epoch.local_samples += host_batch->size();
        const bool epoch_end = progress_.loop.batch_in_epoch == batchesPerEpoch();
        // The optimizer step may have just logged.
        if (epoch_end && !metrics_.intervalEmpty()) emitStepMetrics();
        forEachCallback([this](Callback& c) { c.onTrainBatchEnd(*this); });
        // Several ranks agree on a stop where they sync anyway (after a logged step, at the epoch's
        // end): a blocking collective per micro-batch would stall the step. One device stops at once.
        const bool ranks_in_step = strategy_->worldSize() == 1 || metrics_.intervalEmpty() || epoch_end;
        if (ranks_in_step && strategy_->agreeToStop(stopRequested())) {
            stopped = !epoch_end;
            break;
        }
    }
    if (stopped) endStoppedEpoch();
    epoch.train_time_s = secondsSince(epoch_start_);
    if (step_profiler_) epoch_breakdown_ = step_profiler_->takeEpoch(/*wait=*/true);
    return !stopped;
}

// A stop part-way through the epoch.
void Trainer::endStoppedEpoch() {
    // A stop between the micro-batches of one accumulation group drops the partial gradients:
    // stepping on them would use a loss divided by the full group size.
    pending_.clear();  // a captured step's waiting batches: nothing computed yet
    if (progress_.loop.batch_in_epoch % groupSize() != 0) {
        strategy_->zeroGrad(*optimizer_);
        log(LogLine::Level::Info, "stopped inside an accumulation group: its partial gradients were dropped");
    }
    if (!metrics_.intervalEmpty()) emitStepMetrics();
    forEachCallback([this](Callback& c) { c.onTrainStopped(*this); });
}

void Trainer::trainMicroBatch(const Batch& batch) {
    LoopState& loop = progress_.loop;
    const int64_t micro = loop.batch_in_epoch;
    const int64_t k = groupSize();
    const int64_t group_start = (micro / k) * k;
    // The leftover micro-batches at the end of an epoch form a smaller group (as in Lightning).
    const int64_t group_size = std::min(k, batchesPerEpoch() - group_start);
    if (micro == group_start) loop.lr = schedule_->apply(*optimizer_, loop.global_step, loop.epoch);
    const bool closes_group = micro + 1 == group_start + group_size;
    // A captured step takes the whole group at once.
    if (captured_) {
        pending_.push_back(batch);
    } else {
        runMicroBatch(batch, group_size, closes_group);
    }
    ++loop.batch_in_epoch;
    ++loop.micro_batches;
    if (!closes_group) return;
    if (captured_) {
        stepCapturedGroup(group_size);
    } else {
        stepOptimizer(group_size);
    }
}

// One micro-batch eagerly: forward, backward, the callbacks around them, the NaN watch.
void Trainer::runMicroBatch(const Batch& batch, int64_t group_size, bool closes_group) {
    const torch::Tensor loss = step().microBatch(batch, group_size, closes_group, metrics_, [this](Section ended) {
        if (ended == Section::Forward) forEachCallback([this](Callback& c) { c.onForwardEnd(*this); });
    });
    if (closes_group) forEachCallback([this](Callback& c) { c.onBeforeOptimizerStep(*this); });
    if (strategy_->watchLoss(loss, progress_.loop.global_step + 1)) failOnNonFiniteLoss();
}

// Closes an accumulation group: the optimizer step, and the step metrics when they are due.
void Trainer::stepOptimizer(int64_t group_size) {
    step().optimizerStep(*optimizer_, config_.trainer.gradient_clip_val);
    endOptimizerStep(group_size);
}

void Trainer::endOptimizerStep(int64_t group_size) {
    ++progress_.loop.global_step;
    if (profiler_) profiler_->endGroup(group_size);
    if (progress_.loop.global_step % std::max<int64_t>(config_.trainer.log_every_n_steps, 1) == 0) emitStepMetrics();
}

// trainer.cuda_graph=step: a group of the captured shape (every full group) runs through the
// captured step (warm-up, capture, then replays); any other (the epoch's last, smaller batch or
// group) runs eagerly, micro-batch by micro-batch.
void Trainer::stepCapturedGroup(int64_t group_size) {
    std::vector<Batch> group = std::move(pending_);
    pending_.clear();
    const std::optional<double> clip = config_.trainer.gradient_clip_val;
    // Only full batches are captured (a resumed epoch may start at its last, smaller one).
    const bool full = std::all_of(group.begin(), group.end(),
                                  [this](const Batch& b) { return b.size() == config_.trainer.batch_size; });
    if (group_size != groupSize() || !full || !captured_->fits(group)) {
        if (!logged_eager_group_) {
            logged_eager_group_ = true;
            log(LogLine::Level::Info, "trainer.cuda_graph: a group of " + std::to_string(group.size()) +
                                          " micro-batch(es) of " + std::to_string(group.front().size()) +
                                          " samples ran eagerly (the captured step replays full groups of " +
                                          std::to_string(groupSize()) + " x " +
                                          std::to_string(config_.trainer.batch_size) +
                                          "; an epoch's last, smaller batch or group runs as usual)");
        }
        for (size_t j = 0; j < group.size(); ++j) runMicroBatch(group[j], group_size, j + 1 == group.size());
        stepOptimizer(group_size);
        return;
    }
    const int64_t number = progress_.loop.global_step + 1;
    if (!strategy_->precision().scalesLoss()) step_number_.fill_(number);  // the NaN watch's (16-mixed: none)
    const auto mode = captured_->run(group, [this, clip](const std::vector<Batch>& batches, bool capturing) {
        TrainingStep body(*strategy_, *model_, *task_);
        const auto n = static_cast<int64_t>(batches.size());
        for (int64_t j = 0; j < n; ++j) {
            const torch::Tensor loss =
                body.computeMicroBatch(batches[static_cast<size_t>(j)], n, j + 1 == n, metrics_, [this, capturing](Section ended) {
                    if (!capturing && ended == Section::Forward) forEachCallback([this](Callback& c) { c.onForwardEnd(*this); });
                });
            strategy_->watchLossOnDevice(loss, step_number_);
        }
        if (!capturing) forEachCallback([this](Callback& c) { c.onBeforeOptimizerStep(*this); });
        body.optimizerStep(*optimizer_, clip);
    });
    for (const Batch& b : group) metrics_.count(b.size());
    if (mode == CapturedStep::Mode::Captured)
        log(LogLine::Level::Info, "captured the training step as a CUDA graph at optimizer step " + std::to_string(number) +
                                      " (its memory pool: " + formatBytes(captured_->poolBytes()) +
                                      "); later steps replay it");
    endOptimizerStep(group_size);
}

void Trainer::failOnNonFiniteLoss() {
    if (const int64_t bad_step = strategy_->firstNonFiniteStep(); bad_step > 0)
        throw nonFiniteLossError(bad_step, optimizerStepsPerEpoch(), progress_.loop.lr, strategy_->precision().name());
}

void Trainer::emitStepMetrics() {
    MeterTotals totals;
    {
        ScopedSection section(profiler_, Section::Sync);
        failOnNonFiniteLoss();
        // Steps the loss scaler skipped, counted on the device since the last log.
        const int64_t skipped = strategy_->takeSkippedSteps();
        progress_.epoch.skipped_steps += skipped;
        metrics_.addSkippedSteps(skipped);
        const MeterTotals local = metrics_.intervalTotals();
        totals = MetricsLogger::sumOverRanks(*strategy_, local);
        const double local_rate = metrics_.localSamplesPerSec(local);
        forEachCallback([this, local_rate](Callback& c) { c.onMetricsSync(*this, local_rate); });
    }
    progress_.epoch.totals.add(totals);
    StepMetrics m = metrics_.stepMetrics(totals, progress_.loop, batchesPerEpoch(), config_.trainer.max_epochs,
                                         strategy_->precision().lossScale());
    if (step_profiler_) m.breakdown = step_profiler_->takeInterval();
    sink_.onEvent(m);
}

EvalResult Trainer::evaluateAndReport(const std::string& split, Loader& loader, const Dataset& dataset,
                                      bool keep_predictions, bool interruptible) {
    EvalResult result = evaluate(*model_, loader, dataset, *strategy_, *task_, keep_predictions,
                                 [this, interruptible] {
                                     forEachCallback([this](Callback& c) { c.onEvalBatchEnd(*this); });
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
bool Trainer::validateEpoch(bool interruptible) {
    EpochEnd end;
    end.has_val = splits_.val && splits_.val->size() > 0;
    if (end.has_val) {
        const EvalResult val = evaluateAndReport("val", *val_loader_, *splits_.val, false, interruptible);
        if (val.interrupted) return false;
        end.val_loss = val.loss;
        end.val_accuracy = val.accuracy;
    } else if (progress_.loop.epoch == 0) {
        log(LogLine::Level::Warning, "no validation split: the checkpoint keeps the last epoch");
    }
    // The callbacks' states move past this epoch now: no state describes the loop until the epoch
    // is counted.
    position_ = Position::None;
    forEachCallback([this, &end](Callback& c) { c.onValidationEnd(*this, end); });
    progress_.fit.best_val_accuracy = std::max(progress_.fit.best_val_accuracy, end.val_accuracy);
    EpochMetrics e = MetricsLogger::epochMetrics(progress_, end, secondsSince(epoch_start_));
    e.breakdown = epoch_breakdown_;
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
        // The fit is over: a resume only tests (the best checkpoint's weights, as here).
        stopBetweenEpochs(config_.trainer.max_epochs);
        return out;
    }
    sink_.onEvent(PredictionsReady{"test", std::move(eval.predictions)});
    return TestResult{true, eval.loss, eval.accuracy};
}

}  // namespace hearth
