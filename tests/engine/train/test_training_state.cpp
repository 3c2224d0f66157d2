// TrainingState files: a round trip gives back the model, the optimizer, the random generator
// and the loop's progress exactly (the next steps are bit-identical to never having stopped),
// and a damaged file, one from another model or from a newer Hearth is refused with a message
// while the model and the optimizer stay as they were.

#include "TrainTestSupport.h"
#include "engine/train/StateFiles.h"
#include "engine/train/Trainer.h"
#include "engine/train/TrainingState.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <iterator>

using namespace hearth;
using hearth::testing::RecordingSink;

namespace {

// Linear + batch norm (buffers) + dropout (the random generator): everything a state must carry.
torch::nn::Sequential makeNet(int64_t hidden = 16) {
    torch::manual_seed(3);
    return torch::nn::Sequential(torch::nn::Linear(8, hidden), torch::nn::BatchNorm1d(hidden), torch::nn::ReLU(),
                                 torch::nn::Dropout(0.3), torch::nn::Linear(hidden, 3));
}

// k Adam steps on fixed data; returns each step's loss.
std::vector<float> train(torch::nn::Sequential& net, torch::optim::Optimizer& opt, int steps) {
    std::vector<float> losses;
    const auto x = torch::linspace(-1, 1, int64_t{32} * 8).view({32, 8});
    const auto y = torch::arange(32) % 3;
    net->train();
    for (int i = 0; i < steps; ++i) {
        opt.zero_grad();
        auto loss = torch::nn::functional::cross_entropy(net->forward(x), y);
        loss.backward();
        opt.step();
        losses.push_back(loss.item<float>());
    }
    return losses;
}

std::vector<torch::Tensor> tensorsOf(torch::nn::Sequential& net) {
    std::vector<torch::Tensor> out;
    for (const auto& p : net->parameters()) out.push_back(p.detach().clone());
    for (const auto& b : net->buffers()) out.push_back(b.detach().clone());
    return out;
}

bool sameTensors(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!torch::equal(a[i], b[i])) return false;
    return true;
}

TrainingState someState() {
    TrainingState s;
    s.progress.loop.epoch = 2;
    s.progress.loop.batch_in_epoch = 7;
    s.progress.loop.global_step = 31;
    s.progress.loop.micro_batches = 62;
    s.progress.loop.epochs_completed = 2;
    s.progress.loop.best_value = 0.8125;
    s.progress.loop.best_epoch = 1;
    s.progress.loop.lr = 0.000731;
    s.progress.epoch = {{12.345678901234567, 150, 224, 7}, 224, 1.5e12, 1, 3.25, 0.875};   // local_flops 1.5e12
    s.progress.fit = {20.5, 1800, 1800, 3.25e13, 20.5, 0.75, 0.8125};                     // rank_flops 3.25e13
    s.progress.elapsed_s = 41.0625;
    s.scaler = GradScalerState{32768.0, 17};
    s.callbacks_json = R"({"early_stopping":{"wait":2,"best":0.41}})";
    return s;
}

// Saves the training state at optimizer step `step` (where it can: a logged group boundary),
// then stops the fit: an interruption at an exact point.
class SaveAndStop final : public Callback {
public:
    SaveAndStop(int64_t step, std::string path) : step_(step), path_(std::move(path)) {}
    void onTrainBatchEnd(TrainerContext& ctx) override {
        if (saved_ || ctx.state().global_step < step_) return;
        saved_ = ctx.saveState(path_);
        if (saved_) ctx.requestStop("test interruption");
    }
    bool saved_ = false;

private:
    int64_t step_;
    std::string path_;
};

// Asks the fit to stop after micro-batch `n`.
class StopAfter final : public Callback {
public:
    explicit StopAfter(int64_t n) : n_(n) {}
    void onTrainBatchEnd(TrainerContext& ctx) override {
        if (ctx.state().micro_batches == n_) ctx.requestStop("test interruption");
    }

private:
    int64_t n_;
};

// Asks the run to stop from an epoch's validation, during its pass (after its first batch) or
// once it has ended (an epoch hook), or from the test pass.
class StopInEvaluation final : public Callback {
public:
    enum class When { DuringValidation, AfterValidation, DuringTest };
    StopInEvaluation(int64_t epoch, When when) : epoch_(epoch), when_(when) {}
    void onTestStart(TrainerContext&) override { testing_ = true; }
    void onEvalBatchEnd(TrainerContext& ctx) override {
        const bool during = testing_ ? when_ == When::DuringTest
                                     : when_ == When::DuringValidation && ctx.state().epoch == epoch_;
        if (during) ctx.requestStop("test interruption");
    }
    void onValidationEnd(TrainerContext& ctx, EpochEnd&) override {
        if (when_ == When::AfterValidation && ctx.state().epoch == epoch_) ctx.requestStop("test interruption");
    }

private:
    int64_t epoch_;
    When when_;
    bool testing_ = false;
};

// The run's record once a stopped run is resumed from a state: what the store keeps of the stopped
// fit (runedits::reopenRun: the steps up to the state's, the epochs before its epoch), then the
// resumed fit's events.
RecordingSink storedRecord(const RecordingSink& stopped, const ResumePoint& state, const RecordingSink& resumed) {
    RecordingSink sink;
    for (const auto& e : stopped.all<StepMetrics>())
        if (e.global_step <= state.loop.global_step) sink.events.emplace_back(e);
    for (const auto& e : stopped.all<EpochMetrics>())
        if (e.epoch < state.loop.epoch) sink.events.emplace_back(e);
    for (const auto& e : resumed.events) sink.events.push_back(e);
    return sink;
}

// Every logged step and epoch of `got` equals `whole`'s, bit for bit (check QTest::currentTestFailed).
void compareRecords(const RecordingSink& got, const RecordingSink& whole) {
    const auto steps = got.all<StepMetrics>(), whole_steps = whole.all<StepMetrics>();
    QCOMPARE(steps.size(), whole_steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
        QCOMPARE(steps[i].global_step, whole_steps[i].global_step);
        QCOMPARE(steps[i].epoch, whole_steps[i].epoch);
        QCOMPARE(steps[i].batch, whole_steps[i].batch);
        QCOMPARE(steps[i].loss, whole_steps[i].loss);
        QCOMPARE(steps[i].accuracy, whole_steps[i].accuracy);
        QCOMPARE(steps[i].lr, whole_steps[i].lr);
    }
    const auto epochs = got.all<EpochMetrics>(), whole_epochs = whole.all<EpochMetrics>();
    QCOMPARE(epochs.size(), whole_epochs.size());
    for (size_t i = 0; i < epochs.size(); ++i) {
        QCOMPARE(epochs[i].epoch, whole_epochs[i].epoch);
        QCOMPARE(epochs[i].train_loss, whole_epochs[i].train_loss);
        QCOMPARE(epochs[i].train_accuracy, whole_epochs[i].train_accuracy);
        QCOMPARE(epochs[i].val_loss, whole_epochs[i].val_loss);
        QCOMPARE(epochs[i].val_accuracy, whole_epochs[i].val_accuracy);
        QCOMPARE(epochs[i].is_best, whole_epochs[i].is_best);
    }
}

ExperimentConfig resumeConfig(int64_t workers) {
    ExperimentConfig c;
    c.model.name = "mlp";
    c.model.hidden = {32};
    c.model.dropout = 0.2;                  // the generator matters
    c.optimizer.name = "adam";
    c.optimizer.lr = 0.01;
    c.scheduler.name = "cosine";            // the learning rate follows the step
    c.trainer.max_epochs = 3;
    c.trainer.batch_size = 16;              // 10 micro-batches per epoch
    c.trainer.accumulate_grad_batches = 2;  // 5 optimizer steps per epoch
    c.trainer.num_workers = workers;
    c.trainer.log_every_n_steps = 1;
    c.trainer.deterministic = true;
    return c;
}

}  // namespace

class TestTrainingState : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string path(const char* name) { return dir_.filePath(name).toStdString(); }

private Q_SLOTS:
    void resumedStepsAreBitIdenticalToUninterruptedOnes();
    void progressRoundTripsExactly();
    void damagedFileIsRefusedAndChangesNothing();
    void otherModelIsRefusedNamingTheDifference();
    void newerFormatIsRefused();
    void resumedFitEqualsTheUninterruptedOne_data();
    void resumedFitEqualsTheUninterruptedOne();
    void stateIsOnlyWrittenBetweenSteps();
    void safetyCheckpointsFollowTheirCadenceAndSaveAtAStop();
    void aStopAtAnEpochsEndResumesWithoutLosingIt_data();
    void aStopAtAnEpochsEndResumesWithoutLosingIt();
};

void TestTrainingState::resumedStepsAreBitIdenticalToUninterruptedOnes() {
    // Uninterrupted: 8 steps.
    auto a = makeNet();
    torch::optim::Adam opt_a(a->parameters(), torch::optim::AdamOptions(1e-2));
    torch::manual_seed(11);
    const auto losses_a = train(a, opt_a, 8);

    // Interrupted after 5, saved, then a fresh process-like start: other weights, another
    // generator position, a fresh optimizer, then the state read back and 3 more steps.
    auto b = makeNet();
    torch::optim::Adam opt_b(b->parameters(), torch::optim::AdamOptions(1e-2));
    torch::manual_seed(11);
    auto losses_b = train(b, opt_b, 5);
    TrainingState saved = someState();
    saved.cpu_rng = cpuRngState();
    saveTrainingState(path("state.pt"), saved, *b, opt_b);

    auto c = makeNet();
    torch::optim::Adam opt_c(c->parameters(), torch::optim::AdamOptions(1e-2));
    torch::manual_seed(999);
    (void)torch::rand({100});
    const TrainingState loaded = loadTrainingState(path("state.pt"), *c, opt_c);
    setCpuRngState(loaded.cpu_rng);
    const auto rest = train(c, opt_c, 3);
    losses_b.insert(losses_b.end(), rest.begin(), rest.end());

    QCOMPARE(losses_b, losses_a);                        // every loss, bit for bit
    QVERIFY(sameTensors(tensorsOf(c), tensorsOf(a)));   // weights and batch-norm statistics
}

void TestTrainingState::progressRoundTripsExactly() {
    auto net = makeNet();
    torch::optim::Adam opt(net->parameters());
    const TrainingState saved = someState();
    saveTrainingState(path("progress.pt"), saved, *net, opt);
    const TrainingState back = loadTrainingState(path("progress.pt"), *net, opt);
    QCOMPARE(back.format, int64_t{1});   // one process: the first format
    QVERIFY(back.progress.loop == saved.progress.loop);
    QVERIFY(back.progress.epoch == saved.progress.epoch);
    QVERIFY(back.progress.fit == saved.progress.fit);
    QCOMPARE(back.progress.elapsed_s, saved.progress.elapsed_s);
    QVERIFY(back.progress == saved.progress);
    QVERIFY(back.scaler.has_value());
    QCOMPARE(back.scaler->scale, 32768.0);
    QCOMPARE(back.scaler->growth_tracker, int64_t{17});
    QCOMPARE(QString::fromStdString(back.callbacks_json), QString(R"({"early_stopping":{"wait":2,"best":0.41}})"));
    QVERIFY(back.cpu_rng.defined() && back.cpu_rng.numel() > 0);
    QVERIFY(!QFile::exists(QString::fromStdString(path("progress.pt.partial"))));   // written atomically
}

void TestTrainingState::damagedFileIsRefusedAndChangesNothing() {
    auto net = makeNet();
    torch::optim::Adam opt(net->parameters());
    train(net, opt, 2);
    saveTrainingState(path("good.pt"), someState(), *net, opt);
    std::ifstream in(path("good.pt"), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(path("cut.pt"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    std::ofstream(path("text.pt"), std::ios::binary) << "not a checkpoint at all";

    auto other = makeNet(16);
    torch::optim::Adam other_opt(other->parameters());
    const auto before = tensorsOf(other);
    for (const char* name : {"cut.pt", "text.pt"}) {
        try {
            loadTrainingState(path(name), *other, other_opt);
            QFAIL("a damaged state was accepted");
        } catch (const TrainingStateError& e) {
            QVERIFY2(QString(e.what()).contains("is not a Hearth training state, or it is damaged"), e.what());
            QVERIFY2(QString(e.what()).contains(QString::fromStdString(path(name))), e.what());
        }
        QVERIFY(sameTensors(tensorsOf(other), before));
    }
    try {
        loadTrainingState(path("missing.pt"), *other, other_opt);
        QFAIL("a missing state was accepted");
    } catch (const TrainingStateError& e) {
        QVERIFY2(QString(e.what()).startsWith("There is no training state"), e.what());
    }
}

void TestTrainingState::otherModelIsRefusedNamingTheDifference() {
    auto small = makeNet(16);
    torch::optim::Adam opt(small->parameters());
    saveTrainingState(path("small.pt"), someState(), *small, opt);
    auto wide = makeNet(32);
    torch::optim::Adam wide_opt(wide->parameters());
    const auto before = tensorsOf(wide);
    try {
        loadTrainingState(path("small.pt"), *wide, wide_opt);
        QFAIL("a state of another model was accepted");
    } catch (const TrainingStateError& e) {
        QVERIFY2(QString(e.what()).contains("belongs to another model: the file has 0.weight:16x8 where the model has "
                                            "0.weight:32x8"),
                 e.what());
    }
    QVERIFY(sameTensors(tensorsOf(wide), before));
}

void TestTrainingState::newerFormatIsRefused() {
    auto net = makeNet();
    torch::optim::Adam opt(net->parameters());
    TrainingState future = someState();
    future.format = kTrainingStateFormat + 1;
    saveTrainingState(path("future.pt"), future, *net, opt);
    try {
        loadTrainingState(path("future.pt"), *net, opt);
        QFAIL("a state from a newer Hearth was accepted");
    } catch (const TrainingStateError& e) {
        QVERIFY2(QString(e.what()).contains("was written by a newer Hearth (training state format 3; this Hearth reads "
                                            "up to 2)"),
                 e.what());
    }
}

void TestTrainingState::resumedFitEqualsTheUninterruptedOne_data() {
    QTest::addColumn<int64_t>("workers");
    QTest::addColumn<int64_t>("stop_step");
    QTest::newRow("workers 0, mid-epoch") << int64_t{0} << int64_t{7};
    QTest::newRow("workers 2, mid-epoch") << int64_t{2} << int64_t{7};
    QTest::newRow("workers 2, epoch end") << int64_t{2} << int64_t{10};
}

// A fit stopped at an optimizer step and resumed from its training state (a new Trainer, a new
// model with other weights) ends bit-identical to the same fit never stopped: every logged loss,
// accuracy and learning rate, every epoch's metrics, the final weights and the test result.
void TestTrainingState::resumedFitEqualsTheUninterruptedOne() {
    QFETCH(int64_t, workers);
    QFETCH(int64_t, stop_step);
    const auto c = resumeConfig(workers);
    const auto splits = hearth::testing::blobSplits(160, 48, 48);
    const QString tag = QString("w%1s%2").arg(workers).arg(stop_step);
    std::atomic<bool> no_stop{false};

    RecordingSink whole_sink;
    auto whole_model = hearth::testing::seededModel(c, splits, 5);
    Trainer whole(c, torch::kCPU, whole_model, splits, path(qPrintable(tag + "-whole")), whole_sink, no_stop);
    const FitResult whole_fit = whole.fit();
    const TestResult whole_test = whole.test();
    QVERIFY(!whole_fit.stopped);

    const std::string dir = path(qPrintable(tag + "-cut"));
    const std::string state_path = path(qPrintable(tag + "-state.pt"));
    RecordingSink cut_sink;
    auto model = hearth::testing::seededModel(c, splits, 5);
    TrainerParts parts = defaultTrainerParts(c, torch::kCPU, dir);
    auto save_and_stop = std::make_shared<SaveAndStop>(stop_step, state_path);
    parts.callbacks.push_back(save_and_stop);
    Trainer cut(c, std::move(parts), model, splits, cut_sink, no_stop);
    QVERIFY(cut.fit().stopped);
    QVERIFY(save_and_stop->saved_);

    auto other_model = hearth::testing::seededModel(c, splits, 99);   // other weights: the state must replace them
    torch::manual_seed(1234);                     // another generator position
    RecordingSink resumed_sink;
    Trainer resumed(c, torch::kCPU, other_model, splits, dir, resumed_sink, no_stop);
    const ResumePoint point = resumed.resumeFrom(state_path);
    QCOMPARE(point.loop.global_step, stop_step);
    const FitResult fit = resumed.fit();
    const TestResult test = resumed.test();

    QVERIFY(!fit.stopped);
    QCOMPARE(fit.global_steps, whole_fit.global_steps);
    QCOMPARE(fit.epochs_completed, whole_fit.epochs_completed);
    QCOMPARE(fit.best_val_accuracy, whole_fit.best_val_accuracy);
    const RecordingSink sink = storedRecord(cut_sink, point, resumed_sink);
    compareRecords(sink, whole_sink);
    if (QTest::currentTestFailed()) return;
    const auto steps = sink.all<StepMetrics>();
    QVERIFY(steps[static_cast<size_t>(stop_step)].elapsed_s >= steps[static_cast<size_t>(stop_step) - 1].elapsed_s);
    QVERIFY(torch::equal(hearth::testing::flatWeights(*other_model), hearth::testing::flatWeights(*whole_model)));
    QCOMPARE(test.loss, whole_test.loss);
    QCOMPARE(test.accuracy, whole_test.accuracy);
    // The memory breakdown counts what the resumed fit held, as the whole fit's does (it was
    // measured at global step 0 only: a resumed fit's parameters, gradients and state read 0).
    const MemoryBreakdown& m = resumed.memoryBreakdown();
    const MemoryBreakdown& w = whole.memoryBreakdown();
    QCOMPARE(m.device, w.device);
    QVERIFY(w.parameters_bytes > 0 && w.optimizer_state_bytes > 0);
    QCOMPARE(m.parameters_bytes, w.parameters_bytes);
    QCOMPARE(m.gradients_bytes, w.gradients_bytes);
    QCOMPARE(m.optimizer_state_bytes, w.optimizer_state_bytes);
}

// Inside an accumulation group (partial gradients) or with a step not yet logged, there is no
// consistent state to write: saveState declines.
void TestTrainingState::stateIsOnlyWrittenBetweenSteps() {
    auto c = resumeConfig(0);
    c.trainer.log_every_n_steps = 2;
    const auto splits = hearth::testing::blobSplits(160, 48, 48);
    struct Probe final : Callback {
        std::vector<std::pair<int64_t, bool>> tries;   // (micro-batch, written)
        std::string path;
        void onTrainBatchEnd(TrainerContext& ctx) override {
            if (ctx.state().epoch == 0) tries.emplace_back(ctx.state().batch_in_epoch, ctx.saveState(path));
        }
    };
    auto probe = std::make_shared<Probe>();
    probe->path = path("probe.pt");
    TrainerParts parts = defaultTrainerParts(c, torch::kCPU, "");
    parts.callbacks.push_back(probe);
    RecordingSink sink;
    std::atomic<bool> no_stop{false};
    Trainer trainer(c, std::move(parts), hearth::testing::seededModel(c, splits, 5), splits, sink, no_stop);
    trainer.fit();
    // Micro-batches 2 and 6 close steps 1 and 3 (not logged), 4 and 8 close logged steps 2 and 4,
    // and 10 ends the epoch (logged at its end).
    const std::vector<std::pair<int64_t, bool>> expected = {{1, false}, {2, false}, {3, false}, {4, true},  {5, false},
                                                            {6, false}, {7, false}, {8, true},  {9, false}, {10, true}};
    QCOMPARE(probe->tries, expected);
}

QTEST_GUILESS_MAIN(TestTrainingState)
#include "test_training_state.moc"

// trainer.safety_checkpoint: a state falls due every 4 optimizer steps and is written at the next
// logged step (logging every 3, and at the epoch's end); the last 2 are kept; a stop between two
// logged steps logs the partial interval and saves where it stopped; that state resumes there.
void TestTrainingState::safetyCheckpointsFollowTheirCadenceAndSaveAtAStop() {
    auto c = resumeConfig(0);
    c.trainer.accumulate_grad_batches = 1;   // 10 optimizer steps per epoch
    c.trainer.log_every_n_steps = 3;
    c.trainer.safety_checkpoint.every_n_steps = 4;
    c.trainer.safety_checkpoint.every_n_minutes = 0;
    c.trainer.safety_checkpoint.keep_last = 2;
    const auto splits = hearth::testing::blobSplits(160, 48, 48);
    QTemporaryDir artifacts;
    const std::string dir = artifacts.path().toStdString();
    TrainerParts parts = defaultTrainerParts(c, torch::kCPU, dir);
    parts.callbacks.insert(parts.callbacks.begin(), std::make_shared<StopAfter>(17));
    RecordingSink sink;
    std::atomic<bool> no_stop{false};
    Trainer trainer(c, std::move(parts), hearth::testing::seededModel(c, splits, 5), splits, sink, no_stop);
    QVERIFY(trainer.fit().stopped);
    QCOMPARE(trainer.fitProgress().fit.samples, int64_t{160 + 7 * 16});   // the stopped epoch's part counted

    std::vector<int64_t> saved, removed;
    for (const auto& e : sink.all<CheckpointSaved>()) {
        if (e.kind != "state") continue;
        saved.push_back(trainingStateStep(e.path));
        for (const auto& r : e.removed) removed.push_back(trainingStateStep(r));
    }
    QCOMPARE(saved, (std::vector<int64_t>{6, 10, 15, 17}));
    QCOMPARE(removed, (std::vector<int64_t>{6, 10}));
    const auto files = trainingStatesIn(dir);
    QCOMPARE(files.size(), size_t{2});
    QCOMPARE(trainingStateStep(files[0]), int64_t{17});
    QCOMPARE(trainingStateStep(files[1]), int64_t{15});
    QCOMPARE(sink.all<StepMetrics>().back().global_step, int64_t{17});   // the partial interval was logged

    RecordingSink resumed_sink;
    Trainer resumed(c, torch::kCPU, hearth::testing::seededModel(c, splits, 9), splits, dir, resumed_sink, no_stop);
    const ResumePoint point = resumed.resumeFrom(files[0]);
    QCOMPARE(point.loop.global_step, int64_t{17});
    QCOMPARE(point.loop.epoch, int64_t{1});
    QCOMPARE(point.loop.batch_in_epoch, int64_t{7});
    const FitResult fit = resumed.fit();
    QVERIFY(!fit.stopped);
    QCOMPARE(fit.global_steps, int64_t{30});
    QCOMPARE(resumed_sink.all<StepMetrics>().front().global_step, int64_t{18});
}

void TestTrainingState::aStopAtAnEpochsEndResumesWithoutLosingIt_data() {
    QTest::addColumn<QString>("when");
    QTest::addColumn<int64_t>("epoch");          // of the stop (0-based)
    QTest::addColumn<int64_t>("state_epoch");    // the saved position
    QTest::addColumn<int64_t>("state_batch");
    QTest::addColumn<bool>("early");             // early stopping ends the fit after epoch 1
    QTest::newRow("in the epoch's last step") << QString("last step") << int64_t{1} << int64_t{2} << int64_t{0} << false;
    QTest::newRow("during validation") << QString("during") << int64_t{1} << int64_t{1} << int64_t{10} << false;
    QTest::newRow("after validation") << QString("after") << int64_t{1} << int64_t{2} << int64_t{0} << false;
    QTest::newRow("during the last epoch's validation")
        << QString("during") << int64_t{2} << int64_t{2} << int64_t{10} << false;
    QTest::newRow("after the last epoch") << QString("after") << int64_t{2} << int64_t{3} << int64_t{0} << false;
    QTest::newRow("during the test") << QString("test") << int64_t{2} << int64_t{3} << int64_t{0} << false;
    // Where early stopping ends the fit, the stop's state lies past the last epoch and keeps why.
    QTest::newRow("in the last step, early stopping") << QString("last step") << int64_t{0} << int64_t{3} << int64_t{0}
                                                      << true;
    QTest::newRow("during validation, early stopping")
        << QString("during") << int64_t{0} << int64_t{0} << int64_t{10} << true;
    QTest::newRow("after validation, early stopping") << QString("after") << int64_t{0} << int64_t{3} << int64_t{0}
                                                      << true;
    QTest::newRow("during the test, early stopping") << QString("test") << int64_t{0} << int64_t{3} << int64_t{0}
                                                     << true;
}

// A stop that lands at an epoch's end saves one state there, where the safety checkpoint's clock
// would not: during the epoch's validation, the trained epoch (a resume validates it again); in
// its last step or after its validation, the next epoch's start (a resume neither trains nor
// validates it again); during the test, past the last epoch (a resume only tests). The run the store keeps (the steps up to the state, the epochs before the
// state's) and the resumed fit together equal the fit never stopped.
void TestTrainingState::aStopAtAnEpochsEndResumesWithoutLosingIt() {
    QFETCH(QString, when);
    QFETCH(int64_t, epoch);
    QFETCH(int64_t, state_epoch);
    QFETCH(int64_t, state_batch);
    QFETCH(bool, early);
    auto c = resumeConfig(0);
    c.trainer.accumulate_grad_batches = 1;   // 10 optimizer steps per epoch
    c.trainer.safety_checkpoint.every_n_steps = 0;
    c.trainer.safety_checkpoint.every_n_minutes = 0;   // states only at a stop
    if (early) {
        c.trainer.early_stopping.monitor = "val_acc";
        c.trainer.early_stopping.stop_at = 0.0;   // reached by the first validation
    }
    const auto splits = hearth::testing::blobSplits(160, 48, 48);
    std::atomic<bool> no_stop{false};

    QTemporaryDir whole_dir;
    RecordingSink whole_sink;
    auto whole_model = hearth::testing::seededModel(c, splits, 5);
    Trainer whole(c, torch::kCPU, whole_model, splits, whole_dir.path().toStdString(), whole_sink, no_stop);
    const FitResult whole_fit = whole.fit();
    QVERIFY(!whole_fit.stopped);
    QCOMPARE(whole_fit.epochs_completed, early ? int64_t{1} : int64_t{3});
    QCOMPARE(whole_fit.stop_reason.empty(), !early);
    const TestResult whole_test = whole.test();

    QTemporaryDir artifacts;
    const std::string dir = artifacts.path().toStdString();
    TrainerParts parts = defaultTrainerParts(c, torch::kCPU, dir);
    if (when == "last step")
        parts.callbacks.insert(parts.callbacks.begin(), std::make_shared<StopAfter>((epoch + 1) * 10));
    else
        parts.callbacks.insert(parts.callbacks.begin(),
                               std::make_shared<StopInEvaluation>(epoch, when == "during" ? StopInEvaluation::When::DuringValidation
                                                                         : when == "after" ? StopInEvaluation::When::AfterValidation
                                                                                           : StopInEvaluation::When::DuringTest));
    RecordingSink cut_sink;
    Trainer cut(c, std::move(parts), hearth::testing::seededModel(c, splits, 5), splits, cut_sink, no_stop);
    const FitResult cut_fit = cut.fit();
    QCOMPARE(cut_fit.stopped, when != "test");
    QCOMPARE(cut_fit.epochs_completed, when == "during" ? epoch : epoch + 1);
    QCOMPARE(cut_fit.stop_reason, when == "test" ? whole_fit.stop_reason : std::string());
    // The stopped fit's totals (its samples/s) count every sample it trained on.
    QCOMPARE(cut.fitProgress().fit.samples, (epoch + 1) * 160);
    if (when == "test") QVERIFY(!cut.test().ran);

    // One state, at the stop; no warning that none could be saved.
    std::vector<CheckpointSaved> states;
    for (const auto& e : cut_sink.all<CheckpointSaved>())
        if (e.kind == "state") states.push_back(e);
    QCOMPARE(states.size(), size_t{1});
    QCOMPARE(states.front().epoch, state_epoch);
    for (const auto& line : cut_sink.all<LogLine>())
        QVERIFY2(line.level != LogLine::Level::Warning, line.text.c_str());
    const auto files = trainingStatesIn(dir);
    QCOMPARE(files.size(), size_t{1});
    const int64_t state_step = (epoch + 1) * 10;
    QCOMPARE(trainingStateStep(files.front()), state_step);

    RecordingSink resumed_sink;
    auto model = hearth::testing::seededModel(c, splits, 9);
    Trainer resumed(c, torch::kCPU, model, splits, dir, resumed_sink, no_stop);
    const ResumePoint point = resumed.resumeFrom(files.front());
    QCOMPARE(point.loop.epoch, state_epoch);
    QCOMPARE(point.loop.batch_in_epoch, state_batch);
    QCOMPARE(point.loop.global_step, state_step);
    const FitResult fit = resumed.fit();
    const TestResult test = resumed.test();
    QVERIFY(!fit.stopped);
    QCOMPARE(fit.global_steps, whole_fit.global_steps);
    QCOMPARE(fit.epochs_completed, whole_fit.epochs_completed);
    QCOMPARE(fit.stop_reason, whole_fit.stop_reason);   // early stopping's reason, kept by the state
    QVERIFY(resumed_sink.all<StepMetrics>().empty() == (state_step == whole_fit.global_steps));

    compareRecords(storedRecord(cut_sink, point, resumed_sink), whole_sink);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(fit.best_val_accuracy, whole_fit.best_val_accuracy);
    QVERIFY(torch::equal(hearth::testing::flatWeights(*model), hearth::testing::flatWeights(*whole_model)));
    QCOMPARE(test.loss, whole_test.loss);
    QCOMPARE(test.accuracy, whole_test.accuracy);
}
