#pragma once
// CompareRun: one run as the Compare tab draws it. The loader thread reads every logged step and
// keeps only what the curves need, decimated to a few thousand points per curve (min/max per
// bucket, so spikes survive), so that hundreds of runs stay cheap to hold and to draw.

#include "storage/RunStore.h"
#include "storage/report/LadderSummary.h"
#include "ui/experiment/ConfigDiff.h"

#include <QList>
#include <QVector>

#include <array>
#include <functional>
#include <optional>
#include <vector>

namespace hearth::ui {

enum class CompareMetric { TrainLoss, ValLoss, ValAccuracy, LearningRate, Throughput };
enum class CompareXAxis { Step, Epoch, WallTime };
inline constexpr int kCompareMetricCount = 5;

// One metric of one run: a point per kept step (or per epoch), with its three possible x values.
struct CompareCurve {
    QVector<double> step, epoch, wall, value;
    const QVector<double>& x(CompareXAxis axis) const
    {
        return axis == CompareXAxis::Step ? step : axis == CompareXAxis::Epoch ? epoch : wall;
    }
    qsizetype size() const { return value.size(); }
};

struct CompareRun {
    hearth::RunSummary summary;
    std::array<CompareCurve, kCompareMetricCount> curves;   // indexed by CompareMetric
    qsizetype loggedSteps = 0;                               // before decimation
    std::optional<hearth::StepBreakdown> breakdown;          // the run's mean (warm-up epoch left out)
    std::optional<hearth::MemoryBreakdown> memory;           // at the peak
    const CompareCurve& curve(CompareMetric m) const { return curves[static_cast<size_t>(m)]; }
};

struct CompareData {
    std::vector<CompareRun> runs;            // in the order asked for; unknown ids left out
    QVector<ConfigDifference> differences;   // values in run order
    // When every run belongs to one ladder: a speed ladder judged (ranges, verdicts, why-lines,
    // the recommendation) over all of its runs; a memory ladder with its table of peaks.
    std::optional<hearth::LadderSummary> ladder;
    std::optional<hearth::MemoryLadderTable> memoryLadder;
};

// The most points a curve keeps: 2,000 up to 200 runs, fewer beyond (400 at 1,000 runs), so a
// comparison never holds or draws more than ~400,000 points per metric.
int curvePointCap(qsizetype runCount);

// Indices of the points to keep of `count` values (value(i)): the first and the last, and the
// minimum and the maximum of each of (cap - 2) / 2 equal buckets in between, in order. All of
// them when count <= cap. NaNs are never chosen as a bucket's extreme unless all are NaN.
std::vector<qsizetype> decimatedIndices(qsizetype count, int cap, const std::function<double(qsizetype)>& value);

// Reads the runs (runs on the loader thread): summaries, decimated curves, differing settings.
CompareData loadCompareData(const hearth::RunStore& store, const QList<qint64>& runIds);

// "#12 name"
QString compareRunLabel(const hearth::RunSummary& summary);

}  // namespace hearth::ui
