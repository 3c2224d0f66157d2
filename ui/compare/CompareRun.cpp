#include "ui/compare/CompareRun.h"

#include "engine/metrics/RunProfile.h"

#include "ui/widgets/Format.h"

#include <algorithm>
#include <cmath>

namespace hearth::ui {

namespace {

double stepValue(const hearth::StepMetrics& s, CompareMetric metric)
{
    switch (metric) {
    case CompareMetric::LearningRate: return s.lr;
    case CompareMetric::Throughput: return s.samples_per_sec;
    default: return s.loss;
    }
}

void buildStepCurves(CompareRun& run, const std::vector<hearth::StepMetrics>& steps, int cap)
{
    for (CompareMetric metric : {CompareMetric::TrainLoss, CompareMetric::LearningRate, CompareMetric::Throughput}) {
        const auto keep = decimatedIndices(static_cast<qsizetype>(steps.size()), cap, [&](qsizetype i) {
            return stepValue(steps[static_cast<size_t>(i)], metric);
        });
        CompareCurve& c = run.curves[static_cast<size_t>(metric)];
        for (QVector<double>* v : {&c.step, &c.epoch, &c.wall, &c.value})
            v->reserve(static_cast<qsizetype>(keep.size()));
        for (qsizetype i : keep) {
            const auto& s = steps[static_cast<size_t>(i)];
            c.step << double(s.global_step);
            c.epoch << s.epoch + (s.batches_per_epoch > 0 ? double(s.batch) / double(s.batches_per_epoch) : 0.0);
            c.wall << s.elapsed_s;
            c.value << stepValue(s, metric);
        }
    }
}

void buildEpochCurves(CompareRun& run, const std::vector<hearth::EpochMetrics>& epochs)
{
    CompareCurve& loss = run.curves[static_cast<size_t>(CompareMetric::ValLoss)];
    CompareCurve& accuracy = run.curves[static_cast<size_t>(CompareMetric::ValAccuracy)];
    double wall = 0.0;
    for (const auto& e : epochs) {
        wall += e.epoch_time_s;
        for (CompareCurve* c : {&loss, &accuracy}) {
            c->step << double(e.global_step);
            c->epoch << double(e.epoch + 1);
            c->wall << wall;
        }
        loss.value << e.val_loss;
        accuracy.value << e.val_accuracy;
    }
}

}  // namespace

int curvePointCap(qsizetype runCount)
{
    const qsizetype perRun = 400000 / std::max<qsizetype>(1, runCount);
    return static_cast<int>(std::clamp<qsizetype>(perRun, 400, 2000));
}

std::vector<qsizetype> decimatedIndices(qsizetype count, int cap, const std::function<double(qsizetype)>& value)
{
    std::vector<qsizetype> keep;
    cap = std::max(cap, 4);
    if (count <= cap) {
        for (qsizetype i = 0; i < count; ++i)
            keep.push_back(i);
        return keep;
    }
    const qsizetype buckets = (cap - 2) / 2;
    const qsizetype inner = count - 2;   // the first and the last are kept as they are
    keep.reserve(static_cast<size_t>(2 * buckets + 2));
    keep.push_back(0);
    for (qsizetype b = 0; b < buckets; ++b) {
        const qsizetype begin = 1 + b * inner / buckets;
        const qsizetype end = 1 + (b + 1) * inner / buckets;
        qsizetype lo = -1, hi = -1;
        double loValue = 0.0, hiValue = 0.0;
        for (qsizetype i = begin; i < end; ++i) {
            const double v = value(i);
            if (std::isnan(v))
                continue;
            if (lo < 0 || v < loValue) {
                lo = i;
                loValue = v;
            }
            if (hi < 0 || v > hiValue) {
                hi = i;
                hiValue = v;
            }
        }
        if (lo < 0) {
            if (begin < end)
                keep.push_back(begin);   // all NaN: one point shows the gap
            continue;
        }
        keep.push_back(std::min(lo, hi));
        if (hi != lo)
            keep.push_back(std::max(lo, hi));
    }
    keep.push_back(count - 1);
    return keep;
}

CompareData loadCompareData(const hearth::RunStore& store, const QList<qint64>& runIds)
{
    CompareData data;
    const int cap = curvePointCap(runIds.size());
    QStringList configs;
    for (qint64 id : runIds) {
        try {
            auto summary = store.run(id);
            if (!summary)
                continue;
            CompareRun run;
            run.summary = std::move(*summary);
            const auto steps = store.steps(id);
            run.loggedSteps = static_cast<qsizetype>(steps.size());
            buildStepCurves(run, steps, cap);
            const auto epochs = store.epochs(id);
            buildEpochCurves(run, epochs);
            run.breakdown = hearth::meanBreakdown(epochs);
            run.memory = store.memoryBreakdown(id);
            configs << qstr(run.summary.config_json);
            data.runs.push_back(std::move(run));
        } catch (const std::exception&) {
            continue;   // deleted meanwhile: compare the others
        }
    }
    data.differences = diffConfigs(configs);
    return data;
}

QString compareRunLabel(const hearth::RunSummary& summary)
{
    return QStringLiteral("#%1 %2").arg(summary.id).arg(qstr(summary.name));
}

}  // namespace hearth::ui
