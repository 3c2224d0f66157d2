#include "ui/live/LivePlots.h"

#include "ui/widgets/PlotTheme.h"

#include <QEvent>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPainter>
#include <QSettings>
#include <QSlider>
#include <QToolButton>
#include <QVBoxLayout>

#include <qcustomplot.h>

namespace hearth::ui {

namespace {

// Width 1 for long series: QPainter strokes wider antialiased polylines an order of magnitude
// slower (a 1,250-step loss curve at 2 px took ~9 ms per replot, at 1 px under 1 ms).
QCPGraph* addGraph(QCustomPlot* plot, const QString& name, const QColor& color, double width = 1.0,
                   QCPAxis* valueAxis = nullptr)
{
    QCPGraph* graph = plot->addGraph(plot->xAxis, valueAxis ? valueAxis : plot->yAxis);
    graph->setName(name);
    graph->setPen(QPen(color, width));
    graph->setAdaptiveSampling(true);   // keeps a million-point curve cheap to replot
    return graph;
}

}  // namespace

LivePlots::LivePlots(QWidget* parent)
    : QWidget(parent), m_lossPlot(makePlot(tr("Training loss"), tr("step"), tr("loss"))),
      m_epochPlot(makePlot(tr("Validation"), tr("epoch"), tr("loss"))),
      m_lrPlot(makePlot(tr("Learning rate"), tr("step"), tr("lr"))),
      m_speedPlot(makePlot(tr("Throughput"), tr("step"), tr("samples/s"))), m_smoothingSlider(new QSlider(Qt::Horizontal)),
      m_smoothingLabel(new QLabel)
{
    QColor faint = seriesColor(0);
    faint.setAlpha(70);
    m_lossRaw = addGraph(m_lossPlot, tr("raw"), faint, 1.0);
    m_lossEma = addGraph(m_lossPlot, tr("smoothed"), seriesColor(0), 1.0);

    m_epochPlot->yAxis2->setVisible(true);
    m_epochPlot->yAxis2->setLabel(tr("accuracy"));
    m_epochPlot->yAxis2->setRange(0.0, 1.0);
    m_valLoss = addGraph(m_epochPlot, tr("val loss"), seriesColor(0), 2.0);
    m_trainLossEpoch = addGraph(m_epochPlot, tr("train loss"), seriesColor(0), 1.0);
    m_trainLossEpoch->setPen(QPen(seriesColor(0), 1.0, Qt::DashLine));
    m_valAcc = addGraph(m_epochPlot, tr("val accuracy"), seriesColor(1), 2.0, m_epochPlot->yAxis2);
    for (QCPGraph* g : {m_valLoss, m_trainLossEpoch, m_valAcc})
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
    auto epochTicks = QSharedPointer<QCPAxisTickerFixed>::create();
    epochTicks->setTickStep(1.0);
    epochTicks->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    m_epochPlot->xAxis->setTicker(epochTicks);
    placeLegendBelow(m_epochPlot);
    m_epochHint = new QCPItemText(m_epochPlot);
    m_epochHint->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_epochHint->position->setCoords(0.5, 0.5);
    m_epochHint->setText(tr("Validation runs at the end of each epoch."));
    m_epochHint->setColor(palette().color(QPalette::PlaceholderText));
    m_lr = addGraph(m_lrPlot, tr("learning rate"), seriesColor(2));
    m_lrPlot->yAxis->setNumberFormat(QStringLiteral("gb"));
    m_lrPlot->yAxis->setNumberPrecision(2);
    m_speed = addGraph(m_speedPlot, tr("samples/s"), seriesColor(4));

    auto* grid = new QGridLayout;
    grid->setSpacing(4);
    grid->addWidget(m_lossPlot, 0, 0);
    grid->addWidget(m_epochPlot, 0, 1);
    grid->addWidget(m_lrPlot, 1, 0);
    grid->addWidget(m_speedPlot, 1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(makeToolbar());
    layout->addLayout(grid, 1);

    m_smoothingSlider->setValue(QSettings().value(QStringLiteral("live/smoothing"), 60).toInt());
    setSmoothing(m_smoothingSlider->value() / 100.0);
}

QHBoxLayout* LivePlots::makeToolbar()
{
    m_smoothingSlider->setObjectName(QStringLiteral("smoothingSlider"));
    m_smoothingSlider->setRange(0, 99);
    m_smoothingSlider->setToolTip(tr("Exponential moving average of the training loss; 0 shows the raw values."));
    m_smoothingSlider->setMaximumWidth(220);
    connect(m_smoothingSlider, &QSlider::valueChanged, this, [this](int v) {
        setSmoothing(v / 100.0);
        QSettings().setValue(QStringLiteral("live/smoothing"), v);
    });
    auto* reset = new QToolButton;
    reset->setText(tr("Reset View"));
    reset->setToolTip(tr("Fit every chart to its data again (drag to pan, wheel to zoom)."));
    connect(reset, &QToolButton::clicked, this, &LivePlots::resetView);
    auto* save = new QToolButton;
    save->setText(tr("Save Charts…"));
    connect(save, &QToolButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save Charts"), QStringLiteral("charts.png"),
                                                          tr("PNG image (*.png);;PDF document (*.pdf)"));
        if (!path.isEmpty())
            saveAll(path);
    });

    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Smoothing")));
    bar->addWidget(m_smoothingSlider);
    bar->addWidget(m_smoothingLabel);
    bar->addStretch(1);
    bar->addWidget(reset);
    bar->addWidget(save);
    return bar;
}

QCustomPlot* LivePlots::makePlot(const QString& title, const QString& xLabel, const QString& yLabel)
{
    auto* plot = new QCustomPlot(this);
    plot->setMinimumSize(220, 150);
    plot->plotLayout()->insertRow(0);
    auto* heading = new QCPTextElement(plot, title, QFont(font().family(), font().pointSize(), QFont::DemiBold));
    plot->plotLayout()->addElement(0, 0, heading);
    plot->xAxis->setLabel(xLabel);
    plot->yAxis->setLabel(yLabel);
    enablePlotInteractions(plot);
    applyPlotTheme(plot);
    plot->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(plot, &QCustomPlot::customContextMenuRequested, this,
            [this, plot](const QPoint& pos) { showContextMenu(plot, pos); });
    // Once the user pans or zooms, new data no longer moves the view until "Reset View".
    connect(plot, &QCustomPlot::mouseWheel, this, [this] { m_followData = false; });
    connect(plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        if (e->buttons() & Qt::LeftButton)
            m_followData = false;
    });
    return plot;
}

void LivePlots::showContextMenu(QCustomPlot* plot, const QPoint& pos)
{
    QMenu menu(this);
    menu.addAction(tr("Reset View"), this, &LivePlots::resetView);
    menu.addAction(tr("Save as PNG or PDF…"), this, [this, plot] {
        const auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
        savePlotInteractively(this, plot, title ? title->text().toLower().replace(' ', '-') : QStringLiteral("plot"));
    });
    menu.exec(plot->mapToGlobal(pos));
}

void LivePlots::setMaxEpochs(int64_t epochs)
{
    m_maxEpochs = epochs;
    replot({m_epochPlot});
}

void LivePlots::clear()
{
    for (QCustomPlot* plot : {m_lossPlot, m_epochPlot, m_lrPlot, m_speedPlot}) {
        for (int i = 0; i < plot->graphCount(); ++i)
            plot->graph(i)->data()->clear();
    }
    m_steps.clear();
    m_losses.clear();
    m_emaNumerator = 0.0;
    m_emaWeight = 0.0;
    m_followData = true;
    m_epochHint->setVisible(true);
    replotAll();
}

void LivePlots::appendSteps(const std::vector<hearth::StepMetrics>& steps)
{
    if (steps.empty())
        return;
    QVector<double> x, loss, ema, lr, speed;
    x.reserve(static_cast<int>(steps.size()));
    for (const auto& s : steps) {
        const double step = static_cast<double>(s.global_step);
        x << step;
        loss << s.loss;
        m_emaNumerator = m_smoothing * m_emaNumerator + (1.0 - m_smoothing) * s.loss;
        m_emaWeight = m_smoothing * m_emaWeight + (1.0 - m_smoothing);
        ema << (m_emaWeight > 0 ? m_emaNumerator / m_emaWeight : s.loss);
        lr << s.lr;
        speed << s.samples_per_sec;
    }
    m_steps += x;
    m_losses += loss;
    m_lossRaw->addData(x, loss, true);
    m_lossEma->addData(x, ema, true);
    m_lr->addData(x, lr, true);
    m_speed->addData(x, speed, true);
    replot({m_lossPlot, m_lrPlot, m_speedPlot});
}

void LivePlots::appendEpoch(const hearth::EpochMetrics& e)
{
    const double x = static_cast<double>(e.epoch + 1);
    m_valLoss->addData(x, e.val_loss);
    m_trainLossEpoch->addData(x, e.train_loss);
    m_valAcc->addData(x, e.val_accuracy);
    m_epochHint->setVisible(false);
    replot({m_epochPlot});
}

void LivePlots::setSmoothing(double weight)
{
    m_smoothing = std::clamp(weight, 0.0, 0.99);
    if (m_smoothingSlider->value() != static_cast<int>(std::lround(m_smoothing * 100)))
        m_smoothingSlider->setValue(static_cast<int>(std::lround(m_smoothing * 100)));
    m_smoothingLabel->setText(m_smoothing == 0.0 ? tr("raw") : QString::number(m_smoothing, 'f', 2));
    m_lossRaw->setVisible(m_smoothing > 0.0);
    recomputeEma();
    m_lossPlot->replot(QCustomPlot::rpQueuedReplot);
}

void LivePlots::recomputeEma()
{
    QVector<double> ema;
    ema.reserve(m_losses.size());
    m_emaNumerator = 0.0;
    m_emaWeight = 0.0;
    for (double v : std::as_const(m_losses)) {
        m_emaNumerator = m_smoothing * m_emaNumerator + (1.0 - m_smoothing) * v;
        m_emaWeight = m_smoothing * m_emaWeight + (1.0 - m_smoothing);
        ema << m_emaNumerator / m_emaWeight;
    }
    m_lossEma->setData(m_steps, ema, true);
}

void LivePlots::replotAll()
{
    replot({m_lossPlot, m_epochPlot, m_lrPlot, m_speedPlot});
}

void LivePlots::replot(std::initializer_list<QCustomPlot*> plots)
{
    // Hidden (another tab is shown): draw once when shown again instead of 25 times a second.
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    for (QCustomPlot* plot : plots) {
        if (m_followData)
            fitToData(plot);
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

namespace {

// The union of the value ranges of the visible graphs on `axis`; false when there is no data.
bool dataRange(QCustomPlot* plot, QCPAxis* axis, QCPRange& range)
{
    bool any = false;
    for (int i = 0; i < plot->graphCount(); ++i) {
        QCPGraph* g = plot->graph(i);
        bool found = false;
        const QCPRange r = g->data()->valueRange(found);
        if (!found || g->valueAxis() != axis || !g->visible())
            continue;
        range = any ? QCPRange(std::min(range.lower, r.lower), std::max(range.upper, r.upper)) : r;
        any = true;
    }
    return any;
}

}  // namespace

void LivePlots::fitToData(QCustomPlot* plot)
{
    // Set ranges from the data itself: QCustomPlot's rescale keeps the old span for a constant
    // series (e.g. the learning rate without a schedule), which would then grow on every batch.
    if (plot == m_epochPlot) {
        const double last = std::max<double>(double(m_maxEpochs), m_valLoss->dataCount());
        plot->xAxis->setRange(0.7, std::max(1.0, last) + 0.3);
    } else {
        plot->xAxis->rescale(true);
    }
    QCPRange r;
    if (dataRange(plot, plot->yAxis, r)) {
        const double pad = r.size() > 1e-12 * std::max(1.0, std::abs(r.center())) ? r.size() * 0.06
                                                                                   : std::max(std::abs(r.center()) * 0.5, 1e-3);
        plot->yAxis->setRange(r.lower - pad, r.upper + pad);
    }
    if (plot == m_epochPlot && dataRange(plot, plot->yAxis2, r))
        plot->yAxis2->setRange(std::max(0.0, r.lower - 0.05), std::min(1.0, r.upper + 0.03));
}

void LivePlots::resetView()
{
    m_followData = true;
    replotAll();
}

int LivePlots::pointCount(Plot which) const
{
    switch (which) {
    case Plot::Loss: return m_lossRaw->dataCount();
    case Plot::Epochs: return m_valLoss->dataCount();
    case Plot::LearningRate: return m_lr->dataCount();
    case Plot::Throughput: return m_speed->dataCount();
    }
    return 0;
}

QCustomPlot* LivePlots::plot(Plot which) const
{
    switch (which) {
    case Plot::Loss: return m_lossPlot;
    case Plot::Epochs: return m_epochPlot;
    case Plot::LearningRate: return m_lrPlot;
    case Plot::Throughput: return m_speedPlot;
    }
    return nullptr;
}

bool LivePlots::saveAll(const QString& path)
{
    return saveWidgetImage(this, path);
}

void LivePlots::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_stale) {
        m_stale = false;
        replotAll();
    }
}

void LivePlots::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) {
        for (QCustomPlot* plot : {m_lossPlot, m_epochPlot, m_lrPlot, m_speedPlot}) {
            applyPlotTheme(plot);
            plot->replot(QCustomPlot::rpQueuedReplot);
        }
    }
    QWidget::changeEvent(event);
}

}  // namespace hearth::ui
