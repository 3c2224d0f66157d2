#include "ui/compare/CompareCurves.h"

#include "ui/widgets/PlotTheme.h"

#include <QLabel>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace hearth::ui {

namespace {

constexpr double kHoverPixels = 6.0;
constexpr double kHighlightWidth = 2.5;
constexpr int kVeilAlpha = 200;   // the other curves keep about a fifth of their contrast

double segmentDistance(const QPointF& p, const QPointF& a, const QPointF& b)
{
    const QPointF ab = b - a;
    const double len2 = QPointF::dotProduct(ab, ab);
    const double t = len2 > 0 ? std::clamp(QPointF::dotProduct(p - a, ab) / len2, 0.0, 1.0) : 0.0;
    const QPointF d = p - (a + t * ab);
    return std::hypot(d.x(), d.y());
}

QCPColorGradient compareGradient()
{
    QCPColorGradient g;
    g.clearColorStops();
    for (int i = 0; i <= 4; ++i)
        g.setColorStopAt(i / 4.0, gradientColor(1.0 + i, 1.0, 5.0, false));
    return g;
}

}  // namespace

CompareCurves::CompareCurves(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot), m_hover(new QLabel)
{
    m_plot->setObjectName(QStringLiteral("compareCurves"));
    enablePlotInteractions(m_plot);
    m_plot->setMinimumSize(240, 200);
    m_plot->setAutoAddPlottableToLegend(false);
    m_plot->legend->setVisible(false);
    m_plot->setPlottingHint(QCP::phFastPolylines, true);
    m_plot->setMouseTracking(true);
    m_plot->installEventFilter(this);
    m_plot->addLayer(QStringLiteral("highlight"), m_plot->layer(QStringLiteral("main")), QCustomPlot::limAbove);
    m_top = m_plot->layer(QStringLiteral("highlight"));
    m_top->setMode(QCPLayer::lmBuffered);
    m_veil = new QCPItemRect(m_plot);
    m_veil->setLayer(m_top);
    m_veil->topLeft->setType(QCPItemPosition::ptAxisRectRatio);
    m_veil->topLeft->setCoords(0, 0);
    m_veil->bottomRight->setType(QCPItemPosition::ptAxisRectRatio);
    m_veil->bottomRight->setCoords(1, 1);
    m_veil->setPen(Qt::NoPen);
    m_veil->setSelectable(false);
    m_veil->setVisible(false);
    m_highlightCurve = new QCPCurve(m_plot->xAxis, m_plot->yAxis);
    m_highlightCurve->setLayer(m_top);
    m_highlightCurve->setSelectable(QCP::stNone);
    m_highlightCurve->setVisible(false);
    m_hover->setObjectName(QStringLiteral("compareHover"));
    m_hover->setForegroundRole(QPalette::PlaceholderText);
    m_hover->setText(tr("Point at a curve to name its run."));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_plot, 1);
    layout->addWidget(m_hover);
}

void CompareCurves::setCurves(const std::vector<CompareRun>& runs, CompareMetric metric, CompareXAxis axis,
                              const QString& metricName, const RunColors& colors)
{
    m_plot->clearGraphs();   // the highlight curve is no graph: it stays, emptied
    m_highlightCurve->data()->clear();
    m_labels.clear();
    m_metricName = metricName;
    m_axis = axis;
    m_highlighted = m_hovered = -1;
    for (const auto& run : runs) {
        const CompareCurve& curve = run.curve(metric);
        const QVector<double>& x = curve.x(axis);
        QVector<QCPGraphData> points(curve.size());
        for (qsizetype i = 0; i < curve.size(); ++i)
            points[i] = QCPGraphData(x[i], curve.value[i]);
        QCPGraph* g = m_plot->addGraph();
        g->setName(compareRunLabel(run.summary));
        g->setAdaptiveSampling(true);
        if (curve.size() < 50)
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
        g->data()->set(points, true);
        m_labels << g->name();
    }
    m_plot->xAxis->setLabel(axis == CompareXAxis::Step    ? tr("optimizer step")
                            : axis == CompareXAxis::Epoch ? tr("epoch")
                                                          : tr("seconds"));
    m_plot->yAxis->setLabel(metricName);
    m_plot->rescaleAxes();
    setColors(colors);
}

void CompareCurves::setColors(const RunColors& colors)
{
    m_colors = colors.colors;
    m_colors.resize(static_cast<size_t>(m_plot->graphCount()), QColor(0x80, 0x80, 0x80));
    showColorScale(colors);
    applyPens();
}

void CompareCurves::showColorScale(const RunColors& colors)
{
    if (!colors.numeric) {
        if (m_scale) {
            m_plot->plotLayout()->remove(m_scale);
            m_plot->plotLayout()->simplify();
            m_scale = nullptr;
        }
        return;
    }
    if (!m_scale) {
        m_scale = new QCPColorScale(m_plot);
        m_scale->setGradient(compareGradient());
        m_scale->setBarWidth(10);
        m_plot->plotLayout()->addElement(0, 1, m_scale);
        auto* group = new QCPMarginGroup(m_plot);
        m_plot->axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, group);
        m_scale->setMarginGroup(QCP::msTop | QCP::msBottom, group);
    }
    m_scale->setDataScaleType(colors.logarithmic ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (colors.logarithmic)
        m_scale->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    else
        m_scale->axis()->setTicker(QSharedPointer<QCPAxisTicker>::create());
    const double pad = colors.high > colors.low ? 0.0 : 0.5;
    m_scale->setDataRange(QCPRange(colors.low - pad, colors.high + pad));
    m_scale->axis()->setLabel(colors.key);
    const QColor text = palette().color(QPalette::WindowText);
    m_scale->axis()->setLabelColor(text);
    m_scale->axis()->setTickLabelColor(text);
    m_scale->axis()->setBasePen(QPen(palette().color(QPalette::Mid)));
    m_scale->axis()->setTickPen(QPen(palette().color(QPalette::Mid)));
    m_scale->axis()->setSubTickPen(QPen(palette().color(QPalette::Mid)));
}

void CompareCurves::applyPens()
{
    const int n = m_plot->graphCount();
    for (int i = 0; i < n; ++i) {
        QCPGraph* g = m_plot->graph(i);
        const QColor c = m_colors[static_cast<size_t>(i)];
        g->setPen(QPen(c, 1.0));   // wide antialiased polylines are slow to draw: only the highlighted one
        QCPScatterStyle style = g->scatterStyle();
        if (!style.isNone()) {
            style.setPen(QPen(c));
            style.setBrush(c);
            g->setScatterStyle(style);
        }
    }
    applyPlotTheme(m_plot);
    drawHighlight();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void CompareCurves::drawHighlight()
{
    const bool on = m_highlighted >= 0 && m_highlighted < m_plot->graphCount();
    m_veil->setVisible(on);
    m_highlightCurve->setVisible(on);
    if (!on) {
        m_highlightCurve->data()->clear();
        return;
    }
    QColor veil = m_plot->palette().color(QPalette::Base);
    veil.setAlpha(kVeilAlpha);
    m_veil->setBrush(veil);
    const QCPGraph* g = m_plot->graph(m_highlighted);
    QVector<QCPCurveData> points;
    points.reserve(g->dataCount());
    int t = 0;
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
        points.append(QCPCurveData(t++, it->key, it->value));
    m_highlightCurve->data()->set(points, true);
    m_highlightCurve->setPen(QPen(m_colors[static_cast<size_t>(m_highlighted)], kHighlightWidth));
    QCPScatterStyle style = g->scatterStyle();
    if (!style.isNone())
        style.setSize(style.size() + 2);
    m_highlightCurve->setScatterStyle(style);
}

void CompareCurves::setLogarithmic(bool on)
{
    m_plot->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (on)
        m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    else
        m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    m_plot->yAxis->rescale();   // on a log axis, from the smallest positive value
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool CompareCurves::logarithmic() const
{
    return m_plot->yAxis->scaleType() == QCPAxis::stLogarithmic;
}

bool CompareCurves::othersFaded() const
{
    return m_veil->visible();
}

void CompareCurves::setHighlighted(int run)
{
    if (run >= m_plot->graphCount())
        run = -1;
    if (run == m_highlighted)
        return;
    m_highlighted = run;
    drawHighlight();
    m_top->replot();   // this layer only: the other curves' buffer is kept
}

int CompareCurves::runAt(const QPoint& pos, double* value) const
{
    const QPointF p(pos);
    const double key = m_plot->xAxis->pixelToCoord(p.x());
    int best = -1;
    double bestDistance = kHoverPixels;
    for (int i = 0; i < m_plot->graphCount(); ++i) {
        const QCPGraph* g = m_plot->graph(i);
        const auto& data = *g->data();
        if (data.isEmpty())
            continue;
        auto it = std::lower_bound(data.constBegin(), data.constEnd(), key,
                                   [](const QCPGraphData& d, double k) { return d.key < k; });
        const auto idx = it - data.constBegin();
        const auto pixel = [&](qsizetype j) {
            const auto& d = *(data.constBegin() + j);
            return QPointF(m_plot->xAxis->coordToPixel(d.key), m_plot->yAxis->coordToPixel(d.value));
        };
        const qsizetype last = data.size() - 1;
        double distance = std::hypot(pixel(std::min(idx, last)).x() - p.x(), pixel(std::min(idx, last)).y() - p.y());
        // Min/max decimation zigzags: look at the segments around the pointer, not just one.
        for (qsizetype j = std::max<qsizetype>(1, idx - 1); j <= std::min(last, idx + 1); ++j)
            distance = std::min(distance, segmentDistance(p, pixel(j - 1), pixel(j)));
        if (distance < bestDistance) {
            bestDistance = distance;
            best = i;
            if (value) {
                const auto& a = *(data.constBegin() + std::clamp<qsizetype>(idx - 1, 0, last));
                const auto& b = *(data.constBegin() + std::min(idx, last));
                const double t = b.key > a.key ? std::clamp((key - a.key) / (b.key - a.key), 0.0, 1.0) : 1.0;
                *value = a.value + t * (b.value - a.value);
            }
        }
    }
    return best;
}

QString CompareCurves::hoverText() const
{
    return m_hover->text();
}

QString CompareCurves::xText(double x) const
{
    switch (m_axis) {
    case CompareXAxis::Step: return QString::number(std::llround(x));
    case CompareXAxis::Epoch: return QString::number(x, 'f', 2);
    case CompareXAxis::WallTime: return QString::number(x, 'f', 1);
    }
    return {};
}

void CompareCurves::hover(const QPoint& pos)
{
    double value = 0.0;
    const int run = runAt(pos, &value);
    if (run == m_hovered && run < 0)
        return;
    m_hovered = run;
    if (run < 0) {
        m_hover->setText(tr("Point at a curve to name its run."));
        QToolTip::hideText();
    } else {
        const QString text = tr("%1 — %2 %3 at %4 %5")
                                 .arg(m_labels.value(run), m_metricName, QString::number(value, 'g', 4),
                                      m_plot->xAxis->label(), xText(m_plot->xAxis->pixelToCoord(pos.x())));
        m_hover->setText(text);
        QToolTip::showText(m_plot->mapToGlobal(pos), text, m_plot);
    }
    Q_EMIT runHovered(run);
}

bool CompareCurves::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_plot) {
        if (event->type() == QEvent::MouseMove) {
            const auto* e = static_cast<QMouseEvent*>(event);
            if (e->buttons() == Qt::NoButton)
                hover(e->position().toPoint());
        } else if (event->type() == QEvent::Leave && m_hovered >= 0) {
            m_hovered = -1;
            m_hover->setText(tr("Point at a curve to name its run."));
            Q_EMIT runHovered(-1);
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace hearth::ui
