// runExperiment: one run from config to RunFinished/RunFailed, with one error path; and the
// RunController that runs it on its own thread.

#include "engine/run/RunController.h"

#include "engine/TorchCompat.h"
#include "engine/config/DeviceInfo.h"
#include "engine/data/Augment.h"
#include "engine/data/DataError.h"
#include "engine/dist/Rendezvous.h"
#include "engine/models/ModelRegistry.h"
#include "engine/monitor/CudaMemory.h"
#include "engine/monitor/Elapsed.h"
#include "engine/run/NormalizationFile.h"
#include "engine/run/RunSetup.h"
#include "engine/train/StateFiles.h"
#include "engine/train/Trainer.h"
#include "engine/train/TrainingError.h"

#include <filesystem>

#include <chrono>
#include <new>

namespace hearth {
namespace {

const char* kOutOfMemorySuggestion =
    "reduce trainer.batch_size, use trainer.precision=16-mixed or bf16-mixed, or raise "
    "trainer.accumulate_grad_batches";

double wallClockSeconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

RunStarted describeRun(const ExperimentConfig& requested, const ExperimentConfig& config, const RunOptions& options,
                       torch::Device device, const DataSplits& splits, const ClassifierImpl& model,
                       const Trainer& trainer) {
    RunStarted s;
    s.run_name = config.name;
    s.config_json = configToJson(requested);
    const std::string checkpoint =
        options.artifacts_dir.empty() ? "" : (std::filesystem::path(options.artifacts_dir) / "best.pt").string();
    s.effective = effectiveSettings(config, device, trainer, checkpoint);
    s.environment = queryEnvironment();
    s.device = device.str();
    s.train_size = splits.train ? splits.train->size() : 0;
    s.val_size = splits.val ? splits.val->size() : 0;
    s.test_size = splits.test ? splits.test->size() : 0;
    s.batches_per_epoch = trainer.batchesPerEpoch();
    s.max_epochs = config.trainer.max_epochs;
    s.class_names = splits.class_names;
    s.model_summary = modelSummary(model);
    s.parameter_count = parameterCount(model);
    s.wall_time_s = wallClockSeconds();
    return s;
}

// The run itself; throws on any failure (runExperiment turns that into RunFailed).
RunOutcome train(const ExperimentConfig& requested, const RunOptions& options, EventSink& sink,
                 const std::atomic<bool>& stop) {
    const auto start = std::chrono::steady_clock::now();
    PreparedRun prepared =
        prepareRun(requested, [&sink](const std::string& line) { sink.onEvent(LogLine{LogLine::Level::Info, line}); });
    const ExperimentConfig& config = prepared.config;
    const torch::Device device = prepared.device;
    const DataSplits& splits = prepared.splits;
    auto model = prepared.model;
    Trainer trainer(config, device, model, splits, options.artifacts_dir, sink, stop);
    double resumed_elapsed_s = 0.0;
    if (!options.resume_from.empty()) {
        const ResumePoint point = trainer.resumeFrom(options.resume_from);
        resumed_elapsed_s = point.elapsed_s;
        if (options.on_resume) options.on_resume(point);
    }
    sink.onEvent(describeRun(requested, config, options, device, splits, *model, trainer));
    // Beside best.pt: what a prediction with this run normalises new inputs with.
    if (trainer.strategyInUse().isGlobalZero()) writeNormalizationFile(options.artifacts_dir, config.data.kind, splits);
    sink.onEvent(LogLine{LogLine::Level::Info, "data: " + splits.description});
    if (const ImageAugment augment(config.data.augment); augment.active())
        sink.onEvent(LogLine{LogLine::Level::Info, "training images augmented in the loader: " + augment.describe()});
    for (const auto& note : splits.notes) sink.onEvent(LogLine{LogLine::Level::Warning, note});
    for (const auto& note : model->notes()) sink.onEvent(LogLine{LogLine::Level::Info, "model: " + note});
    for (const auto& note : ineffectiveToggles(requested)) {
        sink.onEvent(LogLine{LogLine::Level::Warning, note});
    }

    const FitResult fit = trainer.fit();
    // A stop skips the test phase: testing would delay the stop by a full pass over the test split.
    const TestResult test = fit.stopped ? TestResult{} : trainer.test();
    const bool stopped = fit.stopped || (!test.ran && splits.test && splits.test->size() > 0);

    RunFinished done;
    done.status = stopped ? "stopped" : "completed";
    done.train_time_s = fit.train_time_s;
    // A resumed run's time before the interruption counts (its set-up time then is not known).
    done.total_time_s =
        resumed_elapsed_s + secondsSince(start);
    done.best_val_accuracy = fit.best_val_accuracy;
    done.test_accuracy = test.accuracy;
    done.test_loss = test.loss;
    done.samples_per_sec = fit.samples_per_sec;
    done.tflops = fit.tflops;
    done.mfu = fit.mfu;
    done.peak_memory_bytes = trainer.peakMemoryBytes();
    done.memory = trainer.memoryBreakdown();
    done.epochs_completed = fit.epochs_completed;
    done.global_steps = fit.global_steps;
    done.stop_reason = fit.stop_reason;
    // A completed run cannot be resumed: its training states go (they can be large). Rank 0's
    // job: the other ranks of a resumed run only read the run's folder.
    if (!stopped && trainer.strategyInUse().isGlobalZero()) {
        const auto removed = removeTrainingStates(options.artifacts_dir);
        if (!removed.empty()) {
            CheckpointSaved gone;   // no new file: the record of the deleted ones
            gone.kind = "state";
            gone.removed = removed;
            sink.onEvent(gone);
        }
    }
    sink.onEvent(done);
    RunOutcome outcome;
    outcome.status = stopped ? RunStatus::Stopped : RunStatus::Completed;
    return outcome;
}

bool isOutOfMemory(const std::string& message) {
    return message.find("out of memory") != std::string::npos || message.find("Out of memory") != std::string::npos;
}

RunOutcome fail(EventSink& sink, FailureKind kind, const std::string& message, const std::string& suggestion) {
    RunFailed failed;
    failed.kind = kind;
    failed.message = message;
    failed.suggestion = suggestion;
    try {
        sink.onEvent(failed);
    } catch (...) {
        // A sink that throws must not turn a reported failure into an escaped exception.
    }
    RunOutcome outcome;
    outcome.status = RunStatus::Failed;
    outcome.failure = kind;
    outcome.message = message;
    return outcome;
}

void releaseDeviceMemory() {
#ifdef HEARTH_WITH_CUDA
    if (torch::cuda::is_available()) {
        releaseCudaCache();
    }
#endif
}

}  // namespace

namespace {
std::atomic<int64_t> g_training_jobs{0};
}  // namespace

void countTrainingJob() {
    g_training_jobs.fetch_add(1);
}

int64_t trainingJobsInThisProcess() {
    return g_training_jobs.load();
}

RunOutcome runExperiment(const ExperimentConfig& config, const RunOptions& options, EventSink& sink,
                         const std::atomic<bool>& stop) {
    countTrainingJob();
    RunOutcome outcome;
    try {
        outcome = train(config, options, sink, stop);
    } catch (const dist::LaunchError& e) {
        // The launcher and this build do not fit together; the message says what to launch instead.
        outcome = fail(sink, FailureKind::Config, e.what(), "");
    } catch (const ConfigError& e) {
        const std::string key = e.key().empty() ? std::string("the config") : e.key();
        outcome = fail(sink, FailureKind::Config, e.what(), "fix " + key + " and run again");
    } catch (const DataError& e) {
        outcome = fail(sink, FailureKind::Data, e.what(), "check data.path and the data files");
    } catch (const TrainingStateError& e) {
        outcome = fail(sink, FailureKind::Data, e.what(),
                       "resume from another training state (hearth-cli resume RUN --from FILE), or start the run anew");
    } catch (const TrainingError& e) {
        outcome = fail(sink, FailureKind::Training, e.what(), e.suggestion());
    } catch (const c10::OutOfMemoryError& e) {
        outcome = fail(sink, FailureKind::Training, std::string("out of memory: ") + e.what_without_backtrace(),
                       kOutOfMemorySuggestion);
    } catch (const c10::Error& e) {
        const std::string msg = e.what_without_backtrace();
        outcome = fail(sink, FailureKind::Training, msg, isOutOfMemory(msg) ? kOutOfMemorySuggestion : "");
    } catch (const std::bad_alloc&) {
        outcome = fail(sink, FailureKind::Training, "out of memory (host allocation failed)", kOutOfMemorySuggestion);
    } catch (const std::exception& e) {
        const std::string msg = e.what();
        outcome = fail(sink, FailureKind::Training, msg, isOutOfMemory(msg) ? kOutOfMemorySuggestion : "");
    } catch (...) {
        outcome = fail(sink, FailureKind::Training, "unknown error", "");
    }
    try {
        releaseDeviceMemory();
    } catch (...) {
    }
    return outcome;
}

EventFanout::EventFanout(std::vector<std::shared_ptr<EventSink>> sinks) : sinks_(std::move(sinks)) {}

void EventFanout::onEvent(const Event& event) {
    for (const auto& sink : sinks_) {
        if (sink) {
            sink->onEvent(event);
        }
    }
}

RunController::~RunController() {
    requestStop();
    if (thread_.joinable()) {
        thread_.join();
    }
}

bool RunController::start(ExperimentConfig config, RunOptions options, std::vector<std::shared_ptr<EventSink>> sinks) {
    if (running_.load()) {
        return false;
    }
    if (thread_.joinable()) {
        thread_.join();
    }
    stop_.store(false);
    running_.store(true);
    auto body = [this, config = std::move(config), options = std::move(options), sinks = std::move(sinks)]() mutable {
        // runExperiment never throws; the catch keeps even a failing fan-out from escaping.
        try {
            EventFanout fanout(std::move(sinks));
            outcome_ = runExperiment(config, options, fanout, stop_);
        } catch (...) {
            outcome_ = RunOutcome{RunStatus::Failed, FailureKind::Training, "unexpected error in the run thread"};
        }
        running_.store(false);
    };
    try {
        thread_ = std::thread(std::move(body));
    } catch (...) {
        running_.store(false);  // no thread (e.g. the process is out of threads): later starts must work
        throw;
    }
    return true;
}

void RunController::requestStop() {
    stop_.store(true);
}

bool RunController::isRunning() const {
    return running_.load();
}

RunOutcome RunController::wait() {
    if (thread_.joinable()) {
        thread_.join();
    }
    return outcome_;
}

}  // namespace hearth
