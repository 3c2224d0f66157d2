// runExperiment end to end on a synthetic CSV (and a Fashion-MNIST subset): the event sequence
// and effective settings, determinism, cancellation, and each failure path.
#include "TrainTestSupport.h"

#include "engine/config/ConfigSchema.h"
#include "engine/config/DeviceInfo.h"
#include "engine/data/DataModule.h"
#include "engine/models/ModelRegistry.h"
#include "engine/run/RunController.h"
#include "engine/train/Trainer.h"

#include <QTemporaryDir>
#include <QTest>

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <system_error>

using namespace hearth;
using namespace hearth::testing;

namespace {

struct Run {
    RecordingSink sink;
    RunOutcome outcome;
};

void runOnce(const ExperimentConfig& c, Run& run, const std::atomic<bool>& stop, const std::string& dir = "") {
    RunOptions options;
    options.artifacts_dir = dir;
    run.outcome = runExperiment(c, options, run.sink, stop);
}

void runOnce(const ExperimentConfig& c, Run& run) {
    std::atomic<bool> stop{false};
    runOnce(c, run, stop);
}

// The process's virtual address space in bytes (/proc/self/statm counts pages); unused under the
// sanitizers, whose test skips.
[[maybe_unused]] rlim_t currentAddressSpaceBytes() {
    std::ifstream statm("/proc/self/statm");
    rlim_t pages = 0;
    statm >> pages;
    return pages * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
}

std::vector<double> stepLosses(const RecordingSink& sink) {
    std::vector<double> losses;
    for (const auto& m : sink.all<StepMetrics>()) losses.push_back(m.loss);
    return losses;
}

}  // namespace

class TestRunExperiment : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string csv_;

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        csv_ = writeBlobCsv(dir_.filePath("blobs.csv").toStdString(), 600);
    }

    void completedRunEmitsTheWholeStory() {
        auto c = blobCsvConfig(csv_);
        c.trainer.accelerator = "cpu";  // the CPU story, also on a machine with a GPU
        c.trainer.num_threads = 2;
        Run run;
        runOnce(c, run);
        QCOMPARE(int(run.outcome.status), int(RunStatus::Completed));
        const auto& events = run.sink.events;
        QVERIFY(std::holds_alternative<RunStarted>(events.front()));
        QVERIFY(std::holds_alternative<RunFinished>(events.back()));
        const auto started = std::get<RunStarted>(events.front());
        QCOMPARE(started.effective.at("trainer.pin_memory"), std::string("off (not applicable on CPU)"));
        QCOMPARE(started.effective.at("trainer.num_threads"), std::string("2"));
        QVERIFY(started.effective.at("trainer.precision").find("32-true") == 0);
        QVERIFY(started.effective.at("trainer.num_workers").find('0') == 0);
        QVERIFY(started.effective.count("trainer.cudnn_benchmark"));
        // Every toggle of the key table is in the list, so none is dropped silently.
        for (const auto& key : configSchema())
            if (key.toggle) QVERIFY2(started.effective.count(key.key), key.key.c_str());
        // A toggle that does nothing in this run says so and why, as the form's greyed field does:
        // one process has no DDP buckets, no ZeRO-3 units and no pipeline stages.
        for (const char* key : {"trainer.ddp.bucket_cap_mb", "trainer.fsdp.prefetch", "trainer.pipeline.micro_batches"})
            QVERIFY2(started.effective.at(key).rfind("n/a: ", 0) == 0, started.effective.at(key).c_str());
        QCOMPARE(started.effective.at("trainer.ddp.backend"),
                 "n/a: " + noEffectReason(*findConfigKey("trainer.ddp.backend"), c, queryDeviceCapabilities()));
        QVERIFY(started.config_json.find("\"max_epochs\"") != std::string::npos);
        QCOMPARE(started.device, std::string("cpu"));
        QCOMPARE(started.train_size + started.val_size + started.test_size, int64_t(600));
        QCOMPARE(started.class_names, (std::vector<std::string>{"c0", "c1", "c2"}));
        QVERIFY(!started.model_summary.empty());
        QCOMPARE(started.parameter_count, int64_t(8 * 32 + 32 + 32 * 3 + 3));
        QVERIFY(!started.environment.cpu.empty());
        QVERIFY(started.environment.libtorch_version.find('.') != std::string::npos);
        QCOMPARE(started.environment.intra_op_threads, int64_t(2));

        QCOMPARE(run.sink.count<EpochMetrics>(), 3);
        const auto reports = run.sink.all<EvalReport>();
        QCOMPARE(reports.size(), size_t(4));  // val x3, then test
        QCOMPARE(QString::fromStdString(reports.back().split), QString("test"));
        QCOMPARE(reports.back().report.total, started.test_size);
        const auto preds = run.sink.all<PredictionsReady>();
        QCOMPARE(preds.size(), size_t(1));
        QCOMPARE(int64_t(preds[0].predictions.size()), started.test_size);
        for (const auto& p : preds[0].predictions) {
            QVERIFY(p.index >= 0 && p.index < 600);
            QVERIFY(p.confidence >= 1.0 / 3.0 && p.confidence <= 1.0);
        }
        QVERIFY(run.sink.count<DeviceSample>() >= 1);
        const auto host = run.sink.all<DeviceSample>().front();
        QVERIFY(host.allocated_bytes > 0 && host.total_bytes > host.allocated_bytes);

        const auto done = std::get<RunFinished>(events.back());
        QCOMPARE(QString::fromStdString(done.status), QString("completed"));
        QVERIFY(done.test_accuracy > 0.9);
        QCOMPARE(done.test_accuracy, reports.back().report.accuracy);
        QCOMPARE(done.epochs_completed, int64_t(3));
        QCOMPARE(done.global_steps, 3 * started.batches_per_epoch);
        QVERIFY(done.samples_per_sec > 0.0);
        QVERIFY(done.peak_memory_bytes > 0);
        const auto steps = run.sink.all<StepMetrics>();
        QVERIFY(steps.back().elapsed_s > 0.0 && steps.front().eta_s > 0.0);
    }

    void deterministicRunsRepeatStepLosses() {
        for (int workers : {0, 2}) {
            auto c = blobCsvConfig(csv_);
            c.trainer.deterministic = true;
            c.trainer.num_workers = workers;
            c.model.dropout = 0.3;  // the dropout masks must repeat too
            Run a, b;
            runOnce(c, a);
            runOnce(c, b);
            QCOMPARE(int(a.outcome.status), int(RunStatus::Completed));
            const auto la = stepLosses(a.sink);
            QVERIFY(la.size() > 20);
            QCOMPARE(la, stepLosses(b.sink));
            QVERIFY(std::get<RunStarted>(a.sink.events.front()).effective.at("trainer.deterministic").find("on") == 0);
        }
    }

    void differentSeedsGiveDifferentLosses() {
        auto c = blobCsvConfig(csv_);
        c.trainer.max_epochs = 1;
        Run a, b;
        runOnce(c, a);
        c.seed = 7;
        runOnce(c, b);
        QVERIFY(stepLosses(a.sink) != stepLosses(b.sink));
    }

    void stopFromSinkEndsWithinOneMicroBatch() {
        auto c = blobCsvConfig(csv_);
        std::atomic<bool> stop{false};
        Run run;
        int seen = 0;
        run.sink.hook = [&](const Event& e) {
            if (std::holds_alternative<StepMetrics>(e) && ++seen == 3) stop = true;
        };
        runOnce(c, run, stop);
        QCOMPARE(int(run.outcome.status), int(RunStatus::Stopped));
        const auto done = std::get<RunFinished>(run.sink.events.back());
        QCOMPARE(QString::fromStdString(done.status), QString("stopped"));
        QVERIFY2(done.global_steps <= 4, qPrintable(QString("ran to step %1").arg(done.global_steps)));
        QCOMPARE(run.sink.all<StepMetrics>().back().global_step, done.global_steps);
        QCOMPARE(run.sink.count<EvalReport>(), 0);
        QCOMPARE(run.sink.count<PredictionsReady>(), 0);
    }

    void controllerRunsOnItsThreadAndStops() {
        auto c = blobCsvConfig(csv_);
        c.trainer.max_epochs = 50;
        auto sink = std::make_shared<RecordingSink>();
        RunController controller;
        const auto caller = std::this_thread::get_id();
        std::atomic<bool> other_thread{false};
        sink->hook = [&](const Event& e) {
            other_thread = std::this_thread::get_id() != caller;
            if (const auto* m = std::get_if<StepMetrics>(&e); m && m->global_step == 5) controller.requestStop();
        };
        QVERIFY(controller.start(c, RunOptions{}, {sink}));
        const auto outcome = controller.wait();
        QVERIFY(!controller.isRunning());
        QVERIFY(other_thread);
        QCOMPARE(int(outcome.status), int(RunStatus::Stopped));
        QVERIFY(std::get<RunFinished>(sink->events.back()).global_steps <= 6);
    }

    // Stop pressed during an epoch's last step: that epoch is whole, so it is validated and
    // recorded before the run stops (it used to vanish, validation and metrics alike).
    void stopOnTheLastStepOfAnEpochKeepsThatEpoch() {
        auto c = blobCsvConfig(csv_);
        c.trainer.accelerator = "cpu";
        c.trainer.max_epochs = 3;
        std::atomic<bool> stop{false};
        Run run;
        run.sink.hook = [&](const Event& e) {
            if (const auto* m = std::get_if<StepMetrics>(&e); m && m->epoch == 0 && m->batch == m->batches_per_epoch)
                stop = true;
        };
        runOnce(c, run, stop);
        QCOMPARE(int(run.outcome.status), int(RunStatus::Stopped));
        const auto epochs = run.sink.all<EpochMetrics>();
        QCOMPARE(epochs.size(), size_t(1));
        QCOMPARE(epochs[0].epoch, int64_t(0));
        QVERIFY(epochs[0].val_accuracy > 0.0);
        const auto reports = run.sink.all<EvalReport>();
        QVERIFY(std::any_of(reports.begin(), reports.end(), [](const EvalReport& r) { return r.split == "val"; }));
        QCOMPARE(std::get<RunFinished>(run.sink.events.back()).epochs_completed, int64_t(1));
    }

    // A controller whose thread could not be created accepts the next start (it used to stay
    // "running" for ever, and the workbench refused every later run).
    void controllerRecoversWhenItsThreadCannotStart() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
        QSKIP("the sanitizers reserve address space, so an address-space limit cannot isolate thread creation");
#else
        auto c = blobCsvConfig(csv_);
        c.trainer.max_epochs = 1;
        RunController controller;
        // No room for a new thread's stack: new threads get a 1 TiB stack (so glibc cannot reuse a
        // cached one) inside an address-space limit just above what the process uses.
        pthread_attr_t saved_attr;
        QVERIFY(pthread_getattr_default_np(&saved_attr) == 0);
        pthread_attr_t huge_stack;
        pthread_attr_init(&huge_stack);
        pthread_attr_setstacksize(&huge_stack, size_t(1) << 40);
        rlimit saved{};
        QVERIFY(getrlimit(RLIMIT_AS, &saved) == 0);
        rlimit tight = saved;
        tight.rlim_cur = currentAddressSpaceBytes() + (64 << 20);
        QVERIFY(pthread_setattr_default_np(&huge_stack) == 0);
        QVERIFY(setrlimit(RLIMIT_AS, &tight) == 0);
        bool threw = false;
        try {
            controller.start(c, RunOptions{}, {std::make_shared<RecordingSink>()});
        } catch (const std::exception&) {  // std::system_error (or bad_alloc if the heap hit the limit first)
            threw = true;
        }
        QVERIFY(setrlimit(RLIMIT_AS, &saved) == 0);
        QVERIFY(pthread_setattr_default_np(&saved_attr) == 0);
        pthread_attr_destroy(&huge_stack);
        pthread_attr_destroy(&saved_attr);
        QVERIFY(threw);
        QVERIFY(!controller.isRunning());
        QVERIFY(controller.start(c, RunOptions{}, {std::make_shared<RecordingSink>()}));
        QCOMPARE(int(controller.wait().status), int(RunStatus::Completed));
#endif
    }

    // The Trainer keeps its own copies of the config and the splits: built from temporaries, it
    // still trains (with references it read freed memory; AddressSanitizer names it).
    void trainerBuiltFromTemporariesTrains() {
        auto c = blobCsvConfig(csv_);
        c.trainer.accelerator = "cpu";
        c.trainer.max_epochs = 1;
        RecordingSink sink;
        std::atomic<bool> stop{false};
        const DataSplits kept = loadDataSplits(c.data, c.seed);
        auto model = createModel(c.model, ModelInput{kept.train->sampleShape(), int64_t(kept.class_names.size())});
        Trainer trainer(ExperimentConfig(c), torch::kCPU, model, DataSplits(kept), "", sink, stop);
        c.trainer.max_epochs = 0;  // the caller's config changes after the Trainer is built
        const FitResult fit = trainer.fit();
        QCOMPARE(fit.epochs_completed, int64_t(1));
        QVERIFY(trainer.test().accuracy > 0.5);
    }

    void nanLossFailsTheRunWithASuggestion() {
        auto c = blobCsvConfig(csv_);
        c.optimizer.name = "sgd";
        c.optimizer.lr = 1e30;
        Run run;
        runOnce(c, run);
        QCOMPARE(int(run.outcome.status), int(RunStatus::Failed));
        QCOMPARE(int(run.outcome.failure), int(FailureKind::Training));
        const auto failed = std::get<RunFailed>(run.sink.events.back());
        QVERIFY2(failed.message.find("loss became NaN") == 0, failed.message.c_str());
        QVERIFY(failed.message.find("epoch 1 step") != std::string::npos);
        QVERIFY(failed.suggestion.find("optimizer.lr") != std::string::npos);
        QVERIFY(failed.suggestion.find("gradient_clip_val") != std::string::npos);
    }

    void cnnOnTabularDataIsAConfigFailure() {
        auto c = blobCsvConfig(csv_);
        c.model.name = "cnn";
        Run run;
        runOnce(c, run);
        QCOMPARE(int(run.outcome.failure), int(FailureKind::Config));
        const auto failed = std::get<RunFailed>(run.sink.events.back());
        QCOMPARE(int(failed.kind), int(FailureKind::Config));
        QVERIFY(failed.message.find("cnn needs image input") != std::string::npos);
    }

    void invalidConfigFailsBeforeLoadingData() {
        auto c = blobCsvConfig(dir_.filePath("missing.csv").toStdString());
        c.trainer.batch_size = 0;
        Run run;
        runOnce(c, run);
        QCOMPARE(int(run.outcome.failure), int(FailureKind::Config));
        QVERIFY(std::get<RunFailed>(run.sink.events.back()).message.find("trainer.batch_size") != std::string::npos);
        QCOMPARE(run.sink.events.size(), size_t(1));
    }

    void missingDataIsADataFailure() {
        auto c = blobCsvConfig(dir_.filePath("missing.csv").toStdString());
        Run run;
        runOnce(c, run);
        QCOMPARE(int(run.outcome.status), int(RunStatus::Failed));
        QCOMPARE(int(run.outcome.failure), int(FailureKind::Data));
        QVERIFY(std::get<RunFailed>(run.sink.events.back()).message.find("missing.csv") != std::string::npos);
    }

    void bf16MixedRunReportsCpuAutocast() {
        auto c = blobCsvConfig(csv_);
        c.trainer.accelerator = "cpu";
        c.trainer.precision = "bf16-mixed";
        c.trainer.max_epochs = 2;
        Run run;
        runOnce(c, run);
        QCOMPARE(int(run.outcome.status), int(RunStatus::Completed));
        const auto started = std::get<RunStarted>(run.sink.events.front());
        QVERIFY(started.effective.at("trainer.precision").find("bf16-mixed (CPU autocast") == 0);
        QVERIFY(std::get<RunFinished>(run.sink.events.back()).test_accuracy > 0.85);
    }

    void checkpointFileIsWrittenToTheArtifactsDir() {
        auto c = blobCsvConfig(csv_);
        c.trainer.max_epochs = 2;
        QTemporaryDir artifacts;
        std::atomic<bool> stop{false};
        Run run;
        runOnce(c, run, stop, artifacts.path().toStdString());
        const auto saves = run.sink.all<CheckpointSaved>();
        QVERIFY(!saves.empty());
        QCOMPARE(QString::fromStdString(saves.back().path), artifacts.filePath("best.pt"));
        QVERIFY(std::filesystem::file_size(saves.back().path) > 1000);
    }

    void cnnLearnsAFashionMnistSubset() {
        if (!std::filesystem::exists(kDefaultFashionMnistPath)) QSKIP("Fashion-MNIST is not installed");
        ExperimentConfig c;
        c.data.limit = 600;
        c.model.name = "cnn";
        c.model.channels = {8, 16};
        c.trainer.max_epochs = 2;
        c.trainer.batch_size = 32;
        c.trainer.num_workers = 2;
        c.trainer.channels_last = true;
        Run run;
        runOnce(c, run);
        QCOMPARE(int(run.outcome.status), int(RunStatus::Completed));
        const auto started = std::get<RunStarted>(run.sink.events.front());
        QCOMPARE(started.class_names.size(), size_t(10));
        QVERIFY(started.effective.at("trainer.channels_last").find("on") == 0);
        const auto done = std::get<RunFinished>(run.sink.events.back());
        QVERIFY2(done.test_accuracy > 0.55, qPrintable(QString("test accuracy %1").arg(done.test_accuracy)));
    }
    // data.on_device trains exactly as the host loader does (same samples, order, augmentation
    // and pixels for the seed) and says where the data lives.
    void dataOnDeviceTrainsExactlyAsTheHostLoader() {
        if (!std::filesystem::exists(kDefaultFashionMnistPath)) QSKIP("Fashion-MNIST is not installed");
        ExperimentConfig c;
        c.data.limit = 600;
        c.data.augment.random_crop_padding = 2;
        c.data.augment.horizontal_flip = true;
        c.model.name = "cnn";
        c.model.channels = {8, 16};
        c.trainer.max_epochs = 2;
        c.trainer.batch_size = 32;
        c.trainer.num_workers = 2;
        c.trainer.deterministic = true;
        c.trainer.log_every_n_steps = 1;
        Run host, resident;
        runOnce(c, host);
        c.data.on_device = true;
        runOnce(c, resident);
        QCOMPARE(int(resident.outcome.status), int(RunStatus::Completed));
        const auto losses = stepLosses(resident.sink);
        QVERIFY(losses.size() > 30);
        QCOMPARE(losses, stepLosses(host.sink));
        QCOMPARE(std::get<RunFinished>(resident.sink.events.back()).test_accuracy,
                 std::get<RunFinished>(host.sink.events.back()).test_accuracy);
        const auto effective = std::get<RunStarted>(resident.sink.events.front()).effective;
        QVERIFY2(effective.at("data.on_device").find("on (") == 0, effective.at("data.on_device").c_str());
        QVERIFY2(effective.at("trainer.num_workers").find("validation and test only") != std::string::npos,
                 effective.at("trainer.num_workers").c_str());
        const std::string host_data = std::get<RunStarted>(host.sink.events.front()).effective.at("data.on_device");
        QVERIFY2(host_data.find("off") == 0, host_data.c_str());   // on a GPU: "off (... normalised on the device)"
    }
};

QTEST_GUILESS_MAIN(TestRunExperiment)
#include "test_run_experiment.moc"
