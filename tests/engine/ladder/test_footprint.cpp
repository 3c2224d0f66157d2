// Predict, then measure, without LibTorch: the probe sizes, the straight-line extension of
// activations, workspace and step time from two probes, the fit against a capacity (host and GPU
// count the workspace differently), the verdict's words, predicted against measured, and the JSON
// a sweep's plan keeps the prediction in.
#include "engine/ladder/LadderPlan.h"
#include "engine/run/Footprint.h"

#include <QTest>

#include <stdexcept>

using namespace hearth;

namespace {

constexpr int64_t MiB = int64_t{1} << 20;

FootprintBase hostBase() {
    FootprintBase b;
    b.device = "cpu";
    b.parameters_bytes = 4 * MiB;
    b.gradients_bytes = 4 * MiB;
    b.optimizer_state_bytes = 8 * MiB;
    b.other_bytes = 200 * MiB;
    b.capacity_bytes = 1024 * MiB;
    b.capacity = "this machine's RAM (1.00 GiB)";
    return b;
}

// Probes at 16 and 32 as a CNN's measured: activations and workspace grow with the batch.
std::vector<FootprintProbe> probes() {
    return {{32, 0, 24 * MiB, 46 * MiB, 30.0}, {16, 0, 12 * MiB, 25 * MiB, 15.0}};
}

}  // namespace

class TestFootprint : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void probeSizesAreAQuarterAndHalf() {
        QCOMPARE(footprintProbeSizes(64), (std::vector<int64_t>{16, 32}));
        QCOMPARE(footprintProbeSizes(100), (std::vector<int64_t>{25, 50}));
        QCOMPARE(footprintProbeSizes(3), (std::vector<int64_t>{1, 2}));
        QCOMPARE(footprintProbeSizes(2), (std::vector<int64_t>{1, 2}));
        QCOMPARE(footprintProbeSizes(1), (std::vector<int64_t>{1}));
    }

    // The batch-dependent parts follow the line through the probes (in any order); the rest is
    // the probe's own; the host's peak holds the workspace.
    void extendsTheLineThroughTheProbes() {
        const FootprintPrediction p = extrapolateFootprint(hostBase(), probes(), 64, 1);
        QCOMPARE(p.batch_size, int64_t{64});
        QCOMPARE(p.memory.activations_bytes, 48 * MiB);
        QCOMPARE(p.memory.reserved_unused_bytes, 88 * MiB);
        QCOMPARE(p.memory.parameters_bytes, 4 * MiB);
        QCOMPARE(p.memory.optimizer_state_bytes, 8 * MiB);
        QCOMPARE(p.memory.peak_bytes, (4 + 4 + 8 + 48 + 88 + 200) * MiB);
        QCOMPARE(p.step_ms, 60.0);
        QVERIFY(p.fits);
        QCOMPARE(p.probes.front().batch_size, int64_t{16});   // sorted
        QVERIFY(footprintVerdict(p).empty());

        // Accumulation: the optimizer step is k micro-batches; memory is one micro-batch's.
        const FootprintPrediction k4 = extrapolateFootprint(hostBase(), probes(), 64, 4);
        QCOMPARE(k4.step_ms, 240.0);
        QCOMPARE(k4.memory.peak_bytes, p.memory.peak_bytes);
    }

    // A probe's step time is a micro-batch's share: each timed step over the micro-batches it ran,
    // the median of those. Recording the whole step (the prediction then multiplied by k twice)
    // predicted a ladder's accumulation step of 2 at 145.9 ms against 76.6 ms measured.
    void aProbeRecordsAMicroBatchsShare() {
        QCOMPARE(microBatchShareMs({{80.0, 8}, {96.0, 8}, {88.0, 8}}), 11.0);
        QCOMPARE(microBatchShareMs({{10.0, 1}, {30.0, 1}, {12.0, 1}}), 12.0);
        QCOMPARE(microBatchShareMs({{40.0, 4}, {9.0, 1}, {30.0, 2}}), 10.0);   // a step cut short by a stop
        QCOMPARE(microBatchShareMs({}), 0.0);
    }

    // Probes whose numbers fall as the batch grows (noise: the heap's slack, a slow first timing)
    // predict no less than the larger probe measured; a falling step time scales that probe's time
    // per sample to the batch.
    void aFallingLineStaysAtTheLargerProbe() {
        const std::vector<FootprintProbe> falling{{16, 0, 12 * MiB, 30 * MiB, 31.0}, {32, 0, 24 * MiB, 10 * MiB, 30.0}};
        const FootprintPrediction p = extrapolateFootprint(hostBase(), falling, 128, 1);
        QCOMPARE(p.memory.reserved_unused_bytes, 10 * MiB);
        QCOMPARE(p.memory.activations_bytes, 96 * MiB);
        QCOMPARE(p.step_ms, 120.0);
    }

    // Probes whose peak was the optimizer step's temporaries (flat from one to the next): the
    // prediction is the larger of those and the forward and backward passes' line at the batch.
    void optimizerBoundProbesGiveWayToThePasses() {
        std::vector<FootprintProbe> flat{{8, 0, 16 * MiB, 0, 4.0}, {16, 0, 16 * MiB, 0, 8.0}};
        flat[0].pass_bytes = 5 * MiB;
        flat[0].optimizer_bytes = 16 * MiB;
        flat[1].pass_bytes = 10 * MiB;
        flat[1].optimizer_bytes = 16 * MiB;
        QCOMPARE(extrapolateFootprint(hostBase(), flat, 24, 1).memory.activations_bytes, 16 * MiB);   // still the optimizer's
        QCOMPARE(extrapolateFootprint(hostBase(), flat, 64, 1).memory.activations_bytes, 40 * MiB);   // the passes'
    }

    void oneProbeScalesWithTheBatch() {
        const FootprintPrediction p = extrapolateFootprint(hostBase(), {{8, 0, 10 * MiB, 2 * MiB, 4.0}}, 8, 1);
        QCOMPARE(p.memory.activations_bytes, 10 * MiB);
        QCOMPARE(p.step_ms, 4.0);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, extrapolateFootprint(hostBase(), {}, 8, 1));
    }

    // Over the capacity: does not fit, and the verdict names the peak, the batch and the capacity.
    void overTheCapacityDoesNotFit() {
        FootprintBase small = hostBase();
        small.capacity_bytes = 300 * MiB;
        small.capacity = "the memory given (300.0 MiB)";
        const FootprintPrediction p = extrapolateFootprint(small, probes(), 64, 1);
        QVERIFY(!p.fits);
        const QString verdict = QString::fromStdString(footprintVerdict(p));
        QVERIFY2(verdict.contains("predicted peak 352.0 MiB"), qPrintable(verdict));
        QVERIFY2(verdict.contains("at batch 64"), qPrintable(verdict));
        QVERIFY2(verdict.contains("> the memory given (300.0 MiB)"), qPrintable(verdict));
    }

    // A GPU's allocated peak leaves the caching allocator's reserve out; fitting counts it in.
    void aGpuFitsWithItsReserve() {
        FootprintBase gpu = hostBase();
        gpu.device = "cuda:0";
        gpu.capacity_bytes = 340 * MiB;
        const FootprintPrediction p = extrapolateFootprint(gpu, probes(), 64, 1);
        QCOMPARE(p.memory.peak_bytes, (4 + 4 + 8 + 48 + 200) * MiB);
        QVERIFY(!p.fits);   // 264 MiB allocated + 88 MiB reserve > 340 MiB
        gpu.capacity_bytes = 400 * MiB;
        QVERIFY(extrapolateFootprint(gpu, probes(), 64, 1).fits);
    }

    // On a GPU the run's breakdown calls activations what a forward keeps for its backward, and
    // the peak's other temporaries other: the prediction splits its peak the same way, the peak
    // itself unchanged. A host's split is not touched.
    void aGpuSplitsActivationsAsTheRunDoes() {
        FootprintBase gpu = hostBase();
        gpu.device = "cuda:0";
        std::vector<FootprintProbe> measured = probes();
        measured[0].kept_bytes = 10 * MiB;   // batch 32
        measured[1].kept_bytes = 5 * MiB;    // batch 16
        const FootprintPrediction whole = extrapolateFootprint(gpu, probes(), 64, 1);
        const FootprintPrediction split = extrapolateFootprint(gpu, measured, 64, 1);
        QCOMPARE(split.memory.peak_bytes, whole.memory.peak_bytes);
        QCOMPARE(split.memory.activations_bytes, 20 * MiB);           // the kept bytes' line at 64
        QCOMPARE(split.memory.other_bytes, (200 + 48 - 20) * MiB);   // the rest of the 48 MiB
        QCOMPARE(extrapolateFootprint(hostBase(), measured, 64, 1).memory.activations_bytes, 48 * MiB);
        // The CLI extends the probes of fresh processes from a prediction's base (through JSON): the
        // temporaries moved into other are not part of it, and the peak stays the probes'.
        const FootprintPrediction child = footprintFromJson(footprintJson(split));
        QCOMPARE(child.temporaries_bytes, 28 * MiB);
        QCOMPARE(footprintBaseOf(child).other_bytes, 200 * MiB);
        const FootprintPrediction again = extrapolateFootprint(footprintBaseOf(child), measured, 64, 1);
        QCOMPARE(again.memory.peak_bytes, whole.memory.peak_bytes);
        QCOMPARE(again.memory.other_bytes, split.memory.other_bytes);
    }

    void predictedAgainstMeasured() {
        const FootprintPrediction p = extrapolateFootprint(hostBase(), probes(), 64, 1);
        MemoryBreakdown measured;
        measured.device = "cpu";
        measured.peak_bytes = 320 * MiB;
        measured.activations_bytes = 48 * MiB;
        EpochMetrics warm, steady;
        steady.samples_per_sec = 1000.0;   // 64 samples a step: 64 ms
        const FootprintCheck c = checkFootprint(p, measured, {warm, steady});
        QVERIFY(c.peak_error);
        QCOMPARE(*c.peak_error, (352.0 - 320.0) / 320.0);
        QCOMPARE(*c.activations_error, 0.0);
        QCOMPARE(c.measured_step_ms, 64.0);
        QCOMPARE(*c.step_error, (60.0 - 64.0) / 64.0);
        QCOMPARE(footprintErrorText(c.peak_error), std::string("+10.0%"));
        QCOMPARE(footprintErrorText(std::nullopt), std::string("—"));

        // A run that measured nothing (no optimizer step) has nothing to set against.
        const FootprintCheck none = checkFootprint(p, MemoryBreakdown{}, {});
        QVERIFY(!none.peak_error && !none.step_error);
    }

    void jsonKeepsEveryPart() {
        FootprintPrediction p = extrapolateFootprint(hostBase(), probes(), 64, 2);
        p.world_size = 2;
        p.probe_s = 1.5;
        const FootprintPrediction back = footprintFromJson(footprintJson(p));
        QCOMPARE(back.memory.peak_bytes, p.memory.peak_bytes);
        QCOMPARE(back.memory.activations_bytes, p.memory.activations_bytes);
        QCOMPARE(back.memory.reserved_unused_bytes, p.memory.reserved_unused_bytes);
        QCOMPARE(back.accumulate, int64_t{2});
        QCOMPARE(back.world_size, int64_t{2});
        QCOMPARE(back.step_ms, p.step_ms);
        QCOMPARE(back.capacity, p.capacity);
        QCOMPARE(back.probes.size(), size_t{2});
        QCOMPARE(back.probes[1].workspace_bytes, 46 * MiB);
        p.probes[1].pass_bytes = 7 * MiB;
        p.probes[1].optimizer_bytes = 3 * MiB;
        p.probes[1].kept_bytes = 5 * MiB;
        p.probes[1].timed_micro_batches = 8;
        const FootprintPrediction phases = footprintFromJson(footprintJson(p));
        QCOMPARE(phases.probes[1].pass_bytes, 7 * MiB);
        QCOMPARE(phases.probes[1].optimizer_bytes, 3 * MiB);
        QCOMPARE(phases.probes[1].kept_bytes, 5 * MiB);
        QCOMPARE(phases.probes[1].timed_micro_batches, int64_t{8});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, footprintFromJson("[1, 2]"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, footprintFromJson("{\"batch_size\": \"many\"}"));
    }

    // The sweep's plan keeps each step's prediction and why a step was not run.
    void thePlanKeepsPredictionsAndStepsNotRun() {
        LadderPlan plan;
        plan.device_memory_bytes = int64_t{16} * 1024 * MiB;
        std::vector<LadderStep> steps(2);
        steps[0].label = "baseline";
        steps[0].prediction = extrapolateFootprint(hostBase(), probes(), 64, 1);
        steps[1].label = "+ workers";
        steps[1].not_run = "predicted peak 2.00 GiB > the memory given (1.00 GiB)";
        const StoredLadderPlan back = ladderPlanFromJson(ladderPlanJson(plan, steps));
        QCOMPARE(back.plan.device_memory_bytes, plan.device_memory_bytes);
        QVERIFY(!ladderPlanFromJson(ladderPlanJson(LadderPlan{}, steps)).plan.device_memory_bytes);
        QVERIFY(back.steps[0].prediction);
        QCOMPARE(back.steps[0].prediction->memory.peak_bytes, steps[0].prediction->memory.peak_bytes);
        QVERIFY(back.steps[0].not_run.empty());
        QVERIFY(!back.steps[1].prediction);
        QCOMPARE(back.steps[1].not_run, steps[1].not_run);
    }
};

QTEST_GUILESS_MAIN(TestFootprint)
#include "test_footprint.moc"
