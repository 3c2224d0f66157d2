// Trainer on in-memory synthetic data: learning, gradient accumulation equivalence, leftover
// micro-batches, clipping, bf16-mixed on CPU, learning-rate schedules, the best checkpoint and
// early stopping.
#include "TrainTestSupport.h"

#include "engine/TorchCompat.h"
#include "engine/callbacks/BestCheckpoint.h"
#include "engine/callbacks/EarlyStopping.h"
#include "engine/data/Loader.h"
#include "engine/optim/Schedulers.h"
#include "engine/train/Evaluation.h"
#include "engine/train/Trainer.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <filesystem>

using namespace hearth;
using namespace hearth::testing;

namespace {

ExperimentConfig mlpConfig() {
    ExperimentConfig c;
    c.model.name = "mlp";
    c.model.hidden = {16};
    c.model.dropout = 0.0;
    c.optimizer.name = "sgd";
    c.optimizer.lr = 0.1;
    c.optimizer.momentum = 0.9;
    c.trainer.max_epochs = 1;
    c.trainer.batch_size = 64;
    c.trainer.num_workers = 0;
    c.trainer.log_every_n_steps = 1;
    return c;
}

struct FitRun {
    std::shared_ptr<ClassifierImpl> model;
    RecordingSink sink;
    FitResult result;
};

void fitOnce(const ExperimentConfig& c, const DataSplits& s, FitRun& run, const std::string& dir = "") {
    run.model = seededModel(c, s);
    std::atomic<bool> stop{false};
    Trainer trainer(c, torch::kCPU, run.model, s, dir, run.sink, stop);
    run.result = trainer.fit();
}

// Sets `stop` when the loader asks for its Nth batch: a stop at an exact micro-batch.
class StopAtBatch final : public Dataset {
public:
    StopAtBatch(std::shared_ptr<const Dataset> inner, int n, std::atomic<bool>& stop)
        : inner_(std::move(inner)), n_(n), stop_(stop) {}
    int64_t size() const override { return inner_->size(); }
    Sample get(int64_t i) const override { return inner_->get(i); }
    Batch getBatch(const std::vector<int64_t>& indices) const override {
        if (++calls_ == n_) stop_ = true;
        return inner_->getBatch(indices);
    }
    std::vector<int64_t> sampleShape() const override { return inner_->sampleShape(); }
    const std::vector<std::string>& classNames() const override { return inner_->classNames(); }

private:
    std::shared_ptr<const Dataset> inner_;
    int n_;
    std::atomic<bool>& stop_;
    mutable int calls_ = 0;
};

}  // namespace

class TestTrainer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(2); }

    void lossDecreasesOnSeparableData() {
        auto c = mlpConfig();
        c.optimizer.name = "adam";
        c.optimizer.lr = 0.01;
        c.trainer.max_epochs = 3;
        c.trainer.batch_size = 16;
        const auto s = blobSplits(480, 96, 96);
        FitRun run;
        fitOnce(c, s, run);
        const auto steps = run.sink.all<StepMetrics>();
        const auto epochs = run.sink.all<EpochMetrics>();
        QCOMPARE(epochs.size(), size_t(3));
        QCOMPARE(run.result.global_steps, int64_t(3 * 30));
        QVERIFY2(epochs.back().train_loss < 0.5 * steps.front().loss, "training loss did not halve");
        QVERIFY(epochs.back().val_accuracy > 0.9);
        QVERIFY(!run.result.stopped);
        QCOMPARE(steps.back().global_step, int64_t(90));
        QCOMPARE(steps.back().batch, int64_t(30));
    }

    void accumulationMatchesOneLargeBatch() {
        const auto s = blobSplits(128, 32, 32);
        auto big = mlpConfig();
        auto small = mlpConfig();
        small.trainer.batch_size = 16;
        small.trainer.accumulate_grad_batches = 4;
        FitRun a, b;
        fitOnce(big, s, a);
        fitOnce(small, s, b);
        QCOMPARE(a.result.global_steps, int64_t(2));
        QCOMPARE(b.result.global_steps, int64_t(2));
        const double diff = (flatWeights(*a.model) - flatWeights(*b.model)).abs().max().item<double>();
        QVERIFY2(diff < 1e-5, qPrintable(QString("max weight difference %1").arg(diff)));
        // The untrained model differs, so the comparison is not vacuous.
        auto fresh = seededModel(big, s);
        QVERIFY((flatWeights(*fresh) - flatWeights(*a.model)).abs().max().item<double>() > 1e-3);
    }

    void leftoverMicroBatchesMakeASmallerStep() {
        // 80 samples: batch 64 gives steps of 64 and 16; batch 16 x4 gives groups of 4 and 1.
        const auto s = blobSplits(80, 32, 32);
        auto big = mlpConfig();
        auto small = mlpConfig();
        small.trainer.batch_size = 16;
        small.trainer.accumulate_grad_batches = 4;
        FitRun a, b;
        fitOnce(big, s, a);
        fitOnce(small, s, b);
        QCOMPARE(b.result.global_steps, int64_t(2));
        const double diff = (flatWeights(*a.model) - flatWeights(*b.model)).abs().max().item<double>();
        QVERIFY2(diff < 1e-5, qPrintable(QString("max weight difference %1").arg(diff)));
    }

    void stopInsideAccumulationGroupDropsPartialGradients() {
        auto s = blobSplits(128, 32, 32);
        std::atomic<bool> stop{false};
        s.train = std::make_shared<StopAtBatch>(s.train, 6, stop);  // micro-batch 6 of 8; groups of 4
        auto c = mlpConfig();
        c.trainer.batch_size = 16;
        c.trainer.accumulate_grad_batches = 4;
        RecordingSink sink;
        auto model = seededModel(c, s);
        Trainer trainer(c, torch::kCPU, model, s, "", sink, stop);
        const auto result = trainer.fit();
        QVERIFY(result.stopped);
        QCOMPARE(result.global_steps, int64_t(1));  // the second group never stepped
        QCOMPARE(result.epochs_completed, int64_t(0));
        QCOMPARE(sink.count<EpochMetrics>(), 0);
        QCOMPARE(sink.all<StepMetrics>().back().batch, int64_t(6));
        for (const auto& p : model->parameters()) QVERIFY(!p.grad().defined());
        bool logged = false;
        for (const auto& l : sink.all<LogLine>())
            logged = logged || l.text.find("partial gradients") != std::string::npos;
        QVERIFY(logged);
    }

    void gradientClippingBoundsTheUpdate() {
        const auto s = blobSplits(64, 32, 32);
        auto c = mlpConfig();
        c.optimizer.lr = 1.0;
        c.optimizer.momentum = 0.0;
        c.trainer.gradient_clip_val = 0.01;
        FitRun run;
        fitOnce(c, s, run);
        auto fresh = seededModel(c, s);
        const double step_norm = (flatWeights(*run.model) - flatWeights(*fresh)).norm().item<double>();
        QVERIFY2(step_norm <= 0.01 + 1e-6, qPrintable(QString("update norm %1").arg(step_norm)));
        QVERIFY(step_norm > 0.009);
    }

    void bf16MixedTrainsOnCpu() {
        auto c = mlpConfig();
        c.optimizer.name = "adam";
        c.optimizer.lr = 0.01;
        c.trainer.precision = "bf16-mixed";
        c.trainer.max_epochs = 2;
        c.trainer.batch_size = 16;
        const auto s = blobSplits(320, 96, 96);
        FitRun run;
        fitOnce(c, s, run);
        const auto epochs = run.sink.all<EpochMetrics>();
        QCOMPARE(epochs.size(), size_t(2));
        QVERIFY(epochs.back().val_accuracy > 0.85);
        QCOMPARE(run.sink.all<StepMetrics>().back().loss_scale, 0.0);  // bf16 needs no scaler
        for (const auto& p : run.model->parameters()) QCOMPARE(p.scalar_type(), torch::kFloat32);
    }

    void schedulesFollowTheirCurves() {
        SchedulerConfig cos;
        cos.name = "cosine";
        cos.min_lr = 0.1;
        LearningRateSchedule cosine(cos, 1.0, 100);
        QCOMPARE(cosine.lrAt(0, 0), 1.0);
        QVERIFY(qAbs(cosine.lrAt(50, 0) - 0.55) < 1e-12);
        QVERIFY(qAbs(cosine.lrAt(100, 2) - 0.1) < 1e-12);

        SchedulerConfig warm;
        warm.name = "linear-warmup";
        warm.warmup_steps = 10;
        warm.min_lr = 0.0;
        LearningRateSchedule linear(warm, 1.0, 110);
        QVERIFY(qAbs(linear.lrAt(0, 0) - 0.1) < 1e-12);
        QVERIFY(qAbs(linear.lrAt(9, 0) - 1.0) < 1e-12);
        QVERIFY(qAbs(linear.lrAt(60, 0) - 0.5) < 1e-12);
        QVERIFY(qAbs(linear.lrAt(110, 0)) < 1e-12);

        SchedulerConfig st;
        st.name = "step";
        st.step_size = 2;
        st.gamma = 0.5;
        LearningRateSchedule stepped(st, 1.0, 100);
        QCOMPARE(stepped.lrAt(99, 1), 1.0);
        QCOMPARE(stepped.lrAt(0, 2), 0.5);
        QCOMPARE(stepped.lrAt(0, 5), 0.25);

        SchedulerConfig bad;
        bad.name = "exponential";
        QVERIFY_THROWS_EXCEPTION(ConfigError, LearningRateSchedule(bad, 1.0, 1));
    }

    void cosineScheduleCountsOptimizerStepsNotMicroBatches() {
        const auto s = blobSplits(128, 32, 32);
        auto c = mlpConfig();
        c.trainer.batch_size = 16;
        c.trainer.accumulate_grad_batches = 2;
        c.trainer.max_epochs = 2;
        c.scheduler.name = "cosine";
        c.scheduler.min_lr = 0.0;
        FitRun run;
        fitOnce(c, s, run);
        const auto steps = run.sink.all<StepMetrics>();
        QCOMPARE(run.result.global_steps, int64_t(8));  // 8 micro-batches / 2, two epochs
        QCOMPARE(steps.size(), size_t(8));
        // The last of 8 steps has index 7: lr = 0.1 * (1 + cos(pi * 7/8)) / 2.
        QVERIFY(qAbs(steps.back().lr - 0.1 * 0.5 * (1.0 + std::cos(M_PI * 7.0 / 8.0))) < 1e-12);
        QCOMPARE(steps.front().lr, 0.1);
    }

    // Model FLOPs per device: each logged interval and the fit carry the achieved TFLOP/s (the
    // model's count over this rank's time), and no MFU on a CPU (no datasheet peak). Over the fit
    // on one device they are the model's training FLOPs per sample times the samples per second.
    void modelFlopsAreReportedPerDevice() {
        const auto s = blobSplits(256, 32, 32, {16});
        auto c = mlpConfig();
        c.trainer.max_epochs = 2;
        c.trainer.log_every_n_steps = 4;
        RecordingSink sink;
        std::atomic<bool> stop{false};
        auto model = seededModel(c, s);
        Trainer trainer(c, torch::kCPU, model, s, "", sink, stop);
        const FitResult fit = trainer.fit();
        const auto steps = sink.all<StepMetrics>();
        QVERIFY(!steps.empty());
        for (const auto& m : steps) {
            QVERIFY2(m.tflops > 0.0, qPrintable(QString::number(m.tflops)));
            QCOMPARE(m.mfu, -1.0);
        }
        const double per_sample = model->forwardFlops().training(1);
        QCOMPARE(per_sample, 3.0 * 2.0 * (16.0 * 16 + 16.0 * 3));   // 16 features, hidden 16, 3 classes
        QVERIFY(fit.tflops > 0.0);
        QVERIFY2(std::abs(fit.tflops * 1e12 - per_sample * fit.samples_per_sec) <= 1e-9 * fit.tflops * 1e12,
                 qPrintable(QString("%1 vs %2").arg(fit.tflops * 1e12).arg(per_sample * fit.samples_per_sec)));
        QCOMPARE(fit.mfu, -1.0);
    }

    // The best checkpoint keeps no second copy of the model beside it: with a folder the test phase
    // reads best.pt back. The memory breakdown's activations (the counted tensor bytes at the peak
    // beyond parameters, gradients and optimizer state) would otherwise hold a whole model from the
    // second epoch on; here the model is large and the activations of a batch of 8 tiny.
    void bestCheckpointKeepsNoSecondCopyOfTheModel() {
        QTemporaryDir dir;
        const auto s = blobSplits(64, 16, 16, {256});
        auto c = mlpConfig();
        c.model.hidden = {1024, 1024};
        c.optimizer.momentum = 0.0;
        c.trainer.batch_size = 8;
        c.trainer.max_epochs = 2;  // the second epoch trains while the first one is kept as the best
        RecordingSink sink;
        std::atomic<bool> stop{false};
        auto model = seededModel(c, s);
        Trainer trainer(c, torch::kCPU, model, s, dir.path().toStdString(), sink, stop);
        trainer.fit();
        const MemoryBreakdown& m = trainer.memoryBreakdown();
        QCOMPARE(m.device, std::string("cpu"));
        QVERIFY(m.parameters_bytes > 5'000'000);
        QVERIFY2(m.activations_bytes < m.parameters_bytes / 4,
                 qPrintable(QString("activations %1 B, parameters %2 B").arg(m.activations_bytes).arg(m.parameters_bytes)));
        QVERIFY(!sink.all<CheckpointSaved>().empty());
        // The test phase still gets the best weights: best.pt's.
        QVERIFY(trainer.test().ran);
        auto reloaded = seededModel(c, s, 99);
        loadCheckpointFile(dir.filePath("best.pt").toStdString(), *reloaded);
        QVERIFY(torch::equal(flatWeights(*model), flatWeights(*reloaded)));
    }

    void bestCheckpointIsSavedAndUsedForTest() {
        QTemporaryDir dir;
        const auto s = blobSplits(160, 96, 96);
        auto c = mlpConfig();
        c.optimizer.lr = 0.02;
        c.optimizer.momentum = 0.0;
        c.trainer.batch_size = 16;
        c.trainer.max_epochs = 3;
        // "Best" = lowest val accuracy, so the best epoch is not simply the last one.
        c.trainer.checkpoint.mode = "min";
        RecordingSink sink;
        std::atomic<bool> stop{false};
        auto model = seededModel(c, s);
        Trainer trainer(c, torch::kCPU, model, s, dir.path().toStdString(), sink, stop);
        trainer.fit();
        const auto epochs = sink.all<EpochMetrics>();
        const auto saves = sink.all<CheckpointSaved>();
        QVERIFY(!saves.empty());
        QVERIFY(epochs[0].is_best);
        int64_t best_epoch = -1;
        double best = 2.0;
        for (const auto& e : epochs) {
            const bool improves = e.val_accuracy < best;
            QCOMPARE(e.is_best, improves);
            if (improves) {
                best = e.val_accuracy;
                best_epoch = e.epoch;
            }
        }
        // The point of the test: the kept checkpoint is the best epoch, not the last one.
        QVERIFY2(best_epoch != epochs.back().epoch, "the best epoch is the last: choose a config where they differ");
        QCOMPARE(saves.back().epoch, best_epoch);
        QCOMPARE(saves.back().value, best);
        const std::string path = dir.filePath("best.pt").toStdString();
        QVERIFY(std::filesystem::exists(path));
        QCOMPARE(saves.back().bytes, static_cast<int64_t>(std::filesystem::file_size(path)));

        const TestResult tested = trainer.test();
        QVERIFY(tested.ran);
        // A fresh model loaded from best.pt scores exactly what the test phase reported.
        auto reloaded = seededModel(c, s, 99);
        loadCheckpointFile(path, *reloaded);
        LoaderOptions lo;
        lo.shuffle = false;
        lo.batch_size = 16;  // same batches as the test phase, so the float sums match exactly
        Loader loader(s.test, lo);
        SingleDeviceStrategy cpu(torch::kCPU, "32-true");
        cpu.setupModel(*reloaded, false);
        const auto eval = evaluate(*reloaded, loader, *s.test, cpu, ClassificationTask(), false, nullptr);
        QCOMPARE(eval.accuracy, tested.accuracy);
        QVERIFY(qAbs(eval.loss - tested.loss) < 1e-9);
        const auto reports = sink.all<EvalReport>();
        QCOMPARE(QString::fromStdString(reports.back().split), QString("test"));
        QCOMPARE(reports.back().report.accuracy, tested.accuracy);
        const auto preds = sink.all<PredictionsReady>();
        QCOMPARE(preds.size(), size_t(1));
        QCOMPARE(preds[0].predictions.size(), size_t(96));
        // The file also carries the optimizer state.
        torch::serialize::InputArchive archive;
        archive.load_from(path);
        torch::serialize::InputArchive optimizer_part;
        QVERIFY(archive.try_read("optimizer", optimizer_part));
    }

    // Lightning's EarlyStopping rule: `patience` epochs in a row without an improvement larger
    // than min_delta; a non-finite value stops at once.
    void earlyStoppingCountsEpochsWithoutImprovement() {
        EarlyStoppingConfig c;
        c.monitor = "val_loss";
        c.patience = 2;
        c.min_delta = 0.01;
        EarlyStopping loss(c);
        QVERIFY(loss.lowerIsBetter());
        QVERIFY(!loss.observe(1.0, 0));
        QVERIFY(!loss.observe(0.995, 1));   // within min_delta: no improvement (1 of 2)
        QVERIFY(!loss.observe(0.9, 2));     // an improvement resets the count
        QVERIFY(!loss.observe(0.95, 3));    // 1 of 2
        const auto reason = loss.observe(0.91, 4);   // 2 of 2
        QVERIFY(reason.has_value());
        QVERIFY2(reason->find("val_loss did not fall by more than 0.01 for 2 epoch(s); best 0.9 at epoch 3") !=
                     std::string::npos, reason->c_str());

        c.monitor = "val_acc";   // mode auto: higher is better
        c.patience = 1;
        c.min_delta = 0.0;
        EarlyStopping acc(c);
        QVERIFY(!acc.lowerIsBetter());
        QVERIFY(!acc.observe(0.5, 0));
        QVERIFY(!acc.observe(0.6, 1));
        QVERIFY(acc.observe(0.6, 2).has_value());   // equal is not better
        EarlyStopping nan(c);
        const auto stop = nan.observe(std::nan(""), 0);
        QVERIFY(stop && stop->find("is nan") != std::string::npos);

        // A target: stop as soon as it is reached, however the epochs before went.
        EarlyStoppingConfig target;
        target.monitor = "val_acc";
        target.patience = 1000;
        target.stop_at = 0.8;
        EarlyStopping to(target);
        QVERIFY(!to.observe(0.5, 0));
        QVERIFY(!to.observe(0.79, 1));
        const auto reached = to.observe(0.81, 2);
        QVERIFY(reached && reached->find("reached val_acc 0.81 (trainer.early_stopping.stop_at 0.8) at epoch 3") !=
                               std::string::npos);
        target.monitor = "val_loss";
        target.stop_at = 0.3;
        EarlyStopping down(target);
        QVERIFY(!down.observe(0.5, 0));
        QVERIFY(down.observe(0.3, 1).has_value());

        c.mode = "min";
        QVERIFY(EarlyStopping(c).lowerIsBetter());
        c.mode = "sideways";
        QVERIFY_THROWS_EXCEPTION(ConfigError, EarlyStopping{c});
    }

    // A fit that stops early completes: its reason is in the result, fewer epochs ran, and the
    // best checkpoint is still tested.
    void earlyStoppingEndsTheFitAsCompleted() {
        const auto s = blobSplits(160, 96, 96);
        auto c = mlpConfig();
        c.trainer.batch_size = 16;
        c.trainer.max_epochs = 8;
        c.trainer.early_stopping.monitor = "val_acc";
        c.trainer.early_stopping.patience = 2;
        c.trainer.early_stopping.min_delta = 2.0;   // accuracy cannot rise by 2: only epoch 1 counts
        FitRun run;
        fitOnce(c, s, run);
        QVERIFY(!run.result.stopped);
        QCOMPARE(run.result.epochs_completed, int64_t(3));
        QCOMPARE(run.sink.all<EpochMetrics>().size(), size_t(3));
        QVERIFY2(run.result.stop_reason.find("val_acc did not rise by more than 2 for 2 epoch(s); best") !=
                     std::string::npos, run.result.stop_reason.c_str());
        // In the last epoch nothing ends early: no reason recorded, what it saw in the log.
        c.trainer.max_epochs = 3;
        FitRun last;
        fitOnce(c, s, last);
        QVERIFY(!last.result.stopped);
        QCOMPARE(last.result.epochs_completed, int64_t(3));
        QVERIFY2(last.result.stop_reason.empty(), last.result.stop_reason.c_str());
        const auto logs = last.sink.all<LogLine>();
        QVERIFY(std::any_of(logs.begin(), logs.end(), [](const LogLine& l) {
            return l.text.find("did not rise by more than 2 for 2 epoch(s)") != std::string::npos &&
                   l.text.find("in the last epoch: the fit ends here anyway") != std::string::npos;
        }));
        QVERIFY(validate(c, DeviceCapabilities{}).empty());
        c.data.val_fraction = 0.0;
        const auto issues = validate(c, DeviceCapabilities{});
        QVERIFY(std::any_of(issues.begin(), issues.end(),
                            [](const ConfigIssue& i) { return i.key == "trainer.early_stopping.monitor"; }));
    }
};

QTEST_GUILESS_MAIN(TestTrainer)
#include "test_trainer.moc"
