// The Trainer's seams: batches of named tensors of any dtype reach a model that reads them, the
// profiler sees every section of every step in order, callbacks run at their hooks and can stop
// the fit, the loop state round-trips through JSON, the strategy places and steps, and a
// data-parallel run's peak is its largest process's.

#include "TrainTestSupport.h"

#include "engine/callbacks/BestCheckpoint.h"
#include "engine/monitor/Profiler.h"
#include "engine/monitor/DeviceMonitor.h"
#include "engine/strategy/Strategy.h"
#include "engine/train/LoopState.h"
#include "engine/train/RankReport.h"
#include "engine/train/Trainer.h"
#include "engine/train/TrainerParts.h"

#include <QTest>

#include <chrono>
#include <cmath>
#include <map>
#include <thread>
#include <utility>

using namespace hearth;
using namespace hearth::testing;

namespace {

ExperimentConfig smallConfig() {
    ExperimentConfig c;
    c.model.name = "mlp";
    c.model.hidden = {16};
    c.optimizer.name = "adam";
    c.optimizer.lr = 0.01;
    c.trainer.max_epochs = 2;
    c.trainer.batch_size = 16;
    c.trainer.num_workers = 0;
    c.trainer.log_every_n_steps = 2;
    return c;
}

// Token sequences whose class is the token that fills most of them: a text-like batch of
// "tokens" (int64 [B, 12]) and "mask" (bool [B, 12]) besides the label, no "input" at all.
class TokenDataset final : public Dataset {
public:
    static constexpr int64_t kLength = 12, kVocab = 20, kClasses = 4;
    explicit TokenDataset(int64_t n, uint64_t seed) {
        torch::manual_seed(seed);
        labels_ = torch::randint(kClasses, {n}, torch::kInt64);
        tokens_ = torch::randint(kClasses, kVocab, {n, kLength}, torch::kInt64);
        const auto keep = torch::rand({n, kLength}) < 0.6;
        tokens_ = torch::where(keep, labels_.unsqueeze(1).expand({n, kLength}), tokens_);
        lengths_ = torch::randint(6, kLength + 1, {n}, torch::kInt64);
        for (int64_t c = 0; c < kClasses; ++c) names_.push_back("t" + std::to_string(c));
    }
    int64_t size() const override { return labels_.size(0); }
    Sample get(int64_t i) const override { return Sample{tokens_[i].to(torch::kFloat32), labels_[i].item<int64_t>()}; }
    Batch getBatch(const std::vector<int64_t>& indices) const override {
        const auto idx = torch::tensor(indices, torch::kInt64);
        Batch b;
        b.indices = idx;
        b.set("tokens", tokens_.index_select(0, idx));
        b.set("mask", torch::arange(kLength).unsqueeze(0) < lengths_.index_select(0, idx).unsqueeze(1));
        b.set(Batch::kLabel, labels_.index_select(0, idx));
        return b;
    }
    std::vector<int64_t> sampleShape() const override { return {kLength}; }
    const std::vector<std::string>& classNames() const override { return names_; }

private:
    torch::Tensor tokens_, labels_, lengths_;
    std::vector<std::string> names_;
};

// Mean of the embeddings of the unmasked tokens, then a linear layer.
class BagOfTokens final : public ClassifierImpl {
public:
    BagOfTokens() {
        embedding_ = register_module("embedding", torch::nn::Embedding(TokenDataset::kVocab, 8));
        head_ = register_module("head", torch::nn::Linear(8, TokenDataset::kClasses));
    }
    torch::Tensor forward(torch::Tensor) override { throw std::logic_error("BagOfTokens reads tokens and mask"); }
    torch::Tensor forwardBatch(const Batch& batch) override {
        ++batches_seen;
        const auto& tokens = batch.at("tokens");
        const auto mask = batch.at("mask").to(torch::kFloat32).unsqueeze(2);
        const auto pooled = (embedding_->forward(tokens) * mask).sum(1) / mask.sum(1).clamp_min(1.0);
        return head_->forward(pooled);
    }
    int batches_seen = 0;

private:
    torch::nn::Embedding embedding_{nullptr};
    torch::nn::Linear head_{nullptr};
};

// Records the order of profiler sections.
class RecordingProfiler final : public Profiler {
public:
    std::vector<std::pair<Section, bool>> events;  // (section, begin?)
    int open = 0;
    bool nested = false;
    void begin(Section s) override {
        nested = nested || open != 0;
        ++open;
        events.emplace_back(s, true);
    }
    void end(Section s) override {
        --open;
        events.emplace_back(s, false);
    }
    int count(Section s) const {
        int n = 0;
        for (const auto& [section, begin] : events) n += (section == s && begin) ? 1 : 0;
        return n;
    }
};

// Counts hooks; optionally stops after a given batch or epoch.
class HookCounter final : public Callback {
public:
    std::map<std::string, int> calls;
    int64_t stop_after_batch = -1;  // global micro-batch count
    int64_t stop_after_epoch = -1;
    std::vector<int64_t> batch_positions;
    void onFitStart(TrainerContext&) override { ++calls["fit_start"]; }
    void onTrainEpochStart(TrainerContext&) override { ++calls["epoch_start"]; }
    void onTrainBatchEnd(TrainerContext& ctx) override {
        ++calls["batch_end"];
        batch_positions.push_back(ctx.state().batch_in_epoch);
        if (ctx.state().micro_batches == stop_after_batch) ctx.requestStop("test callback, batch");
    }
    void onValidationEnd(TrainerContext& ctx, EpochEnd& end) override {
        ++calls["validation_end"];
        QVERIFY(end.has_val);
        if (ctx.state().epoch == stop_after_epoch) ctx.requestStop("test callback, epoch");
    }
    void onFitEnd(TrainerContext&) override { ++calls["fit_end"]; }
    void onTestStart(TrainerContext&) override { ++calls["test_start"]; }
};

// Takes its time after each validation, as a slow checkpoint save or a long validation does.
class SlowEpochEnd final : public Callback {
public:
    void onValidationEnd(TrainerContext&, EpochEnd&) override {
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
    }
};

// A strategy that records what the loop asks of it: metric reductions and stop agreements.
class RecordingStrategy final : public Strategy {
public:
    RecordingStrategy() : Strategy(std::make_unique<Precision>("32-true", torch::kCPU)) {}
    std::string name() const override { return "recording"; }
    std::string describe() const override { return "recording (cpu)"; }
    torch::Device device() const override { return torch::kCPU; }
    // As if a second rank had seen as many samples, all classified right, at zero loss.
    void reduceSum(std::vector<double>& values) const override {
        reductions.push_back(values);
        values[1] += values[2];
        values[2] *= 2;
    }
    bool agreeToStop(bool local) const override {
        ++agreements;
        return local;
    }
    mutable std::vector<std::vector<double>> reductions;
    mutable int agreements = 0;
};

// Skips every third optimizer step, as a GradScaler does on inf/NaN gradients.
class SkippingStrategy final : public Strategy {
public:
    SkippingStrategy() : Strategy(std::make_unique<Precision>("32-true", torch::kCPU)) {}
    std::string name() const override { return "skipping"; }
    std::string describe() const override { return "skipping (cpu)"; }
    torch::Device device() const override { return torch::kCPU; }
    void optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) override {
        if (++calls % 3 != 0) {
            Strategy::optimizerStep(optimizer, clip_val);
            return;
        }
        optimizer.zero_grad();
        ++skipped;
    }
    // Read, as the GradScaler's count is, only when the Trainer asks (at its logged steps).
    int64_t takeSkippedSteps() override { return std::exchange(skipped, 0); }
    int calls = 0;
    int64_t skipped = 0;
};

// Rank 0 of a world of two whose other rank reports every figure `scale` times rank 0's (a
// stand-in for the gathers, to decide which process is larger without two processes).
class TwoRankStrategy final : public Strategy {
public:
    explicit TwoRankStrategy(double scale) : Strategy(std::make_unique<Precision>("32-true", torch::kCPU)), scale_(scale) {}
    std::string name() const override { return "two ranks"; }
    std::string describe() const override { return "two ranks (cpu)"; }
    torch::Device device() const override { return torch::kCPU; }
    int64_t worldSize() const override { return 2; }
    std::vector<torch::Tensor> gatherRows(const torch::Tensor& rows) const override { return {rows, rows * scale_}; }

private:
    double scale_;
};

}  // namespace

class TestTrainerSeams : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(2); }

    // The step the Trainer and the finders' trials share: a micro-batch of a group of two
    // backpropagates half its loss, counts its samples, and calls the phase hook after forward
    // and after backward (where a batch-size trial checks its memory).
    void trainingStepScalesBackwardToItsGroupAndCallsThePhaseHook() {
        auto c = smallConfig();
        torch::manual_seed(5);
        auto model = createModel(c.model, ModelInput{{8}, 3});
        SingleDeviceStrategy strategy(torch::kCPU, "32-true");
        strategy.setupModel(*model, false);
        const ClassificationTask task;
        const Batch batch(torch::randn({4, 8}), torch::tensor({0, 1, 2, 0}, torch::kInt64), torch::arange(4));
        MetricsLogger metrics;
        std::vector<Section> phases;
        TrainingStep step(strategy, *model, task);
        torch::manual_seed(11);   // the same dropout masks in both passes
        const torch::Tensor loss =
            step.microBatch(batch, 2, false, metrics, [&phases](Section ended) { phases.push_back(ended); });
        QCOMPARE(phases, (std::vector<Section>{Section::Forward, Section::Backward}));
        QCOMPARE(metrics.intervalTotals().samples, int64_t(4));
        std::vector<torch::Tensor> halves;
        for (const auto& p : model->parameters()) halves.push_back(p.grad().clone());
        model->zero_grad();
        torch::manual_seed(11);
        task.loss(strategy.forward(*model, batch), batch).backward();
        size_t i = 0;
        for (const auto& p : model->parameters()) QVERIFY(torch::allclose(halves[i++] * 2, p.grad(), 1e-6, 1e-7));
        QVERIFY(std::abs(loss.item<double>() * 4 - metrics.intervalTotals().loss_sum) < 1e-9);
    }

    void skippedOptimizerStepsAreCountedPerLoggedInterval() {
        auto c = smallConfig();
        c.trainer.log_every_n_steps = 2;
        const auto s = blobSplits(160, 32, 32);  // 10 optimizer steps per epoch, 2 epochs
        auto parts = defaultTrainerParts(c, torch::kCPU, "");
        parts.strategy = std::make_unique<SkippingStrategy>();
        RecordingSink sink;
        std::atomic<bool> stop{false};
        Trainer trainer(c, std::move(parts), createModel(c.model, ModelInput{{8}, 3}), s, sink, stop);
        trainer.fit();
        // Steps 3, 6, 9, ... were skipped: each logged interval (2 steps) counts its own.
        int64_t logged = 0, last_step = 0;
        for (const auto& m : sink.all<StepMetrics>()) {
            int64_t expected = 0;
            for (int64_t step = last_step + 1; step <= m.global_step; ++step) expected += step % 3 == 0 ? 1 : 0;
            QCOMPARE(m.skipped_steps, expected);
            logged += m.skipped_steps;
            last_step = m.global_step;
        }
        QCOMPARE(last_step, int64_t(20));
        QCOMPARE(logged, int64_t(6));
        int64_t per_epoch = 0;
        for (const auto& e : sink.all<EpochMetrics>()) per_epoch += e.skipped_steps;
        QCOMPARE(per_epoch, logged);
    }

    void batchFieldsOfAnyDtypeReachTheModel() {
        DataSplits s;
        s.train = std::make_shared<TokenDataset>(640, 1);
        s.val = std::make_shared<TokenDataset>(160, 2);
        s.test = std::make_shared<TokenDataset>(160, 3);
        s.class_names = s.train->classNames();
        auto c = smallConfig();
        c.trainer.max_epochs = 4;
        torch::manual_seed(3);
        auto model = std::make_shared<BagOfTokens>();
        RecordingSink sink;
        std::atomic<bool> stop{false};
        Trainer trainer(c, torch::kCPU, model, s, "", sink, stop);
        const auto fit = trainer.fit();
        const auto test = trainer.test();
        QVERIFY(!fit.stopped);
        // Every train, validation and test batch went through forwardBatch (40 + 10 per epoch, 10).
        QCOMPARE(model->batches_seen, 4 * (40 + 10) + 10);
        QVERIFY2(test.accuracy > 0.9, qPrintable(QString("test accuracy %1").arg(test.accuracy)));
        QCOMPARE(sink.all<PredictionsReady>().back().predictions.size(), size_t(160));
    }

    void missingFieldNamesWhatTheBatchHas() {
        Batch b(torch::zeros({2, 3}), torch::zeros({2}, torch::kInt64), torch::arange(2));
        QVERIFY(b.has("input") && b.has("label") && !b.has("tokens"));
        QCOMPARE(b.size(), int64_t(2));
        try {
            b.at("tokens");
            QFAIL("no exception");
        } catch (const std::out_of_range& e) {
            QCOMPARE(QString(e.what()), QString("the batch has no field 'tokens' (it has: input, label)"));
        }
        b.set("input", torch::ones({2, 3}));
        QCOMPARE(b.fields().size(), size_t(2));
        QCOMPARE(b.input().sum().item<double>(), 6.0);
    }

    void strategyKeepsDtypesAndAppliesTheImageLayout() {
        SingleDeviceStrategy cpu(torch::kCPU, "32-true");
        ExperimentConfig c;
        c.model.name = "cnn";
        c.model.channels = {4};
        auto cnn = createModel(c.model, ModelInput{{3, 8, 8}, 3});
        cpu.setupModel(*cnn, /*channels_last=*/true);
        QVERIFY(cpu.channelsLast());
        Batch b;
        b.set("input", torch::randn({2, 3, 8, 8}));
        b.set("mask", torch::ones({2, 8}, torch::kBool));
        b.set("label", torch::zeros({2}, torch::kInt64));
        const Batch d = cpu.toDevice(b, false);
        QVERIFY(d.input().is_contiguous(at::MemoryFormat::ChannelsLast));
        QVERIFY(!b.input().is_contiguous(at::MemoryFormat::ChannelsLast));
        QCOMPARE(d.at("mask").scalar_type(), torch::kBool);
        QCOMPARE(d.label().scalar_type(), torch::kInt64);
        // An MLP has no convolutions: the layout request has no effect.
        SingleDeviceStrategy other(torch::kCPU, "32-true");
        auto mlp = createModel(smallConfig().model, ModelInput{{8}, 3});
        other.setupModel(*mlp, true);
        QVERIFY(!other.channelsLast());
    }

    void profilerBracketsEverySectionOfEveryStep() {
        auto c = smallConfig();
        c.trainer.accumulate_grad_batches = 2;
        const auto s = blobSplits(160, 32, 32);  // 10 micro-batches, 5 optimizer steps per epoch
        auto parts = defaultTrainerParts(c, torch::kCPU, "");
        RecordingProfiler profiler;
        parts.profiler = &profiler;
        RecordingSink sink;
        std::atomic<bool> stop{false};
        Trainer trainer(c, std::move(parts), createModel(c.model, ModelInput{{8}, 3}), s, sink, stop);
        const auto fit = trainer.fit();
        QCOMPARE(fit.global_steps, int64_t(10));
        QVERIFY(!profiler.nested);
        QCOMPARE(profiler.open, 0);
        QCOMPARE(profiler.count(Section::Forward), 20);
        QCOMPARE(profiler.count(Section::Backward), 20);
        QCOMPARE(profiler.count(Section::HostToDevice), 20);
        QCOMPARE(profiler.count(Section::DataWait), 22);  // and once per epoch for the end
        QCOMPARE(profiler.count(Section::OptimizerStep), 10);
        // One sync per StepMetrics (every 2nd optimizer step and each epoch's end).
        QCOMPARE(profiler.count(Section::Sync), static_cast<int>(sink.count<StepMetrics>()));
        // Within a micro-batch: wait, copy, forward, backward, then the step closing a group.
        std::vector<Section> begins;
        for (const auto& [section, begin] : profiler.events)
            if (begin) begins.push_back(section);
        const std::vector<Section> micro{Section::DataWait, Section::HostToDevice, Section::Forward, Section::Backward};
        std::vector<Section> first;
        for (int group = 0; group < 2; ++group) {
            first.insert(first.end(), micro.begin(), micro.end());
            first.insert(first.end(), micro.begin(), micro.end());
            first.push_back(Section::OptimizerStep);
        }
        first.push_back(Section::Sync);  // log_every_n_steps 2
        QVERIFY(std::equal(first.begin(), first.end(), begins.begin()));
        WallClockProfiler clock;
        clock.begin(Section::Forward);
        clock.end(Section::Forward);
        QCOMPARE(clock.totals(Section::Forward).count, int64_t(1));
        QCOMPARE(QString(sectionName(Section::HostToDevice)), QString("host_to_device"));
    }

    void callbacksRunAtTheirHooks() {
        auto c = smallConfig();
        const auto s = blobSplits(64, 32, 32);  // 4 micro-batches per epoch
        auto parts = defaultTrainerParts(c, torch::kCPU, "");
        auto counter = std::make_shared<HookCounter>();
        parts.callbacks.push_back(counter);
        RecordingSink sink;
        std::atomic<bool> stop{false};
        Trainer trainer(c, std::move(parts), createModel(c.model, ModelInput{{8}, 3}), s, sink, stop);
        trainer.fit();
        trainer.test();
        QCOMPARE(counter->calls["fit_start"], 1);
        QCOMPARE(counter->calls["epoch_start"], 2);
        QCOMPARE(counter->calls["batch_end"], 8);
        QCOMPARE(counter->calls["validation_end"], 2);
        QCOMPARE(counter->calls["fit_end"], 1);
        QCOMPARE(counter->calls["test_start"], 1);
        QCOMPARE(counter->batch_positions, (std::vector<int64_t>{1, 2, 3, 4, 1, 2, 3, 4}));
    }

    // A logged step's samples/s, step time and TFLOP/s cover training only: the time between
    // epochs (validation, checkpoints) is not in the first step after it. It was: the throughput
    // plot dipped to a quarter at every epoch's start.
    void theTimeBetweenEpochsIsNotInTheNextStepsSpeed() {
        auto c = smallConfig();
        c.trainer.max_epochs = 3;
        c.trainer.log_every_n_steps = 1;
        const auto s = blobSplits(64, 32, 32);  // 4 micro-batches per epoch
        auto parts = defaultTrainerParts(c, torch::kCPU, "");
        parts.callbacks.push_back(std::make_shared<SlowEpochEnd>());
        RecordingSink sink;
        std::atomic<bool> stop{false};
        Trainer trainer(c, std::move(parts), createModel(c.model, ModelInput{{8}, 3}), s, sink, stop);
        trainer.fit();
        const auto steps = sink.all<StepMetrics>();
        QCOMPARE(steps.size(), size_t{12});
        for (const auto& m : steps) {
            // A step of 16 samples through a 16-unit MLP: well under a millisecond; 400 ms after
            // each validation.
            QVERIFY2(m.step_time_ms < 200.0, qPrintable(QString("step %1 (epoch %2, batch %3): %4 ms")
                                                            .arg(m.global_step).arg(m.epoch).arg(m.batch)
                                                            .arg(m.step_time_ms)));
            QVERIFY2(m.samples_per_sec > 16 / 0.2, qPrintable(QString::number(m.samples_per_sec)));
        }
        // The fit's clock still counts it: the ETA and the elapsed time are wall time.
        QVERIFY(steps.back().elapsed_s > 0.8);
    }

    void aCallbackCanStopMidEpochOrAfterAnEpoch() {
        auto c = smallConfig();
        c.trainer.max_epochs = 5;
        const auto s = blobSplits(64, 32, 32);
        for (const bool at_epoch : {false, true}) {
            auto parts = defaultTrainerParts(c, torch::kCPU, "");
            auto counter = std::make_shared<HookCounter>();
            if (at_epoch) {
                counter->stop_after_epoch = 1;  // early stopping's shape: after epoch 2 validates
            } else {
                counter->stop_after_batch = 6;  // the 2nd micro-batch of epoch 2
            }
            parts.callbacks.push_back(counter);
            RecordingSink sink;
            std::atomic<bool> stop{false};
            Trainer trainer(c, std::move(parts), createModel(c.model, ModelInput{{8}, 3}), s, sink, stop);
            const auto fit = trainer.fit();
            QVERIFY(fit.stopped);
            QVERIFY(!stop.load());  // the owner's flag is untouched
            QCOMPARE(fit.epochs_completed, at_epoch ? int64_t(2) : int64_t(1));
            QCOMPARE(sink.count<EpochMetrics>(), at_epoch ? 2 : 1);
            QCOMPARE(trainer.loopState().micro_batches, at_epoch ? int64_t(8) : int64_t(6));
            bool logged = false;
            for (const auto& l : sink.all<LogLine>()) logged = logged || l.text.rfind("stopping: test callback", 0) == 0;
            QVERIFY(logged);
        }
    }

    void metricsAreReducedAndStopsAgreedThroughTheStrategy() {
        auto c = smallConfig();
        const auto s = blobSplits(64, 32, 32);  // 4 micro-batches per epoch, 2 epochs
        auto parts = defaultTrainerParts(c, torch::kCPU, "");
        auto strategy = std::make_unique<RecordingStrategy>();
        auto* recorded = strategy.get();
        parts.strategy = std::move(strategy);
        RecordingSink sink;
        std::atomic<bool> stop{false};
        Trainer trainer(c, std::move(parts), createModel(c.model, ModelInput{{8}, 3}), s, sink, stop);
        trainer.fit();
        // Every logged interval went through reduceSum: its local samples add up to the epochs'.
        QCOMPARE(recorded->reductions.size(), static_cast<size_t>(sink.count<StepMetrics>()));
        double samples = 0;
        for (const auto& r : recorded->reductions) samples += r.at(2);
        QCOMPARE(samples, 2.0 * 64);
        // The logged figures are the reduced ones, interval by interval.
        const auto steps = sink.all<StepMetrics>();
        for (size_t i = 0; i < steps.size(); ++i) {
            const auto& r = recorded->reductions[i];
            QVERIFY(std::abs(steps[i].loss - r[0] / (2 * r[2])) < 1e-12);
            QVERIFY(std::abs(steps[i].accuracy - (r[1] + r[2]) / (2 * r[2])) < 1e-12);
        }
        // After every micro-batch and at each epoch end (twice: before validation, after callbacks),
        // plus once per validation batch.
        QVERIFY2(recorded->agreements >= 8 + 2 * 2, qPrintable(QString::number(recorded->agreements)));
    }

    void loopStateTracksTheFitAndRoundTrips() {
        auto c = smallConfig();
        c.trainer.max_epochs = 3;
        c.trainer.checkpoint.monitor = "val_loss";
        c.trainer.checkpoint.mode = "min";
        const auto s = blobSplits(64, 32, 32);
        RecordingSink sink;
        std::atomic<bool> stop{false};
        Trainer trainer(c, torch::kCPU, createModel(c.model, ModelInput{{8}, 3}), s, "", sink, stop);
        trainer.fit();
        const LoopState& st = trainer.loopState();
        QCOMPARE(st.epochs_completed, int64_t(3));
        QCOMPARE(st.global_step, int64_t(12));
        QCOMPARE(st.micro_batches, int64_t(12));
        QCOMPARE(st.batch_in_epoch, int64_t(4));
        QVERIFY(st.best_value.has_value());
        const auto epochs = sink.all<EpochMetrics>();
        double best = epochs.front().val_loss;
        int64_t best_epoch = 0;
        for (const auto& e : epochs)
            if (e.val_loss < best) best = e.val_loss, best_epoch = e.epoch;
        QCOMPARE(st.best_epoch, best_epoch);
        QCOMPARE(*st.best_value, best);

        const LoopState back = loopStateFromJson(loopStateToJson(st));
        QVERIFY(back == st);
        LoopState early = st;
        early.finish_reason = "reached val_acc 0.9 (trainer.early_stopping.stop_at 0.9) at epoch 3";
        QCOMPARE(loopStateFromJson(loopStateToJson(early)).finish_reason, early.finish_reason);
        QVERIFY(!(loopStateFromJson(loopStateToJson(early)) == st));
        LoopState none;
        QVERIFY(!loopStateFromJson(loopStateToJson(none)).best_value.has_value());
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, loopStateFromJson("{\"epoch\": 1}"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, loopStateFromJson("[1,2]"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, loopStateFromJson("not json"));
    }

    // The run's peak is what has to fit: the largest process's, whichever rank that is; each
    // rank's own figures go out as its RankSummary.
    void reportRanksReturnsTheLargestProcesssPeak() {
        const DeviceMonitor monitor(torch::kCPU);
        RankTotals local;
        local.samples = 640;
        local.train_time_s = 2.0;
        local.peak_memory_bytes = int64_t{300} << 20;
        local.gradients_bytes = int64_t{12} << 20;
        local.optimizer_state_bytes = int64_t{24} << 20;
        for (const double scale : {1.5, 0.5}) {
            RecordingSink sink;
            const int64_t peak = reportRanks(TwoRankStrategy(scale), monitor, local, sink);
            const auto ranks = sink.all<RankSummary>();
            QCOMPARE(ranks.size(), size_t(2));
            QCOMPARE(ranks[0].peak_memory_bytes, local.peak_memory_bytes);
            QCOMPARE(ranks[1].peak_memory_bytes, static_cast<int64_t>(local.peak_memory_bytes * scale));
            QCOMPARE(ranks[1].optimizer_state_bytes, static_cast<int64_t>(local.optimizer_state_bytes * scale));
            QCOMPARE(ranks[1].rank, int64_t(1));
            QCOMPARE(ranks[1].world_size, int64_t(2));
            QCOMPARE(peak, std::max(ranks[0].peak_memory_bytes, ranks[1].peak_memory_bytes));
        }
        // In a world of one nothing is gathered or reported: the peak is the process's own.
        RecordingSink alone;
        QCOMPARE(reportRanks(SingleDeviceStrategy(torch::kCPU, "32-true"), monitor, local, alone),
                 local.peak_memory_bytes);
        QCOMPARE(alone.count<RankSummary>(), 0);
    }

    void strategyWatchesLossesExceptUnderLossScaling() {
        SingleDeviceStrategy cpu(torch::kCPU, "32-true");
        auto mlp = createModel(smallConfig().model, ModelInput{{8}, 3});
        cpu.setupModel(*mlp, false);
        QVERIFY(!cpu.watchLoss(torch::tensor(1.5), 1));
        QCOMPARE(cpu.firstNonFiniteStep(), int64_t(0));
        QVERIFY(cpu.watchLoss(torch::tensor(std::nan("")), 2));
        QVERIFY(!cpu.watchLoss(torch::tensor(1.0), 3));
        QVERIFY(cpu.watchLoss(torch::tensor(INFINITY), 4));  // the first bad step stays recorded
        QCOMPARE(cpu.firstNonFiniteStep(), int64_t(2));
        QCOMPARE(QString::fromStdString(cpu.describe()), QString("single device (cpu)"));
        ExperimentConfig c;
        c.trainer.devices = 2;
        QVERIFY_THROWS_EXCEPTION(ConfigError, createStrategy(c.trainer, torch::kCPU));
    }
};

QTEST_GUILESS_MAIN(TestTrainerSeams)
#include "test_trainer_seams.moc"
