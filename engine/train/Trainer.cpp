#include "engine/train/Trainer.h"

#include "engine/TorchCompat.h"
#include "engine/train/Evaluation.h"
#include "engine/train/Optimizers.h"
#include "engine/train/TrainingError.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace hearth {

struct Trainer::EpochStats {
    MeterTotals totals;  // summed from the step-metric intervals (every interval ends in its epoch)
    int64_t skipped_steps = 0;
    double wait_ms = 0.0;
    double train_time_s = 0.0;
    std::chrono::steady_clock::time_point start;
};

namespace {

using Clock = std::chrono::steady_clock;

LoaderOptions loaderOptions(const TrainerConfig& t, torch::Device device, bool shuffle, uint64_t seed) {
    LoaderOptions o;
    o.batch_size = t.batch_size;
    o.shuffle = shuffle;
    o.seed = seed;
    o.num_workers = t.num_workers;
    o.prefetch_factor = t.prefetch_factor;
    o.persistent_workers = t.persistent_workers;
    o.pin_memory = t.pin_memory;
    o.device = device;
    return o;
}

// Stores channels_last copies of 4-D weights, so convolutions run NHWC end to end.
void toChannelsLast(torch::nn::Module& model) {
    torch::NoGradGuard no_grad;
    for (auto& p : model.parameters()) {
        if (p.dim() == 4) {
            p.set_data(p.data().contiguous(at::MemoryFormat::ChannelsLast));
        }
    }
}

}  // namespace

Trainer::Trainer(const ExperimentConfig& config, torch::Device device, std::shared_ptr<ClassifierImpl> model,
                 const DataSplits& splits, const std::string& artifacts_dir, EventSink& sink,
                 const std::atomic<bool>& stop)
    : config_(config),
      device_(device),
      model_(std::move(model)),
      splits_(splits),
      sink_(sink),
      stop_(stop),
      monitor_(device) {
    const auto& t = config.trainer;
    channels_last_ = t.channels_last && model_->isConvolutional();
    if (channels_last_) {
        toChannelsLast(*model_);
    }
    train_loader_ = std::make_unique<Loader>(splits.train, loaderOptions(t, device, true, config.seed));
    val_loader_ = std::make_unique<Loader>(splits.val, loaderOptions(t, device, false, config.seed));
    test_loader_ = std::make_unique<Loader>(splits.test, loaderOptions(t, device, false, config.seed));
    optimizer_ = createOptimizer(config.optimizer, model_->parameters());
    precision_ = std::make_unique<Precision>(t.precision, device);
    // GradScaler's skipped steps legitimately see inf/nan losses; every other precision fails on them.
    check_finite_ = !precision_->scalesLoss();
    schedule_ = std::make_unique<LearningRateSchedule>(config.scheduler, config.optimizer.lr,
                                                       optimizerStepsPerEpoch() * t.max_epochs);
    checkpoint_ = std::make_unique<BestCheckpoint>(t.checkpoint, artifacts_dir);
    lr_ = config.optimizer.lr;
    first_bad_step_ = torch::zeros({1}, torch::TensorOptions().dtype(torch::kInt64).device(device));
}

Trainer::~Trainer() = default;

int64_t Trainer::batchesPerEpoch() const {
    return train_loader_->batchesPerEpoch();
}

int64_t Trainer::optimizerStepsPerEpoch() const {
    const int64_t k = std::max<int64_t>(config_.trainer.accumulate_grad_batches, 1);
    return (batchesPerEpoch() + k - 1) / k;
}

double Trainer::secondsSince(Clock::time_point t) const {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

void Trainer::log(LogLine::Level level, const std::string& text) {
    LogLine line;
    line.level = level;
    line.text = text;
    sink_.onEvent(line);
}

FitResult Trainer::fit() {
    FitResult result;
    fit_start_ = Clock::now();
    interval_start_ = fit_start_;
    double pure_train_s = 0.0;
    int64_t samples = 0;
    model_->train();
    for (epoch_ = 0; epoch_ < config_.trainer.max_epochs; ++epoch_) {
        EpochStats stats;
        const bool finished = trainEpoch(stats);
        pure_train_s += stats.train_time_s;
        samples += stats.totals.samples;
        if (!finished) {
            result.stopped = true;
            break;
        }
        // A stop requested during the epoch's last step still leaves a whole epoch: it is
        // validated and recorded (the pass runs to its end), then the run stops.
        const bool stop_after_epoch = stop_.load();
        if (!validateAndCheckpoint(stats, result, /*interruptible=*/!stop_after_epoch)) {
            result.stopped = true;
            break;
        }
        result.epochs_completed = epoch_ + 1;
        if (stop_after_epoch) {
            result.stopped = true;
            break;
        }
    }
    monitor_.poll(sink_, /*force=*/true);
    result.global_steps = global_step_;
    result.train_time_s = secondsSince(fit_start_);
    result.samples_per_sec = pure_train_s > 0.0 ? static_cast<double>(samples) / pure_train_s : 0.0;
    return result;
}

// Returns false when stopped part-way.
bool Trainer::trainEpoch(EpochStats& stats) {
    stats.start = Clock::now();
    train_loader_->startEpoch(epoch_);
    int64_t micro = 0;
    bool stopped = false;
    while (auto batch = train_loader_->next()) {
        const double wait_ms = train_loader_->lastWaitMs();
        stats.wait_ms += wait_ms;
        interval_wait_ms_ += wait_ms;
        trainMicroBatch(*batch, micro, stats);
        ++micro;
        monitor_.poll(sink_);
        const bool epoch_end = micro == batchesPerEpoch();
        const bool logged_step = interval_meter_.empty();  // finishOptimizerStep may have just logged
        if (epoch_end && !logged_step) {
            emitStepMetrics(micro, stats);
        }
        if (stop_.load()) {
            stopped = !epoch_end;
            break;
        }
    }
    if (stopped) {
        // A stop between the micro-batches of one accumulation group drops the partial gradients:
        // stepping on them would use a loss divided by the full group size.
        if (micro % std::max<int64_t>(config_.trainer.accumulate_grad_batches, 1) != 0) {
            compat::clearGradients(*optimizer_);
            log(LogLine::Level::Info, "stopped inside an accumulation group: its partial gradients were dropped");
        }
        if (!interval_meter_.empty()) {
            emitStepMetrics(micro, stats);
        }
    }
    stats.train_time_s = secondsSince(stats.start);
    return !stopped;
}

void Trainer::trainMicroBatch(const Batch& batch, int64_t micro, EpochStats& stats) {
    const int64_t k = std::max<int64_t>(config_.trainer.accumulate_grad_batches, 1);
    const int64_t group_start = (micro / k) * k;
    // The leftover micro-batches at the end of an epoch form a smaller group (as in Lightning).
    const int64_t group_size = std::min(k, batchesPerEpoch() - group_start);
    if (micro == group_start) {
        lr_ = schedule_->apply(*optimizer_, global_step_, epoch_);
    }
    const auto inputs = channels_last_ ? batch.inputs.contiguous(at::MemoryFormat::ChannelsLast) : batch.inputs;
    const auto logits = precision_->forward(*model_, inputs);
    const auto loss = torch::nn::functional::cross_entropy(logits, batch.labels);
    precision_->backward(group_size == 1 ? loss : loss / static_cast<double>(group_size));
    interval_meter_.add(loss, logits, batch.labels);
    trackNonFiniteLoss(loss);
    ++micro_total_;
    if (micro + 1 == group_start + group_size) {
        finishOptimizerStep(stats);
        if (global_step_ % std::max<int64_t>(config_.trainer.log_every_n_steps, 1) == 0) {
            emitStepMetrics(micro + 1, stats);
        }
    }
}

void Trainer::finishOptimizerStep(EpochStats& stats) {
    if (!precision_->optimizerStep(*optimizer_, config_.trainer.gradient_clip_val)) {
        ++stats.skipped_steps;
    }
    compat::clearGradients(*optimizer_);
    ++global_step_;
}

void Trainer::trackNonFiniteLoss(const torch::Tensor& loss) {
    if (!check_finite_) {
        return;
    }
    if (device_.is_cpu()) {
        // Reading a CPU scalar costs nothing, and failing at once names the exact step.
        if (!std::isfinite(loss.item<double>())) {
            first_bad_step_.fill_(global_step_ + 1);
            checkFiniteLoss();
        }
        return;
    }
    // On CUDA: recorded on the device (no sync); read when metrics are logged.
    torch::NoGradGuard no_grad;
    const auto bad = torch::logical_and(torch::logical_not(torch::isfinite(loss.detach())), first_bad_step_.eq(0));
    first_bad_step_.masked_fill_(bad, global_step_ + 1);
}

void Trainer::checkFiniteLoss() {
    if (!check_finite_) {
        return;
    }
    const int64_t bad_step = first_bad_step_.item<int64_t>();
    if (bad_step == 0) {
        return;
    }
    const int64_t bad_epoch = (bad_step - 1) / std::max<int64_t>(optimizerStepsPerEpoch(), 1);
    std::ostringstream msg;
    msg << "loss became NaN or infinite at epoch " << bad_epoch + 1 << " step " << bad_step << " (lr " << lr_
        << ", precision " << precision_->name() << ")";
    throw TrainingError(msg.str(),
                        "lower optimizer.lr, set trainer.gradient_clip_val (e.g. 1.0), or check the "
                        "input data for NaN/inf values");
}

void Trainer::emitStepMetrics(int64_t micro, EpochStats& stats) {
    checkFiniteLoss();
    const double interval_s = secondsSince(interval_start_);
    const MeterTotals totals = interval_meter_.read();
    stats.totals.add(totals);
    const auto batches = static_cast<double>(std::max<int64_t>(totals.batches, 1));
    StepMetrics m;
    m.epoch = epoch_;
    m.batch = micro;
    m.batches_per_epoch = batchesPerEpoch();
    m.global_step = global_step_;
    m.loss = totals.meanLoss();
    m.accuracy = totals.accuracy();
    m.lr = lr_;
    m.loss_scale = precision_->lossScale();
    m.samples_per_sec = interval_s > 0.0 ? static_cast<double>(totals.samples) / interval_s : 0.0;
    m.data_wait_ms = interval_wait_ms_ / batches;
    m.step_time_ms = std::max(0.0, interval_s * 1000.0 - interval_wait_ms_) / batches;
    m.elapsed_s = secondsSince(fit_start_);
    const int64_t total_micro = batchesPerEpoch() * config_.trainer.max_epochs;
    m.eta_s = micro_total_ > 0 ? m.elapsed_s / static_cast<double>(micro_total_) *
                                     static_cast<double>(std::max<int64_t>(total_micro - micro_total_, 0))
                               : 0.0;
    sink_.onEvent(m);
    interval_meter_.reset();
    interval_wait_ms_ = 0.0;
    interval_start_ = Clock::now();
}

EvalResult Trainer::evaluateAndReport(const std::string& split, Loader& loader, const Dataset& dataset,
                                      bool keep_predictions, bool interruptible) {
    EvalResult result =
        evaluate(*model_, loader, dataset, *precision_, channels_last_, keep_predictions, [this, interruptible] {
            monitor_.poll(sink_);
            return !interruptible || !stop_.load();
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

// Validates, offers the checkpoint, emits EvalReport / CheckpointSaved / EpochMetrics.
// Returns false when a stop interrupted validation.
bool Trainer::validateAndCheckpoint(const EpochStats& stats, FitResult& result, bool interruptible) {
    const bool has_val = splits_.val && splits_.val->size() > 0;
    EvalResult val;
    if (has_val) {
        val = evaluateAndReport("val", *val_loader_, *splits_.val, false, interruptible);
        if (val.interrupted) {
            return false;
        }
    } else if (epoch_ == 0) {
        log(LogLine::Level::Warning, "no validation split: the checkpoint keeps the last epoch");
    }
    const double monitored = config_.trainer.checkpoint.monitor == "val_loss" ? val.loss : val.accuracy;
    const auto saved = has_val ? checkpoint_->offer(monitored, epoch_, *model_, *optimizer_)
                               : checkpoint_->offerAlways(epoch_, *model_, *optimizer_);
    if (saved) {
        sink_.onEvent(*saved);
    }
    result.best_val_accuracy = std::max(result.best_val_accuracy, val.accuracy);
    EpochMetrics e;
    e.epoch = epoch_;
    e.global_step = global_step_;
    e.train_loss = stats.totals.meanLoss();
    e.train_accuracy = stats.totals.accuracy();
    e.val_loss = val.loss;
    e.val_accuracy = val.accuracy;
    e.lr = lr_;
    e.epoch_time_s = secondsSince(stats.start);
    e.samples_per_sec = stats.train_time_s > 0.0 ? static_cast<double>(stats.totals.samples) / stats.train_time_s : 0.0;
    e.data_wait_share = stats.train_time_s > 0.0 ? std::min(1.0, stats.wait_ms / 1000.0 / stats.train_time_s) : 0.0;
    e.skipped_steps = stats.skipped_steps;
    e.is_best = checkpoint_->improvedLast();
    sink_.onEvent(e);
    return true;
}

TestResult Trainer::test() {
    TestResult out;
    if (!splits_.test || splits_.test->size() == 0) {
        log(LogLine::Level::Warning, "no test split: skipping the test phase");
        return out;
    }
    if (checkpoint_->hasState()) {
        checkpoint_->restore(*model_);
        log(LogLine::Level::Info, "testing the best checkpoint (epoch " + std::to_string(checkpoint_->bestEpoch() + 1) +
                                      ", " + config_.trainer.checkpoint.monitor + ")");
    }
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
