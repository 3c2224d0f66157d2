// The technique ladder: each step adds one technique to the previous one, on what the device does well.
#include "engine/ladder/LadderPlan.h"
#include "engine/ladder/TechniqueLadder.h"

#include <set>

#include <QTest>

using namespace hearth;

namespace {

std::set<std::string> idsWhere(const std::vector<LadderRung>& rungs, bool (*pick)(const LadderRung&)) {
    std::set<std::string> ids;
    for (const auto& r : rungs)
        if (pick(r)) ids.insert(r.id);
    return ids;
}
bool applies(const LadderRung& r) { return r.applies; }
bool onByDefault(const LadderRung& r) { return r.default_on; }

// A CUDA build with c10d on a machine with two Ampere-or-later GPUs: every GPU rung applies.
DeviceCapabilities twoModernGpus() {
    DeviceCapabilities caps;
    caps.cuda_available = true;
    caps.cuda_device_count = 2;
    caps.cuda_bf16 = true;
    caps.distributed = true;
    caps.fused_optimizers = true;
    caps.cuda_graphs = true;
    return caps;
}

}  // namespace

class TestTechniqueLadder : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void cpuLadderUsesBf16AndAddsWorkers() {
        ExperimentConfig base;
        base.trainer.precision = "bf16-mixed";   // the baseline resets it
        base.trainer.num_workers = 4;
        const auto steps = buildTechniqueLadder(base, DeviceCapabilities{});
        QCOMPARE(steps.size(), size_t(3));
        QCOMPARE(QString::fromStdString(steps[0].config.trainer.precision), QString("32-true"));
        QCOMPARE(steps[0].config.trainer.num_workers, int64_t(0));
        QCOMPARE(QString::fromStdString(steps[1].config.trainer.precision), QString("bf16-mixed"));
        QCOMPARE(steps[1].config.trainer.num_workers, int64_t(0));
        QCOMPARE(QString::fromStdString(steps[2].config.trainer.precision), QString("bf16-mixed"));
        QCOMPARE(steps[2].config.trainer.num_workers, int64_t(2));
        QVERIFY(steps[2].config.trainer.persistent_workers);
        for (const auto& s : steps) QVERIFY2(validate(s.config, DeviceCapabilities{}).empty(), s.label.c_str());
    }

    // A probe's outcome settles its step: fits -> runs; predicted over the capacity or out of memory
    // in the probe -> not run with why, a speed rung left out of the later steps (the workers step
    // keeps 32-true once bf16 is gone), a memory step's toggles kept; the speed baseline refused; a
    // probe that failed otherwise leaves the step to run.
    void probeOutcomesSettleTheStep() {
        FootprintPrediction fits;
        fits.fits = true;
        FootprintPrediction over;
        over.fits = false;
        over.batch_size = 64;
        over.capacity = "the memory given (1.0 MiB)";
        auto steps = buildTechniqueLadder(ExperimentConfig{}, DeviceCapabilities{});
        QCOMPARE(settleLadderPrediction(steps, 0, LadderKind::Speed, fits, ""), LadderProbeOutcome::Run);
        QVERIFY(steps[0].prediction && steps[0].not_run.empty());
        QCOMPARE(settleLadderPrediction(steps, 1, LadderKind::Speed, over, ""), LadderProbeOutcome::NotRun);
        QVERIFY2(QString::fromStdString(steps[1].not_run).contains("> the memory given (1.0 MiB)"), steps[1].not_run.c_str());
        QVERIFY(!steps[1].kept);
        QCOMPARE(QString::fromStdString(steps[2].config.trainer.precision), QString("32-true"));
        QCOMPARE(settleLadderPrediction(steps, 2, LadderKind::Speed, std::nullopt, "cannot read the data"),
                 LadderProbeOutcome::Run);
        QVERIFY(steps[2].not_run.empty() && !steps[2].prediction);

        auto speed = buildTechniqueLadder(ExperimentConfig{}, DeviceCapabilities{});
        const std::string oom = std::string("the probe at batch 32 ") + kFootprintOutOfMemory + ": the run will not fit";
        QCOMPARE(settleLadderPrediction(speed, 0, LadderKind::Speed, std::nullopt, oom), LadderProbeOutcome::Refused);
        QCOMPARE(speed[0].not_run, oom);

        LadderOptions memory_options;
        memory_options.kind = LadderKind::Memory;
        auto memory = buildTechniqueLadder(ExperimentConfig{}, DeviceCapabilities{}, memory_options);
        const auto later = configToJson(memory[2].config);
        QCOMPARE(settleLadderPrediction(memory, 1, LadderKind::Memory, over, ""), LadderProbeOutcome::NotRun);
        QVERIFY(memory[1].kept);
        QCOMPARE(configToJson(memory[2].config), later);   // the memory ladder's later steps keep its toggle
        QCOMPARE(settleLadderPrediction(memory, 0, LadderKind::Memory, over, ""), LadderProbeOutcome::NotRun);
    }

    void gpuWithoutBf16UsesFp16() {
        DeviceCapabilities caps;
        caps.cuda_available = true;
        caps.cuda_device_count = 1;
        caps.cuda_bf16 = false;
        const auto steps = buildTechniqueLadder(ExperimentConfig{}, caps);
        QCOMPARE(QString::fromStdString(steps[1].config.trainer.precision), QString("16-mixed"));
        const auto& workers = steps[steps.size() - 2];
        QCOMPARE(QString::fromStdString(workers.label), QString("+ workers"));
        QVERIFY(QString::fromStdString(workers.change).contains("pinned"));
        QVERIFY(!workers.config.data.on_device);
        // Last on a GPU: the training set held there.
        QCOMPARE(QString::fromStdString(steps.back().label), QString("+ data on device"));
        QVERIFY(steps.back().config.data.on_device);
        QVERIFY(!steps.front().config.data.on_device);
    }

    void targetBatchAddsAccumulationStep() {
        ExperimentConfig base;
        base.trainer.batch_size = 32;
        LadderOptions options;
        options.target_batch = 128;
        const auto steps = buildTechniqueLadder(base, DeviceCapabilities{}, options);
        QCOMPARE(steps.size(), size_t(4));
        QCOMPARE(steps[3].config.trainer.accumulate_grad_batches, int64_t(4));
        QCOMPARE(steps[3].config.trainer.batch_size, int64_t(32));

        options.target_batch = 100;
        QVERIFY_THROWS_EXCEPTION(ConfigError, buildTechniqueLadder(base, DeviceCapabilities{}, options));
    }

    void severalGpusAddADdpStepOnASingleDeviceBaseline() {
        DeviceCapabilities caps;
        caps.cuda_available = true;
        caps.cuda_device_count = 4;
        caps.cuda_bf16 = true;
        ExperimentConfig base;
        base.trainer.devices = 4;   // the baseline still runs on one device
        base.trainer.strategy = "ddp";
        auto steps = buildTechniqueLadder(base, caps);
        // The GPU rungs: TF32 (Ampere+), the fused optimizer, cuDNN benchmark, channels_last (cnn).
        QCOMPARE(steps.size(), size_t(8));   // no c10d in this build: no DDP step
        caps.distributed = true;
        caps.fused_optimizers = true;
        steps = buildTechniqueLadder(base, caps);
        QCOMPARE(steps.size(), size_t(9));
        QCOMPARE(steps[0].config.trainer.devices.value_or(0), int64_t(1));
        QCOMPARE(QString::fromStdString(steps[0].config.trainer.strategy), QString("auto"));
        QCOMPARE(QString::fromStdString(steps[0].config.optimizer.implementation), QString("per_parameter"));
        QVERIFY(!steps[0].config.trainer.tf32 && !steps[0].config.trainer.cudnn_benchmark);
        QCOMPARE(QString::fromStdString(steps[1].label), QString("+ TF32"));
        QVERIFY(steps[1].config.trainer.tf32);
        QCOMPARE(QString::fromStdString(steps[1].config.trainer.precision), QString("32-true"));
        QCOMPARE(QString::fromStdString(steps[2].label), QString("+ bf16-mixed"));
        QCOMPARE(QString::fromStdString(steps[3].label), QString("+ fused optimizer"));
        QCOMPARE(QString::fromStdString(steps[3].config.optimizer.implementation), QString("fused"));
        QCOMPARE(QString::fromStdString(steps[4].label), QString("+ cuDNN benchmark"));
        QVERIFY(steps[4].config.trainer.cudnn_benchmark && !steps[4].config.trainer.channels_last);
        QCOMPARE(QString::fromStdString(steps[5].label), QString("+ channels_last"));
        QVERIFY(steps[5].config.trainer.cudnn_benchmark && steps[5].config.trainer.channels_last);
        QCOMPARE(QString::fromStdString(steps[6].label), QString("+ workers"));
        QCOMPARE(QString::fromStdString(steps[7].label), QString("+ data on device"));
        QCOMPARE(QString::fromStdString(steps[8].label), QString("+ DDP on 4 devices"));
        QCOMPARE(steps[8].config.trainer.devices.value_or(0), int64_t(4));
        QCOMPARE(QString::fromStdString(steps[8].config.trainer.strategy), QString("ddp"));
        QCOMPARE(QString::fromStdString(steps[8].config.trainer.precision), QString("bf16-mixed"));
        QVERIFY(QString::fromStdString(steps[8].change).contains("global batch 256"));
        QVERIFY(!steps[0].optional && steps[1].optional && !steps[8].optional);
        for (const auto& s : steps) QVERIFY2(validate(s.config, caps).empty(), s.label.c_str());
        for (size_t i = 1; i < steps.size(); ++i) QVERIFY(steps[i].config.name != steps[i - 1].config.name);
        // One GPU: no DDP step. Without fused kernels the optimizer rung is foreach; a
        // deterministic run keeps cuDNN's default kernels; before Ampere no TF32, fp16 instead of bf16.
        caps.cuda_device_count = 1;
        caps.fused_optimizers = false;
        base.trainer.deterministic = true;
        caps.cuda_bf16 = false;
        steps = buildTechniqueLadder(base, caps);
        QCOMPARE(steps.size(), size_t(5));
        QCOMPARE(QString::fromStdString(steps[1].label), QString("+ 16-mixed"));
        QCOMPARE(QString::fromStdString(steps[2].label), QString("+ foreach optimizer"));
        QCOMPARE(QString::fromStdString(steps[3].label), QString("+ workers"));
        QCOMPARE(QString::fromStdString(steps[4].label), QString("+ data on device"));
    }

    // A CUDA build on a GPU captures the step as a CUDA graph after the data rungs (images and
    // tables); the DDP rung turns it off again (the reducer's hooks cannot be replayed).
    void cudaGraphRungFollowsTheDataRungs() {
        const DeviceCapabilities caps = twoModernGpus();
        const auto steps = buildTechniqueLadder(ExperimentConfig{}, caps);
        QCOMPARE(steps.size(), size_t(10));
        QCOMPARE(QString::fromStdString(steps[7].label), QString("+ data on device"));
        QCOMPARE(QString::fromStdString(steps[8].label), QString("+ CUDA graph"));
        QCOMPARE(QString::fromStdString(steps[8].config.trainer.cuda_graph), QString("step"));
        for (size_t i = 0; i < 8; ++i) QCOMPARE(QString::fromStdString(steps[i].config.trainer.cuda_graph), QString("off"));
        QCOMPARE(QString::fromStdString(steps[9].config.trainer.strategy), QString("ddp"));
        QCOMPARE(QString::fromStdString(steps[9].config.trainer.cuda_graph), QString("off"));
        for (const auto& s : steps) QVERIFY2(validate(s.config, caps).empty(), s.label.c_str());
        // Text pads each batch to its own length on these rungs: no graph rung.
        ExperimentConfig text;
        text.data.kind = "wordnet";
        text.data.tokenizer = "vocab.txt";
        text.model.name = "distilbert";
        for (const auto& s : buildTechniqueLadder(text, caps)) QVERIFY(s.config.trainer.cuda_graph == "off");
    }

    // An image folder decodes in the loader: workers, pinned memory (on a GPU) and the decoded
    // cache are rungs of their own; the baseline decodes on the training thread without a cache.
    void imageFolderLadderSeparatesTheLoadingRungs() {
        ExperimentConfig base;
        base.data.kind = "image_folder";
        base.data.path = "photos";
        base.data.cache_decoded = true;
        base.model.name = "resnet18";
        const auto cpu = buildTechniqueLadder(base, DeviceCapabilities{});
        QCOMPARE(cpu.size(), size_t(4));
        QVERIFY(!cpu[0].config.data.cache_decoded);
        QCOMPARE(cpu[0].config.trainer.num_workers, int64_t(0));
        QCOMPARE(QString::fromStdString(cpu[2].label), QString("+ workers"));
        QVERIFY(!cpu[2].config.data.cache_decoded);
        QCOMPARE(QString::fromStdString(cpu[3].label), QString("+ decoded cache"));
        QVERIFY(cpu[3].config.data.cache_decoded);
        for (const auto& s : cpu) QVERIFY2(validate(s.config, DeviceCapabilities{}).empty(), s.label.c_str());
        DeviceCapabilities caps;
        caps.cuda_available = true;
        caps.cuda_device_count = 1;
        caps.cuda_bf16 = true;
        caps.fused_optimizers = true;
        QStringList labels;
        for (const auto& s : buildTechniqueLadder(base, caps)) {
            labels << QString::fromStdString(s.label);
            const auto problems = validate(s.config, caps);   // channels_last applies to a resnet too
            QVERIFY2(problems.empty(), (s.label + ": " + (problems.empty() ? "" : problems[0].message)).c_str());
        }
        QCOMPARE(labels, (QStringList{"baseline", "+ TF32", "+ bf16-mixed", "+ fused optimizer", "+ cuDNN benchmark",
                                      "+ channels_last", "+ workers", "+ pinned memory",
                                      "+ decoded cache", "+ data on device"}));
    }

    void textLadderAddsDynamicPaddingThenBucketing() {
        ExperimentConfig base;
        base.data.kind = "wordnet";
        base.data.tokenizer = "vocab.txt";
        base.data.max_length = 128;
        base.data.padding = "longest";        // the baseline pads to max_length
        base.data.bucket_by_length = true;
        base.model.name = "distilbert";
        const auto steps = buildTechniqueLadder(base, DeviceCapabilities{}, LadderOptions{LadderKind::Speed, 256, 2});
        QCOMPARE(steps.size(), size_t(6));
        QCOMPARE(QString::fromStdString(steps[0].config.data.padding), QString("max_length"));
        QVERIFY(!steps[0].config.data.bucket_by_length);
        QVERIFY(QString::fromStdString(steps[0].change).contains("128 tokens"));
        QCOMPARE(QString::fromStdString(steps[1].label), QString("+ bf16-mixed"));
        QCOMPARE(QString::fromStdString(steps[1].config.data.padding), QString("max_length"));
        QCOMPARE(QString::fromStdString(steps[2].label), QString("+ dynamic padding"));
        QCOMPARE(QString::fromStdString(steps[2].config.data.padding), QString("longest"));
        QVERIFY(!steps[2].config.data.bucket_by_length);
        QCOMPARE(QString::fromStdString(steps[3].label), QString("+ length bucketing"));
        QVERIFY(steps[3].config.data.bucket_by_length);
        QCOMPARE(QString::fromStdString(steps[4].label), QString("+ workers"));
        QVERIFY(steps[4].config.data.bucket_by_length);
        QCOMPARE(QString::fromStdString(steps[5].label), QString("+ accumulation"));
        QCOMPARE(steps[5].config.trainer.accumulate_grad_batches, int64_t(4));
        for (const auto& s : steps) QVERIFY2(validate(s.config, DeviceCapabilities{}).empty(), s.label.c_str());
        for (size_t i = 1; i < steps.size(); ++i) QVERIFY(steps[i].config.name != steps[i - 1].config.name);
    }

    // The memory ladder turns one memory toggle on per step and leaves the rest of the experiment.
    void memoryLadderAddsOneToggleAtATime() {
        ExperimentConfig base;
        base.trainer.precision = "bf16-mixed";   // kept: the memory ladder changes memory toggles only
        base.model.gradient_checkpointing = true;   // the baseline turns every toggle off
        LadderOptions options;
        options.kind = LadderKind::Memory;
        auto steps = buildTechniqueLadder(base, DeviceCapabilities{}, options);
        QCOMPARE(steps.size(), size_t(4));
        const auto toggles = [](const LadderStep& s) {
            return QString("%1 %2 %3").arg(s.config.trainer.set_grads_to_none).arg(s.config.model.inplace_activations)
                .arg(s.config.model.gradient_checkpointing);
        };
        QCOMPARE(toggles(steps[0]), QString("0 0 0"));
        QCOMPARE(toggles(steps[1]), QString("1 0 0"));
        QCOMPARE(toggles(steps[2]), QString("1 1 0"));
        QCOMPARE(toggles(steps[3]), QString("1 1 1"));
        QCOMPARE(QString::fromStdString(steps[3].label), QString("+ checkpointing"));
        QVERIFY(QString::fromStdString(steps[3].change).contains("conv block"));
        for (const auto& s : steps) {
            QCOMPARE(QString::fromStdString(s.config.trainer.precision), QString("bf16-mixed"));
            QVERIFY2(validate(s.config, DeviceCapabilities{}).empty(), s.label.c_str());
        }
        for (size_t i = 1; i < steps.size(); ++i) QVERIFY(steps[i].config.name != steps[i - 1].config.name);

        // A transformer has no in-place step (GELU); under ddp the gradients step is left out.
        base.data.kind = "wordnet";
        base.data.tokenizer = "vocab.txt";
        base.model.name = "distilbert";
        steps = buildTechniqueLadder(base, DeviceCapabilities{}, options);
        QCOMPARE(steps.size(), size_t(3));
        QCOMPARE(QString::fromStdString(steps[1].label), QString("+ grads set to none"));
        QVERIFY(QString::fromStdString(steps[2].change).contains("encoder layer"));
        for (const auto& s : steps) QVERIFY2(validate(s.config, DeviceCapabilities{}).empty(), s.label.c_str());
        base.trainer.strategy = "ddp";
        steps = buildTechniqueLadder(base, DeviceCapabilities{}, options);   // a world of one: nothing to shard
        QCOMPARE(steps.size(), size_t(2));
        QCOMPARE(QString::fromStdString(steps[1].label), QString("+ checkpointing"));
        // Several processes: a rung per ZeRO stage, each sharding one more kind of state.
        base.trainer.devices = 2;
        DeviceCapabilities distributed;
        distributed.distributed = true;
        steps = buildTechniqueLadder(base, distributed, options);
        QStringList labels;
        for (const auto& s : steps) labels << QString::fromStdString(s.label);
        QCOMPARE(labels, (QStringList{"baseline", "+ zero1", "+ zero2", "+ zero3", "+ checkpointing"}));
        QCOMPARE(QString::fromStdString(steps[3].config.trainer.strategy), QString("zero3"));
        // ddp and zero1 zero the gradients in place (their buckets hold them); from zero2 on they
        // are dropped, or zero2 would keep every full gradient beside its slice.
        QVERIFY(!steps[0].config.trainer.set_grads_to_none && !steps[1].config.trainer.set_grads_to_none);
        QVERIFY(steps[2].config.trainer.set_grads_to_none && steps[3].config.trainer.set_grads_to_none);
        QVERIFY(steps[4].config.model.gradient_checkpointing && steps[4].config.trainer.strategy == "zero3");
        for (const auto& s : steps) QVERIFY2(validate(s.config, distributed).empty(), s.label.c_str());
        base.trainer.strategy = "zero2";
        steps = buildTechniqueLadder(base, distributed, options);
        QCOMPARE(steps.size(), size_t(4));   // baseline, grads to none, + zero3, + checkpointing
        QCOMPARE(QString::fromStdString(steps[2].label), QString("+ zero3"));
        // On GPUs the sharded optimizer moves to host memory a rung later (on the CPU it would move nothing).
        DeviceCapabilities gpus = distributed;
        gpus.cuda_available = true;
        gpus.cuda_device_count = 2;
        gpus.cuda_bf16 = true;
        steps = buildTechniqueLadder(base, gpus, options);
        labels.clear();
        for (const auto& s : steps) labels << QString::fromStdString(s.label);
        QCOMPARE(labels, (QStringList{"baseline", "+ grads set to none", "+ zero3", "+ offload", "+ checkpointing"}));
        QVERIFY(steps[3].config.trainer.offload_optimizer && !steps[2].config.trainer.offload_optimizer);
        QVERIFY(steps[4].config.trainer.offload_optimizer);
        for (const auto& s : steps) QVERIFY2(validate(s.config, gpus).empty(), s.label.c_str());

        QCOMPARE(ladderKindFromName("memory").value_or(LadderKind::Speed), LadderKind::Memory);
        QVERIFY(!ladderKindFromName("fast").has_value());
    }

    // A rung that trains slower than the step it built on is left out of the later steps: the keys
    // it changed go back, its name leaves theirs; a rung within the noise, and the accumulation
    // and DDP steps (they change the batch), always stay.
    void slowerRungIsLeftOutOfLaterSteps() {
        const DeviceCapabilities caps = twoModernGpus();
        LadderOptions options;
        options.target_batch = 256;
        auto steps = buildTechniqueLadder(ExperimentConfig{}, caps, options);
        QCOMPARE(steps.size(), size_t(11));
        QCOMPARE(QString::fromStdString(steps[4].label), QString("+ cuDNN benchmark"));
        QCOMPARE(QString::fromStdString(steps[9].label), QString("+ accumulation"));
        // Two epochs each: the steady speed (last epoch's samples/s) decides, not the whole fit.
        const auto measure = [](double fit_s, double steady) {
            EpochMetrics first, last;
            first.samples_per_sec = steady / 3.0;   // the warm-up epoch
            last.samples_per_sec = steady;
            return ladderMeasureOf(fit_s, {first, last});
        };
        std::vector<LadderMeasure> m{measure(10.0, 1000.0)};
        for (size_t k = 1; k <= 3; ++k) {   // TF32, bf16, fused: each 10% faster than the one before
            m.push_back(measure(10.0, m.back().steady_samples_per_sec * 1.1));
            QVERIFY(settleLadderStep(steps, k, m));
        }
        // cuDNN benchmark: a faster fit but a steady speed 0.6x the fused optimizer's: left out.
        m.push_back(measure(5.0, m[3].steady_samples_per_sec * 0.6));
        QVERIFY(!settleLadderStep(steps, 4, m));
        QVERIFY(!steps[4].kept && steps[4].config.trainer.cudnn_benchmark);   // it ran with it
        for (size_t j = 5; j < steps.size(); ++j) {
            QVERIFY2(!steps[j].config.trainer.cudnn_benchmark, steps[j].label.c_str());
            QVERIFY2(steps[j].config.name.find("cudnn benchmark") == std::string::npos, steps[j].config.name.c_str());
            QVERIFY2(validate(steps[j].config, caps).empty(), steps[j].label.c_str());
        }
        QVERIFY(steps[5].config.trainer.channels_last);   // its own rung's change stays
        QVERIFY(steps[5].config.name.find("fused optimizer + channels_last") != std::string::npos);
        QCOMPARE(ladderReferenceStep(steps, 5), size_t(3));
        // channels_last within the noise of the fused optimizer step (0.97x): kept.
        m.push_back(measure(10.0, m[3].steady_samples_per_sec * 0.97));
        QVERIFY(settleLadderStep(steps, 5, m));
        QCOMPARE(ladderReferenceStep(steps, 6), size_t(5));
        // workers 0.5x: left out; the later steps go back to the loader on the training thread.
        m.push_back(measure(10.0, m[5].steady_samples_per_sec * 0.5));
        QVERIFY(!settleLadderStep(steps, 6, m));
        for (size_t j = 7; j < steps.size(); ++j) {
            QCOMPARE(steps[j].config.trainer.num_workers, int64_t(0));
            QVERIFY(!steps[j].config.trainer.persistent_workers);
            QVERIFY(steps[j].config.trainer.channels_last);
        }
        QVERIFY(steps[8].config.trainer.cuda_graph == "step" && steps[8].config.data.on_device);
        // Accumulation slower still stays (it changes the batch a step sees).
        for (size_t k = 7; k <= 8; ++k) {
            m.push_back(measure(10.0, m[ladderReferenceStep(steps, k)].steady_samples_per_sec * 1.2));
            QVERIFY(settleLadderStep(steps, k, m));
        }
        m.push_back(measure(10.0, m.back().steady_samples_per_sec * 0.5));
        QVERIFY(settleLadderStep(steps, 9, m));
        QCOMPARE(steps[10].config.trainer.accumulate_grad_batches, int64_t(4));
        QCOMPARE(QString::fromStdString(steps[10].config.trainer.cuda_graph), QString("off"));   // DDP's own
        // What the table and the workbench say of a rung: both speed-ups, or the whole fit's alone.
        QCOMPARE(QString::fromStdString(ladderSpeedupText(m[4], m[3])), QString("steady 0.60x, whole fit 2.00x"));
        QCOMPARE(QString::fromStdString(ladderSpeedupText(ladderMeasureOf(5.0, {EpochMetrics{}}),
                                                          ladderMeasureOf(10.0, {EpochMetrics{}}))),
                 QString("whole fit 2.00x"));
        QCOMPARE(QString::fromStdString(ladderSpeedupText(LadderMeasure{}, ladderMeasureOf(10.0, {}))), QString("no timing"));
    }

    // Steady speed and whole fit together: a rung with no steady gain whose warm-up slowed the fit
    // (cuDNN's autotuning in a short run) is left out; one measurably faster once warmed up stays
    // even though its warm-up made this short fit slower.
    void warmUpCostWithoutSteadyGainIsLeftOut() {
        const auto measure = [](double fit_s, double steady) {
            EpochMetrics first, last;
            last.samples_per_sec = steady;
            return ladderMeasureOf(fit_s, {first, last});
        };
        const LadderMeasure ref = measure(6.0, 20000.0);
        QVERIFY(ladderRungSlower(measure(14.0, 20400.0), ref));    // steady 1.02x, fit 0.43x
        QVERIFY(!ladderRungSlower(measure(8.0, 26000.0), ref));    // steady 1.30x, fit 0.75x
        QVERIFY(!ladderRungSlower(measure(6.2, 19500.0), ref));    // both within the noise
        QVERIFY(ladderRungSlower(measure(3.0, 15000.0), ref));     // steady 0.75x, fit 2x
        QVERIFY(ladderRungSlower(ladderMeasureOf(10.0, {}), ladderMeasureOf(9.0, {})));   // one epoch: 0.9x fit
        QVERIFY(!ladderRungSlower(ladderMeasureOf(9.0, {}), ladderMeasureOf(9.0, {})));

        DeviceCapabilities caps;
        caps.cuda_available = true;
        caps.cuda_device_count = 1;
        caps.cuda_bf16 = true;
        caps.fused_optimizers = true;
        auto steps = buildTechniqueLadder(ExperimentConfig{}, caps);
        std::vector<LadderMeasure> m{ref, measure(6.0, 20000.0), measure(6.0, 20000.0), measure(6.0, 20000.0),
                                     measure(14.0, 20400.0)};
        for (size_t k = 1; k <= 3; ++k) QVERIFY(settleLadderStep(steps, k, m));
        QCOMPARE(QString::fromStdString(steps[4].label), QString("+ cuDNN benchmark"));
        QVERIFY(!settleLadderStep(steps, 4, m));
        QVERIFY(!steps[5].config.trainer.cudnn_benchmark && steps[5].config.trainer.channels_last);
    }

    // The planner lists every rung; on the CPU for the CNN exactly these apply, each other one
    // with its reason, and a target batch makes the accumulation rung apply.
    void plannerListsTheRungsThatApplyToACnnOnTheCpu() {
        const auto rungs = ladderRungs(ExperimentConfig{}, DeviceCapabilities{});
        QCOMPARE(idsWhere(rungs, applies), (std::set<std::string>{"mixed", "workers", "checkpointing"}));
        QCOMPARE(idsWhere(rungs, onByDefault), (std::set<std::string>{"mixed", "workers"}));
        for (const auto& r : rungs) {
            QVERIFY2(r.applies == r.reason.empty(), r.id.c_str());
            QVERIFY2(!r.label.empty(), r.id.c_str());
        }
        const auto reason = [&](const std::vector<LadderRung>& list, const std::string& id) {
            for (const auto& r : list)
                if (r.id == id) return QString::fromStdString(r.reason);
            return QString("no such rung");
        };
        QVERIFY(reason(rungs, "tf32").contains("trains on the CPU"));
        QVERIFY(reason(rungs, "ddp").contains("several GPUs"));
        QVERIFY(reason(rungs, "accumulation").contains("--target-batch"));
        LadderPlan plan;
        plan.target_batch = 256;
        QVERIFY(idsWhere(ladderRungs(ExperimentConfig{}, DeviceCapabilities{}, plan), applies).count("accumulation"));
        plan.target_batch = 100;   // not a multiple of 64: listed with the reason, refused when chosen
        QVERIFY(reason(ladderRungs(ExperimentConfig{}, DeviceCapabilities{}, plan), "accumulation").contains("multiple"));
    }

    // A transformer on text: padding and bucketing apply; on GPUs the rungs for images do not.
    void plannerForATransformer() {
        ExperimentConfig text;
        text.data.kind = "wordnet";
        text.data.tokenizer = "vocab.txt";
        text.model.name = "distilbert";
        QCOMPARE(idsWhere(ladderRungs(text, DeviceCapabilities{}), applies),
                 (std::set<std::string>{"mixed", "padding", "bucketing", "workers", "checkpointing"}));
        const auto gpu = ladderRungs(text, twoModernGpus());
        QCOMPARE(idsWhere(gpu, applies),
                 (std::set<std::string>{"tf32", "mixed", "optimizer", "padding", "bucketing", "workers", "checkpointing",
                                        "ddp", "zero1", "zero2", "zero3", "offload", "pipeline"}));
        for (const auto& r : gpu) {
            if (r.id == "cudnn") QVERIFY(QString::fromStdString(r.reason).contains("distilbert has no convolutions"));
            if (r.id == "cuda_graph") QVERIFY(QString::fromStdString(r.reason).contains("change shape"));
        }
        // A TorchScript module is one forward: the pipeline cannot cut it.
        ExperimentConfig scripted;
        scripted.model.name = "torchscript";
        scripted.model.path = "model.pt";
        for (const auto& r : ladderRungs(scripted, twoModernGpus()))
            if (r.id == "pipeline") QVERIFY2(!r.applies && QString::fromStdString(r.reason).contains("TorchScript"), r.reason.c_str());
    }

    // A machine of two modern GPUs (a described capability set): every rung applies to the CNN;
    // the ones that trade speed for memory are offered unchecked.
    void plannerOnAMachineWithTwoGpus() {
        LadderPlan plan;
        plan.target_batch = 256;
        const auto rungs = ladderRungs(ExperimentConfig{}, twoModernGpus(), plan);
        QCOMPARE(idsWhere(rungs, applies),
                 (std::set<std::string>{"tf32", "mixed", "optimizer", "cudnn", "channels_last", "workers", "on_device",
                                        "cuda_graph", "accumulation", "checkpointing", "ddp", "zero1", "zero2", "zero3",
                                        "offload", "pipeline"}));
        QCOMPARE(idsWhere(rungs, onByDefault),
                 (std::set<std::string>{"tf32", "mixed", "optimizer", "cudnn", "channels_last", "workers", "on_device",
                                        "cuda_graph", "accumulation", "ddp"}));
        // Each strategy rung alone on the baseline: one process per GPU; offload brings a sharded
        // optimizer with it. Every step validates.
        plan.rungs = std::vector<std::string>{"zero3", "offload", "pipeline"};
        plan.order = LadderOrder::Alone;
        const auto steps = buildPlannedLadder(ExperimentConfig{}, twoModernGpus(), plan);
        QCOMPARE(steps.size(), size_t(4));
        QCOMPARE(QString::fromStdString(steps[2].config.trainer.strategy), QString("zero2"));
        QVERIFY(steps[2].config.trainer.offload_optimizer);
        QCOMPARE(QString::fromStdString(steps[3].config.trainer.strategy), QString("pipeline"));
        for (const auto& s : steps) {
            const auto problems = validate(s.config, twoModernGpus());
            QVERIFY2(problems.empty(), (s.label + ": " + (problems.empty() ? "" : problems.front().key + " " + problems.front().message)).c_str());
        }
    }

    // Chosen rungs run in the ladder's order; alone, each builds on the baseline and is judged
    // against it; an unknown rung or one that does not apply is refused naming it.
    void chosenRungsStackedOrAlone() {
        LadderPlan plan;
        plan.rungs = std::vector<std::string>{"workers", "mixed"};
        auto steps = buildPlannedLadder(ExperimentConfig{}, DeviceCapabilities{}, plan);
        QCOMPARE(steps.size(), size_t(3));
        QCOMPARE(QString::fromStdString(steps[1].label), QString("+ bf16-mixed"));
        QCOMPARE(QString::fromStdString(steps[2].config.trainer.precision), QString("bf16-mixed"));   // stacked
        QCOMPARE(ladderReferenceStep(steps, 2), size_t(1));
        plan.order = LadderOrder::Alone;
        steps = buildPlannedLadder(ExperimentConfig{}, DeviceCapabilities{}, plan);
        QCOMPARE(QString::fromStdString(steps[2].config.trainer.precision), QString("32-true"));   // alone
        QCOMPARE(steps[2].config.trainer.num_workers, int64_t(2));
        QCOMPARE(ladderReferenceStep(steps, 2), size_t(0));
        QVERIFY(!steps[1].optional && steps[2].alone);
        QVERIFY(steps[1].config.name != steps[2].config.name && steps[0].config.name != steps[1].config.name);
        // A rung tried alone is never left out of the others.
        std::vector<LadderMeasure> slow{{10.0, 1000.0}, {10.0, 500.0}};
        QVERIFY(settleLadderStep(steps, 1, slow));

        plan.rungs = std::vector<std::string>{"turbo"};
        try {
            buildPlannedLadder(ExperimentConfig{}, DeviceCapabilities{}, plan);
            QFAIL("an unknown rung was accepted");
        } catch (const ConfigError& e) {
            QVERIFY2(QString(e.what()).contains("rungs") && QString(e.what()).contains("'turbo'") &&
                         QString(e.what()).contains("workers"),
                     e.what());
        }
        plan.rungs = std::vector<std::string>{"cuda_graph"};
        try {
            buildPlannedLadder(ExperimentConfig{}, DeviceCapabilities{}, plan);
            QFAIL("a rung that does not apply was accepted");
        } catch (const ConfigError& e) {
            QVERIFY2(QString(e.what()).contains("does not apply here") && QString(e.what()).contains("CPU"), e.what());
        }
        plan.rungs.reset();
        plan.repeats = 0;
        QVERIFY_THROWS_EXCEPTION(ConfigError, buildPlannedLadder(ExperimentConfig{}, DeviceCapabilities{}, plan));
    }

    // The sweep stores the plan with its steps (and which were left out) and reads it back.
    void planJsonRoundTrips() {
        LadderPlan plan;
        plan.rungs = std::vector<std::string>{"mixed", "workers"};
        plan.repeats = 3;
        plan.target_batch = 128;
        auto steps = buildPlannedLadder(ExperimentConfig{}, DeviceCapabilities{}, plan);
        steps[1].kept = false;
        const StoredLadderPlan back = ladderPlanFromJson(ladderPlanJson(plan, steps));
        QCOMPARE(back.plan.repeats, int64_t(3));
        QCOMPARE(*back.plan.rungs, *plan.rungs);
        QCOMPARE(back.plan.target_batch.value_or(0), int64_t(128));
        QCOMPARE(back.steps.size(), steps.size());
        QCOMPARE(QString::fromStdString(back.steps[2].label), QString("+ workers"));
        QVERIFY(!back.steps[1].kept && back.steps[2].kept);
        QCOMPARE(ladderReferenceStep(back.steps, 2), size_t(0));   // the left-out step is skipped
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ladderPlanFromJson("{\"order\": 1}"));
    }

    // Time to accuracy: once the baseline ran, every later step trains until its validation
    // accuracy reaches the baseline's best, for at most the cap; the plan keeps the target.
    void accuracyGoalAimsEveryRungAtTheBaselinesAccuracy() {
        LadderPlan plan;
        plan.goal = LadderGoal::Accuracy;
        ExperimentConfig base;
        base.trainer.max_epochs = 3;
        auto steps = buildPlannedLadder(base, DeviceCapabilities{}, plan);
        aimLadderAtAccuracy(steps, plan, 0.8812);
        QCOMPARE(plan.accuracy_target.value_or(0), 0.8812);
        QCOMPARE(steps[0].config.trainer.max_epochs, int64_t(3));   // the baseline as it ran
        QVERIFY(!steps[0].config.trainer.early_stopping.stop_at);
        for (size_t i = 1; i < steps.size(); ++i) {
            const auto& t = steps[i].config.trainer;
            QCOMPARE(t.max_epochs, int64_t(6));   // the cap: twice max_epochs
            QCOMPARE(QString::fromStdString(t.early_stopping.monitor), QString("val_acc"));
            QCOMPARE(t.early_stopping.stop_at.value_or(0), 0.8812);
            QVERIFY2(validate(steps[i].config, DeviceCapabilities{}).empty(), steps[i].label.c_str());
        }
        const StoredLadderPlan back = ladderPlanFromJson(ladderPlanJson(plan, steps));
        QVERIFY(back.plan.goal == LadderGoal::Accuracy);
        QCOMPARE(back.plan.accuracy_target.value_or(0), 0.8812);
        // The time to a target: the epochs' times summed until the first epoch that reached it.
        std::vector<EpochMetrics> epochs(3);
        epochs[0].epoch_time_s = 10;
        epochs[0].val_accuracy = 0.80;
        epochs[1].epoch_time_s = 9;
        epochs[1].val_accuracy = 0.8812;
        epochs[2].epoch_time_s = 9;
        epochs[2].val_accuracy = 0.90;
        QCOMPARE(timeToAccuracy(epochs, 0.8812).value_or(0), 19.0);
        QVERIFY(!timeToAccuracy(epochs, 0.95));
        // No validation split: nothing to time against.
        base.data.val_fraction = 0.0;
        QVERIFY_THROWS_EXCEPTION(ConfigError, buildPlannedLadder(base, DeviceCapabilities{}, plan));
    }

    void stepNamesAreDistinct() {
        const auto steps = buildTechniqueLadder(ExperimentConfig{}, DeviceCapabilities{});
        QVERIFY(steps[0].config.name != steps[1].config.name);
        QVERIFY(steps[1].config.name != steps[2].config.name);
    }
};

QTEST_GUILESS_MAIN(TestTechniqueLadder)
#include "test_technique_ladder.moc"
