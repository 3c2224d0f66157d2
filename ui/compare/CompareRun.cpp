#include "ui/compare/CompareRun.h"

#include "engine/metrics/RunProfile.h"
#include "storage/report/RunComparison.h"

#include "ui/widgets/Format.h"

#include <algorithm>

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

// The rules are the comparison report's too (storage/report/RunComparison.h).
int curvePointCap(qsizetype runCount)
{
    return hearth::report::curvePointCap(runCount);
}

std::vector<qsizetype> decimatedIndices(qsizetype count, int cap, const std::function<double(qsizetype)>& value)
{
    const auto kept = hearth::report::decimatedIndices(count, cap, [&value](int64_t i) { return value(qsizetype(i)); });
    return {kept.begin(), kept.end()};
}

CompareData loadCompareData(const hearth::RunStore& store, const QList<qint64>& runIds)
{
    CompareData data;
    const int cap = curvePointCap(runIds.size());
    std::vector<std::string> configs;
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
            configs.push_back(run.summary.config_json);
            data.runs.push_back(std::move(run));
        } catch (const std::exception&) {
            continue;   // deleted meanwhile: compare the others
        }
    }
    for (const auto& d : hearth::report::differingSettings(configs)) {
        ConfigDifference difference{qstr(d.key), {}};
        for (const auto& v : d.values)
            difference.values << qstr(v);
        data.differences << difference;
    }
    try {
        if (auto ladder = hearth::ladderOfRuns(store, hearth::summariesOf(data.runs))) {
            data.ladder = std::move(ladder->summary);
            data.memoryLadder = std::move(ladder->memory);
        }
    } catch (const std::exception&) {
        // an unreadable plan: the curves and tables still show
    }
    return data;
}

QString compareRunLabel(const hearth::RunSummary& summary)
{
    return QStringLiteral("#%1 %2").arg(summary.id).arg(qstr(summary.name));
}

}  // namespace hearth::ui
