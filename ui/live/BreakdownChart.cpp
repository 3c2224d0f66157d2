#include "ui/live/BreakdownChart.h"

#include "engine/metrics/RunProfile.h"
#include "ui/widgets/Format.h"
#include "ui/widgets/PlotTheme.h"

#include <QLabel>
#include <QVBoxLayout>

#include <qcustomplot.h>

namespace hearth::ui {

namespace {

QStringList partLabels()
{
    QStringList names;
    for (const auto& p : hearth::breakdownParts(hearth::StepBreakdown{}))
        names << qstr(p.label);
    return names;
}

}  // namespace

BreakdownChart::BreakdownChart(QWidget* parent)
    : QWidget(parent), m_plot(new QCustomPlot(this)), m_latest(new QLabel(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_latest->setObjectName(QStringLiteral("breakdownLatest"));
    m_latest->setWordWrap(true);
    layout->addWidget(m_latest);
    layout->addWidget(m_plot, 1);
    applyPlotTheme(m_plot);
    enablePlotInteractions(m_plot);
    // A compact strip under the curves: the line above says what it shows, the axes stay bare.
    m_plot->yAxis->setLabel(tr("ms"));
    m_plot->setMinimumHeight(110);
    const QStringList names = partLabels();
    m_stacked.resize(static_cast<size_t>(names.size()));
    // Drawn top part first so each fills down to the part below it.
    for (int i = 0; i < names.size(); ++i) {
        QCPGraph* g = m_plot->addGraph();
        g->setName(names[i]);
        QColor c = seriesColor(i);
        g->setPen(QPen(c.darker(120)));
        c.setAlpha(170);
        g->setBrush(c);
        if (i > 0)
            g->setChannelFillGraph(m_plot->graph(i - 1));
    }
    // The legend as wrapped text: whole names at any width, and no minimum width for the window.
    auto* legend = new QLabel(seriesLegendHtml(names), this);
    legend->setWordWrap(true);
    legend->setTextFormat(Qt::RichText);
    layout->addWidget(legend);
    m_latest->setMinimumWidth(50);
    clear();
}

void BreakdownChart::clear()
{
    m_x.clear();
    for (auto& s : m_stacked)
        s.clear();
    m_latest->setText(tr("Where a step's time goes (ms per micro-batch, one optimizer step in "
                         "trainer.profile_every_n_steps)"));
    redraw();
}

double BreakdownChart::stackedValue(int part, int i) const
{
    if (part < 0 || static_cast<size_t>(part) >= m_stacked.size() || i < 0 || i >= m_x.size())
        return 0.0;
    return m_stacked[static_cast<size_t>(part)][i];
}

void BreakdownChart::appendSteps(const std::vector<hearth::StepMetrics>& steps)
{
    const hearth::StepMetrics* last = nullptr;
    for (const auto& s : steps) {
        if (s.breakdown.profiled <= 0)
            continue;
        m_x.push_back(static_cast<double>(s.global_step));
        double sum = 0.0;
        const auto parts = hearth::breakdownParts(s.breakdown);
        for (size_t p = 0; p < parts.size() && p < m_stacked.size(); ++p) {
            sum += parts[p].value;
            m_stacked[p].push_back(sum);
        }
        last = &s;
    }
    if (!last)
        return;
    QStringList shares;
    const auto parts = hearth::breakdownParts(last->breakdown);
    const double step = std::max(last->breakdown.step_ms, 1e-9);
    for (const auto& p : parts) {
        if (p.value / step >= 0.005)
            shares << QStringLiteral("%1 %2").arg(qstr(p.label), formatPercent(p.value / step, 0));
    }
    m_latest->setText(tr("Where a step's time goes — step %1: %2 ms per micro-batch; %3")
                          .arg(last->global_step)
                          .arg(last->breakdown.step_ms, 0, 'f', 2)
                          .arg(shares.join(QStringLiteral(", "))));
    redraw();
}

void BreakdownChart::redraw()
{
    for (int i = 0; i < m_plot->graphCount() && static_cast<size_t>(i) < m_stacked.size(); ++i)
        m_plot->graph(i)->setData(m_x, m_stacked[static_cast<size_t>(i)], /*alreadySorted=*/true);
    if (!m_x.isEmpty()) {
        m_plot->xAxis->setRange(m_x.front(), std::max(m_x.back(), m_x.front() + 1.0));
        double top = 0.0;
        for (double v : m_stacked.back())
            top = std::max(top, v);
        m_plot->yAxis->setRange(0.0, top > 0 ? top * 1.1 : 1.0);
    }
    if (isVisible())
        m_plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace hearth::ui
