// What repeated ladder runs are allowed to claim (LadderVerdict) and the why-lines drawn from
// recorded breakdowns (LadderWhy). The breakdowns are the ones real ladders stored: the default
// experiment on this 2-core CPU, and GPU figures from docs/benchmarks/gpu.md.
#include "engine/ladder/LadderVerdict.h"
#include "engine/ladder/LadderWhy.h"

#include <QTest>

using namespace hearth;

namespace {

StepBreakdown breakdown(double data, double h2d, double fwd, double bwd, double comm, double opt, double step) {
    StepBreakdown b;
    b.data_wait_ms = data;
    b.host_to_device_ms = h2d;
    b.forward_ms = fwd;
    b.backward_ms = bwd;
    b.comm_wait_ms = comm;
    b.optimizer_ms = opt;
    b.step_ms = step;
    b.profiled = 40;
    return b;
}

// The default CNN's steady epoch on the CPU, 32-true (the baseline of the ladder run on
// 2026-11-26: 39.96 ms per micro-batch, 0.11 ms of it waiting for data).
StepBreakdown cpuBaseline() { return breakdown(0.11, 0.0, 19.59, 17.86, 0.0, 2.30, 39.96); }

bool mentions(const std::vector<std::string>& lines, const char* text) {
    for (const auto& l : lines)
        if (l.find(text) != std::string::npos) return true;
    return false;
}

QString joined(const std::vector<std::string>& lines) {
    QString s;
    for (const auto& l : lines) s += QString::fromStdString(l) + " | ";
    return s;
}

}  // namespace

class TestLadderVerdict : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void spreadIsMedianMinMax() {
        const Spread s = spreadOf({3.0, 1.0, 2.0, 10.0});
        QCOMPARE(s.n, int64_t(4));
        QCOMPARE(s.median, 2.5);
        QCOMPARE(s.min, 1.0);
        QCOMPARE(s.max, 10.0);
        QCOMPARE(spreadOf({}).n, int64_t(0));
        QCOMPARE(spreadOf({7.0}).median, 7.0);
    }

    // Overlapping ranges are no measurable change, however far apart the medians look; disjoint
    // ranges decide by the medians. One run each: the 5% a single run can be off by stands in.
    void rangesDecideWhatIsMeasurable() {
        QCOMPARE(compareSpeeds(spreadOf({1030, 1100, 1001}), spreadOf({1000, 1010, 1020})),
                 SpeedChange::NoMeasurableChange);
        QCOMPARE(compareSpeeds(spreadOf({1591, 1555, 1651}), spreadOf({1046, 1046, 1101})), SpeedChange::Faster);
        QCOMPARE(compareSpeeds(spreadOf({800, 820, 810}), spreadOf({1000, 1010, 990})), SpeedChange::Slower);
        // Apart, but by less than the runs' own spread: the workers rung beside a CPU-bound process
        // (1,718 against 1,736 samples/s; the bf16 step's runs spread 58).
        QCOMPARE(compareSpeeds(spreadOf({1718, 1712, 1732}), spreadOf({1736, 1735, 1793})),
                 SpeedChange::NoMeasurableChange);
        QCOMPARE(compareSpeeds(spreadOf({1030}), spreadOf({1000})), SpeedChange::NoMeasurableChange);
        QCOMPARE(compareSpeeds(spreadOf({1060}), spreadOf({1000})), SpeedChange::Faster);
        QCOMPARE(compareSpeeds(spreadOf({}), spreadOf({1000})), SpeedChange::Unknown);
        QCOMPARE(speedupText(SpeedChange::NoMeasurableChange, 1.03), std::string("no measurable change (1.03x)"));
        QCOMPARE(speedupText(SpeedChange::Faster, 1.524), std::string("1.52x"));
        // Accuracy: inside the run-to-run spread is the same, outside it higher or lower.
        QCOMPARE(compareAccuracies(spreadOf({0.8257, 0.8037, 0.8275}), spreadOf({0.8202, 0.7982, 0.8312})),
                 AccuracyChange::Same);
        QCOMPARE(compareAccuracies(spreadOf({0.90, 0.91}), spreadOf({0.85, 0.86})), AccuracyChange::Higher);
        QCOMPARE(compareAccuracies(spreadOf({0.861}), spreadOf({0.866})), AccuracyChange::Same);
        QCOMPARE(compareAccuracies(spreadOf({0.84}), spreadOf({0.866})), AccuracyChange::Lower);
    }

    // The recommendation: the fastest step measurably faster than the baseline at an accuracy not
    // measurably lower; a step that bought nothing over the one it built on gives way to it.
    void recommendsTheFastestStepAtTheSameAccuracy() {
        const std::vector<std::string> labels{"baseline", "+ bf16-mixed", "+ workers", "+ accumulation"};
        std::vector<StepRuns> steps{
            {{1046, 1046, 1101}, {0.8202, 0.7982, 0.8312}, 0},
            {{1591, 1555, 1651}, {0.8257, 0.8037, 0.8275}, 0},
            {{1623, 1601, 1679}, {0.8257, 0.8037, 0.8275}, 1},   // no measurable gain over bf16
            {{2400, 2380, 2450}, {0.70, 0.71, 0.69}, 2},          // faster, but it lost accuracy
        };
        LadderVerdict v = judgeLadder(steps, labels);
        QCOMPARE(v.steps[1].change, SpeedChange::Faster);
        QCOMPARE(v.steps[2].change, SpeedChange::NoMeasurableChange);
        QCOMPARE(v.steps[2].change_vs_baseline, SpeedChange::Faster);
        QCOMPARE(v.steps[3].accuracy_change, AccuracyChange::Lower);
        QVERIFY(v.recommended.has_value());
        QCOMPARE(*v.recommended, size_t(1));
        QVERIFY2(QString::fromStdString(v.recommendation).contains("'+ bf16-mixed', 1.52x"),
                 v.recommendation.c_str());
        QVERIFY(QString::fromStdString(v.recommendation).contains("within the run-to-run spread"));

        // Nothing faster at the same accuracy: keep the baseline.
        steps[1].speeds = {1050, 1020, 1090};
        steps[2].speeds = {1060, 1040, 1080};
        v = judgeLadder(steps, labels);
        QVERIFY(!v.recommended);
        QVERIFY2(QString::fromStdString(v.recommendation).contains("keep 'baseline'"), v.recommendation.c_str());

        // A baseline with no completed run: nothing is judged, and the baseline is not recommended.
        steps[0].speeds.clear();
        steps[0].accuracies.clear();
        v = judgeLadder(steps, labels);
        QVERIFY(!v.recommended);
        QVERIFY2(!QString::fromStdString(v.recommendation).contains("keep"), v.recommendation.c_str());
        QVERIFY2(QString::fromStdString(v.recommendation).contains("'baseline' has no completed run"),
                 v.recommendation.c_str());
    }

    // On the CPU the loader rung could not win: the baseline waited 0.3% of a step for data.
    void workersOnACpuThatNeverWaited() {
        WhyEvidence e;
        e.rung = "workers";
        e.change = SpeedChange::NoMeasurableChange;
        e.reference = cpuBaseline();
        e.step = breakdown(0.01, 0.0, 19.00, 18.02, 0.0, 2.31, 39.45);
        const auto lines = whyLines(e);
        QVERIFY2(!lines.empty() && mentions(lines, "Data wait was already 0.3% of a step"), qPrintable(joined(lines)));
        QVERIFY(lines.size() <= 2);
    }

    void dataWaitThatFellAndDataStillWaiting() {
        WhyEvidence e;
        e.rung = "data on device";
        e.change = SpeedChange::Faster;
        e.reference = breakdown(0.9, 0.5, 1.2, 2.0, 0.0, 0.4, 5.2);
        e.step = breakdown(0.0, 0.0, 1.2, 2.0, 0.0, 0.4, 3.7);
        QVERIFY2(mentions(whyLines(e), "Data wait and copies fell from 26.9% to 0.0% of a step"),
                 qPrintable(joined(whyLines(e))));
        // A rung after which most of a step still waits for the loader says so.
        WhyEvidence slow;
        slow.rung = "bf16-mixed";
        slow.change = SpeedChange::NoMeasurableChange;
        slow.reference = breakdown(12.0, 0.2, 5.0, 8.0, 0.0, 1.0, 26.2);
        slow.step = breakdown(14.0, 0.2, 3.0, 5.0, 0.0, 1.0, 23.2);
        QVERIFY2(mentions(whyLines(slow), "60% of a step still waits for data"), qPrintable(joined(whyLines(slow))));
    }

    // bf16 on a GPU that sits idle between launches: the ladder's H200 run (bf16 at 1.03x steady).
    void launchBoundGpuStep() {
        WhyEvidence e;
        e.rung = "bf16-mixed";
        e.change = SpeedChange::NoMeasurableChange;
        e.gpu_busy = 0.15;
        e.reference = breakdown(0.05, 0.02, 0.9, 1.6, 0.0, 0.6, 3.3);
        e.step = breakdown(0.05, 0.02, 1.0, 1.5, 0.0, 0.6, 3.3);
        const auto lines = whyLines(e);
        QVERIFY2(mentions(lines, "The GPU was busy 15% of the time") && mentions(lines, "CUDA graph"),
                 qPrintable(joined(lines)));
        // The CUDA graph rung itself is not told to try the CUDA graph.
        e.rung = "cuda graph";
        QVERIFY(!mentions(whyLines(e), "busy 15%"));
    }

    // zero2 on a machine with room to spare: communication added, memory not needed.
    void shardingWithoutMemoryPressure() {
        WhyEvidence e;
        e.rung = "zero2";
        e.change = SpeedChange::Slower;
        e.reference = breakdown(0.1, 0.1, 4.0, 8.0, 0.1, 1.0, 13.3);
        e.step = breakdown(0.1, 0.1, 4.0, 8.2, 11.1, 0.6, 24.1);
        e.reference_peak_bytes = 756LL << 20;
        e.peak_bytes = 838LL << 20;
        e.device_total_bytes = 140LL << 30;
        const auto lines = whyLines(e);
        QCOMPARE(lines.size(), size_t(2));
        QVERIFY2(mentions(lines, "+11.00 ms of communication wait per micro-batch"), qPrintable(joined(lines)));
        QVERIFY2(mentions(lines, "Peak memory 756.0 MiB -> 838.0 MiB (+11%)") &&
                     mentions(lines, "there was no memory pressure to relieve"),
                 qPrintable(joined(lines)));
    }

    // Faster or slower with no rule of its own: the part of the step that moved most.
    void thePartThatMovedMost() {
        WhyEvidence e;
        e.rung = "bf16-mixed";
        e.change = SpeedChange::Faster;
        e.reference = cpuBaseline();
        e.step = breakdown(0.11, 0.0, 12.0, 10.9, 0.0, 2.3, 25.4);
        // Forward shrank by 7.59 ms, backward by 6.96: forward is named.
        QVERIFY2(mentions(whyLines(e), "Forward fell from 19.59 to 12.00 ms per micro-batch"),
                 qPrintable(joined(whyLines(e))));
        e.change = SpeedChange::Slower;
        e.step = breakdown(0.11, 0.0, 26.0, 18.0, 0.0, 2.3, 46.4);
        QVERIFY2(mentions(whyLines(e), "Forward grew from 19.59 to 26.00 ms per micro-batch"),
                 qPrintable(joined(whyLines(e))));
    }

    void withoutABreakdownItSaysSo() {
        WhyEvidence e;
        e.rung = "bf16-mixed";
        e.change = SpeedChange::Faster;
        const auto lines = whyLines(e);
        QCOMPARE(lines.size(), size_t(1));
        QVERIFY(mentions(lines, "No step-time breakdown was recorded"));
    }
};

QTEST_APPLESS_MAIN(TestLadderVerdict)
#include "test_ladder_verdict.moc"
