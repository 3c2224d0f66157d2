#include "ui/live/LiveView.h"

#include "ui/live/BreakdownChart.h"
#include "ui/live/DeviceMonitorPanel.h"
#include "ui/live/FailureBanner.h"
#include "ui/live/LivePlots.h"
#include "ui/live/LogPane.h"
#include "ui/live/ProgressPanel.h"
#include "ui/widgets/Format.h"

#include <QDataStream>
#include <QIODevice>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace hearth::ui {

namespace {

QString describeEval(const hearth::EvalReport& r)
{
    return QObject::tr("%1 split: accuracy %2, loss %3 over %4 samples")
        .arg(qstr(r.split), formatPercent(r.report.accuracy))
        .arg(r.loss, 0, 'f', 4)
        .arg(r.report.total);
}

}  // namespace

LiveView::LiveView(QWidget* parent)
    : QWidget(parent), m_banner(new FailureBanner), m_progress(new ProgressPanel), m_plots(new LivePlots),
      m_log(new LogPane), m_devices(new DeviceMonitorPanel), m_breakdown(new BreakdownChart),
      m_vertical(new QSplitter(Qt::Vertical)), m_bottom(new QSplitter(Qt::Horizontal))
{
    m_bottom->addWidget(m_log);
    m_bottom->addWidget(m_breakdown);
    m_bottom->addWidget(m_devices);
    // The breakdown's legend wants the most width; the gauges a line of "… MiB of … GiB · peak …".
    m_bottom->setStretchFactor(0, 3);
    m_bottom->setStretchFactor(1, 4);
    m_bottom->setStretchFactor(2, 3);
    m_vertical->addWidget(m_plots);
    m_vertical->addWidget(m_bottom);
    // The bottom strip holds the log, the step-time breakdown and the device gauges.
    m_vertical->setStretchFactor(0, 3);
    m_vertical->setStretchFactor(1, 2);
    m_vertical->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_banner);
    layout->addWidget(m_progress);
    layout->addWidget(m_vertical, 1);
}

void LiveView::beginRun(qint64 runId, const QString& name)
{
    m_banner->hide();
    m_plots->clear();
    m_breakdown->clear();
    m_log->clear();
    m_devices->clear();
    m_progress->begin(runId, name);
}

void LiveView::showHistory(const std::vector<hearth::StepMetrics>& steps,
                           const std::vector<hearth::EpochMetrics>& epochs)
{
    if (!steps.empty()) {
        m_plots->appendSteps(steps);
        m_breakdown->appendSteps(steps);
        m_progress->setStep(steps.back());
    }
    for (const auto& e : epochs)
        m_plots->appendEpoch(e);
}

void LiveView::showProblem(const QString& title, const QString& message, const QString& suggestion)
{
    m_banner->showProblem(title, message, suggestion);
}

void LiveView::handleEvents(const hearth::ui::EventBatch& batch)
{
    // Sort the batch by kind so every widget updates once per batch, not once per event.
    std::vector<hearth::StepMetrics> steps;
    std::map<std::pair<int64_t, int64_t>, hearth::DeviceSample> latestSample;   // by rank, device
    std::vector<hearth::RankSummary> ranks;
    QStringList lines;
    const auto flushSteps = [&] {
        if (steps.empty())
            return;
        m_plots->appendSteps(steps);
        m_breakdown->appendSteps(steps);
        m_progress->setStep(steps.back());
        steps.clear();
    };
    for (const hearth::Event& event : batch) {
        if (const auto* s = std::get_if<hearth::StepMetrics>(&event)) {
            steps.push_back(*s);
        } else if (const auto* d = std::get_if<hearth::DeviceSample>(&event)) {
            latestSample[{d->rank, d->device}] = *d;
        } else if (const auto* r = std::get_if<hearth::RankSummary>(&event)) {
            ranks.push_back(*r);
            if (r->final)
                lines << describeRank(*r);
        } else if (const auto* l = std::get_if<hearth::LogLine>(&event)) {
            lines << LogPane::format(*l);
        } else {
            flushSteps();   // keep step/epoch order for the progress line
            if (const auto* started = std::get_if<hearth::RunStarted>(&event)) {
                m_progress->setStarted(*started);
                m_devices->setRunDevice(qstr(started->device));
                m_plots->setMaxEpochs(started->max_epochs);
            } else if (const auto* e = std::get_if<hearth::EpochMetrics>(&event)) {
                m_plots->appendEpoch(*e);
                m_progress->setEpoch(*e);
            } else if (const auto* r = std::get_if<hearth::EvalReport>(&event)) {
                lines << describeEval(*r);
            } else if (const auto* f = std::get_if<hearth::RunFinished>(&event)) {
                m_progress->setFinished(*f);
            } else if (const auto* failed = std::get_if<hearth::RunFailed>(&event)) {
                m_progress->setFailed(*failed);
                m_banner->showProblem(tr("The run failed"), qstr(failed->message), qstr(failed->suggestion));
                lines << tr("FAILED: %1").arg(qstr(failed->message));
            }
        }
    }
    flushSteps();
    for (const auto& [key, sample] : latestSample)
        m_devices->addSample(sample);
    for (const auto& r : ranks)
        m_devices->addRank(r);
    m_log->appendLines(lines);
}

QByteArray LiveView::saveSplitterState() const
{
    QByteArray state;
    QDataStream out(&state, QIODevice::WriteOnly);
    out << m_vertical->saveState() << m_bottom->saveState();
    return state;
}

void LiveView::restoreSplitterState(const QByteArray& state)
{
    QDataStream in(state);
    QByteArray vertical, bottom;
    in >> vertical >> bottom;
    if (in.status() == QDataStream::Ok) {
        m_vertical->restoreState(vertical);
        m_bottom->restoreState(bottom);
    }
    // A state saved before a pane was added leaves it (or another) squeezed to nothing.
    const QList<int> sizes = m_bottom->sizes();
    if (std::any_of(sizes.begin(), sizes.end(), [](int s) { return s < 120; })) {
        const int width = std::max(600, m_bottom->width());
        m_bottom->setSizes({width * 3 / 10, width * 4 / 10, width * 3 / 10});   // as the stretch factors
    }
}

}  // namespace hearth::ui
