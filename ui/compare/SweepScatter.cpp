#include "ui/compare/SweepScatter.h"

#include "ui/widgets/Format.h"
#include "ui/widgets/PlotTheme.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace hearth::ui {

namespace {

std::optional<double> resultOf(const hearth::RunSummary& s, SweepScatter::Result r)
{
    const auto pct = [](const std::optional<double>& v) { return v ? std::optional<double>(*v * 100.0) : v; };
    switch (r) {
    case SweepScatter::Result::TestAccuracy: return pct(s.test_accuracy);
    case SweepScatter::Result::BestValAccuracy: return pct(s.best_val_accuracy);
    case SweepScatter::Result::Throughput: return s.samples_per_sec;
    case SweepScatter::Result::TrainTime: return s.train_time_s;
    }
    return std::nullopt;
}

QCPScatterStyle dot(const QColor& color, double size)
{
    return QCPScatterStyle(QCPScatterStyle::ssDisc, QPen(color.darker(130)), QBrush(color), size);
}

}  // namespace

SweepScatter::SweepScatter(QWidget* parent)
    : QWidget(parent), m_result(new QComboBox), m_setting(new QComboBox), m_hint(new QLabel), m_plot(new QCustomPlot)
{
    m_result->setObjectName(QStringLiteral("scatterResult"));
    m_setting->setObjectName(QStringLiteral("scatterSetting"));
    m_result->addItem(tr("Test accuracy (%)"), int(Result::TestAccuracy));
    m_result->addItem(tr("Best val accuracy (%)"), int(Result::BestValAccuracy));
    m_result->addItem(tr("Samples/s"), int(Result::Throughput));
    m_result->addItem(tr("Training time (s)"), int(Result::TrainTime));
    m_hint->setForegroundRole(QPalette::PlaceholderText);
    m_hint->setText(tr("The runs differ in no setting."));
    m_plot->setObjectName(QStringLiteral("sweepScatter"));
    m_plot->setAutoAddPlottableToLegend(false);
    m_plot->legend->setVisible(false);
    m_plot->setMinimumSize(200, 160);
    m_plot->setMouseTracking(true);
    m_plot->installEventFilter(this);
    enablePlotInteractions(m_plot);
    auto* bar = new QHBoxLayout;
    bar->addWidget(m_result, 1);
    bar->addWidget(new QLabel(tr("against")));
    bar->addWidget(m_setting, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(m_hint);
    layout->addWidget(m_plot, 1);
    connect(m_result, &QComboBox::currentIndexChanged, this, &SweepScatter::redraw);
    connect(m_setting, &QComboBox::currentIndexChanged, this, &SweepScatter::redraw);
}

void SweepScatter::setRuns(const std::vector<CompareRun>& runs, const QVector<ConfigDifference>& differences,
                           const RunColors& colors)
{
    m_summaries.clear();
    for (const auto& r : runs)
        m_summaries.push_back(r.summary);
    m_differences = differences;
    m_colors = colors.colors;
    m_highlighted = -1;
    const QSignalBlocker block(m_setting);
    const QString previous = m_setting->currentText();
    m_setting->clear();
    for (const auto& d : differences)
        m_setting->addItem(d.key);
    m_setting->setCurrentIndex(std::max(0, m_setting->findText(previous)));
    redraw();
}

void SweepScatter::setColors(const RunColors& colors)
{
    m_colors = colors.colors;
    redraw();
}

void SweepScatter::setResult(Result result)
{
    m_result->setCurrentIndex(m_result->findData(int(result)));
}

void SweepScatter::setSetting(const QString& key)
{
    m_setting->setCurrentIndex(m_setting->findText(key));
}

QString SweepScatter::setting() const
{
    return m_setting->currentText();
}

int SweepScatter::graphOfRun(int run) const
{
    return run >= 0 && run < int(m_graphOfRun.size()) ? m_graphOfRun[size_t(run)] : -1;
}

void SweepScatter::redraw()
{
    m_plot->clearGraphs();
    m_categories.clear();
    m_graphOfRun.assign(m_summaries.size(), -1);
    m_runOfGraph.clear();
    const int k = m_setting->currentIndex();
    m_hint->setVisible(k < 0);
    if (k < 0 || k >= m_differences.size()) {
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const ConfigDifference& d = m_differences[k];
    const auto r = static_cast<Result>(m_result->currentData().toInt());
    bool numeric = true;
    double low = std::numeric_limits<double>::infinity(), high = -low;
    for (const QString& v : d.values) {
        if (v.isEmpty())
            continue;
        const auto n = settingNumber(v);
        numeric = numeric && n.has_value();
        if (n) {
            low = std::min(low, *n);
            high = std::max(high, *n);
        }
    }
    if (!numeric) {
        for (const QString& v : d.values) {
            if (!v.isEmpty() && !m_categories.contains(v))
                m_categories << v;
        }
        m_categories.sort();
    }
    for (size_t i = 0; i < m_summaries.size(); ++i) {
        const QString& v = d.values.value(qsizetype(i));
        const auto y = resultOf(m_summaries[i], r);
        if (v.isEmpty() || !y)
            continue;
        const double x = numeric ? *settingNumber(v) : double(m_categories.indexOf(v) + 1);
        QCPGraph* g = m_plot->addGraph();
        g->setLineStyle(QCPGraph::lsNone);
        const QColor c = i < m_colors.size() ? m_colors[i] : seriesColor(0);
        g->setScatterStyle(dot(c, int(i) == m_highlighted ? 12 : 8));
        g->setName(compareRunLabel(m_summaries[i]));
        g->addData(x, *y);
        m_graphOfRun[i] = m_plot->graphCount() - 1;
        m_runOfGraph.push_back(int(i));
    }
    const bool logarithmic = numeric && low > 0 && high / low >= 100.0;
    m_plot->xAxis->setScaleType(logarithmic ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (!numeric) {
        auto ticker = QSharedPointer<QCPAxisTickerText>::create();
        for (qsizetype c = 0; c < m_categories.size(); ++c)
            ticker->addTick(double(c + 1), m_categories[c]);
        m_plot->xAxis->setTicker(ticker);
    } else if (logarithmic) {
        m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    } else {
        m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    }
    m_plot->xAxis->setLabel(d.key);
    m_plot->yAxis->setLabel(m_result->currentText());
    m_plot->rescaleAxes();
    // Keep the points off the frame.
    if (!numeric)
        m_plot->xAxis->setRange(0.5, double(m_categories.size()) + 0.5);
    else if (logarithmic)
        m_plot->xAxis->setRange(low / 1.5, high * 1.5);
    else
        m_plot->xAxis->scaleRange(1.15, m_plot->xAxis->range().center());
    m_plot->yAxis->scaleRange(1.2, m_plot->yAxis->range().center());
    if (m_plot->yAxis->range().size() <= 0)
        m_plot->yAxis->setRange(m_plot->yAxis->range().lower - 1, m_plot->yAxis->range().upper + 1);
    applyPlotTheme(m_plot);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void SweepScatter::setHighlighted(int run)
{
    const int old = graphOfRun(m_highlighted);
    m_highlighted = run;
    for (int g : {old, graphOfRun(run)}) {
        if (g < 0)
            continue;
        const int r = m_runOfGraph[size_t(g)];
        const QColor c = size_t(r) < m_colors.size() ? m_colors[size_t(r)] : seriesColor(0);
        m_plot->graph(g)->setScatterStyle(dot(c, r == m_highlighted ? 12 : 8));
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool SweepScatter::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_plot && event->type() == QEvent::MouseMove) {
        const QPointF p = static_cast<QMouseEvent*>(event)->position();
        int best = -1;
        double bestDistance = 8.0;
        for (int g = 0; g < m_plot->graphCount(); ++g) {
            const auto& point = *m_plot->graph(g)->data()->constBegin();
            const double dx = m_plot->xAxis->coordToPixel(point.key) - p.x();
            const double dy = m_plot->yAxis->coordToPixel(point.value) - p.y();
            if (std::hypot(dx, dy) < bestDistance) {
                bestDistance = std::hypot(dx, dy);
                best = g;
            }
        }
        if (best >= 0) {
            const int run = m_runOfGraph[size_t(best)];
            const auto& point = *m_plot->graph(best)->data()->constBegin();
            QToolTip::showText(m_plot->mapToGlobal(p.toPoint()),
                               tr("%1\n%2 = %3\n%4: %5")
                                   .arg(compareRunLabel(m_summaries[size_t(run)]), m_plot->xAxis->label(),
                                        m_differences[m_setting->currentIndex()].values.value(run),
                                        m_result->currentText(), QString::number(point.value, 'g', 5)),
                               m_plot);
            m_hovered = run;
            Q_EMIT runHovered(run);
        } else if (m_hovered >= 0) {
            m_hovered = -1;
            QToolTip::hideText();
            Q_EMIT runHovered(-1);
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace hearth::ui
