#include "ui/tune/LrFinderDialog.h"

#include "ui/tune/FinderRunner.h"
#include "ui/widgets/PlotTheme.h"

#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <cmath>

namespace hearth::ui {
namespace {

std::optional<double> positiveNumber(const QLineEdit* field)
{
    bool ok = false;
    const double v = field->text().trimmed().toDouble(&ok);
    if (!ok || !(v > 0.0) || !std::isfinite(v))
        return std::nullopt;
    return v;
}

}  // namespace

LrFinderDialog::LrFinderDialog(const hearth::ExperimentConfig& config, QWidget* parent)
    : FinderDialog(config, tr("Find Learning Rate"),
                   tr("Trains the experiment's model for a few steps while the learning rate grows exponentially, "
                      "and suggests the rate where the smoothed loss falls fastest. The model you then train is "
                      "not changed."),
                   parent),
      m_minLr(new QLineEdit(QStringLiteral("1e-7"))), m_maxLr(new QLineEdit(QStringLiteral("1"))),
      m_steps(new QSpinBox), m_plot(new QCustomPlot)
{
    setObjectName(QStringLiteral("lrFinderDialog"));
    m_steps->setRange(5, 10000);
    m_steps->setValue(100);
    settingsLayout()->addRow(tr("Smallest learning rate:"), m_minLr);
    settingsLayout()->addRow(tr("Largest learning rate:"), m_maxLr);
    settingsLayout()->addRow(tr("Optimizer steps:"), m_steps);

    applyPlotTheme(m_plot);
    m_plot->setMinimumSize(520, 300);
    m_plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    m_plot->xAxis->setNumberFormat(QStringLiteral("eb"));
    m_plot->xAxis->setNumberPrecision(0);
    m_plot->xAxis->setLabel(tr("learning rate"));
    m_plot->yAxis->setLabel(tr("loss"));
    QColor faint = seriesColor(0);
    faint.setAlpha(70);
    m_plot->addGraph()->setPen(QPen(faint, 1.0));
    m_plot->graph(0)->setName(tr("loss"));
    m_plot->addGraph()->setPen(QPen(seriesColor(0), 2.0));
    m_plot->graph(1)->setName(tr("smoothed loss"));
    m_plot->addGraph()->setPen(Qt::NoPen);
    m_plot->graph(2)->setName(tr("suggestion"));
    m_plot->graph(2)->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, seriesColor(1), seriesColor(1), 10));
    m_plot->legend->setVisible(true);
    // Bottom left: the sweep starts high at the small rates and climbs again at the large ones.
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignLeft);
    resultsLayout()->addWidget(m_plot, 1);
    resize(640, 620);
    for (QLineEdit* field : {m_minLr, m_maxLr})
        connect(field, &QLineEdit::textChanged, this, [this] {
            if (showSweepRange())
                m_plot->replot(QCustomPlot::rpQueuedReplot);
        });
    showSweepRange();
    connect(runner(), &FinderRunner::lrPointsChanged, this, [this] { showLrPoints(runner()->lrPoints()); });
}

bool LrFinderDialog::showSweepRange()
{
    const auto minLr = positiveNumber(m_minLr);
    const auto maxLr = positiveNumber(m_maxLr);
    if (!minLr || !maxLr || *maxLr <= *minLr)
        return false;
    m_plot->xAxis->setRange(*minLr, *maxLr);
    return true;
}

void LrFinderDialog::showLrPoints(const std::vector<hearth::LrPoint>& points)
{
    QVector<double> lr, loss, smoothed;
    for (const auto& p : points) {
        if (!std::isfinite(p.smoothed_loss))
            continue;
        lr << p.lr;
        loss << (std::isfinite(p.loss) ? p.loss : p.smoothed_loss);
        smoothed << p.smoothed_loss;
    }
    m_plot->graph(0)->setData(lr, loss, true);
    m_plot->graph(1)->setData(lr, smoothed, true);
    m_plot->yAxis->rescale();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString LrFinderDialog::startFinder()
{
    const auto minLr = positiveNumber(m_minLr);
    const auto maxLr = positiveNumber(m_maxLr);
    if (!minLr || !maxLr || *maxLr <= *minLr)
        return tr("The learning rates must be numbers with 0 < smallest < largest.");
    hearth::LrFinderOptions options;
    options.min_lr = *minLr;
    options.max_lr = *maxLr;
    options.steps = m_steps->value();
    m_suggestion.reset();
    showLrPoints({});   // the last sweep's curve goes; this one's grows over its range
    m_plot->graph(2)->data()->clear();
    showSweepRange();
    runner()->startLearningRate(m_config, options);
    return {};
}

bool LrFinderDialog::showResult()
{
    return runner()->lrResult() && showLrResult(*runner()->lrResult());
}

bool LrFinderDialog::showLrResult(const hearth::LrFinderResult& result)
{
    showLrPoints(result.points);
    m_suggestion = result.suggestion;
    QString text;
    if (result.suggestion && result.suggestion_index) {
        const auto& p = result.points[*result.suggestion_index];
        m_plot->graph(2)->setData({p.lr}, {p.smoothed_loss}, true);
        text = tr("Suggested learning rate: %1 (steepest descent of the smoothed loss).")
                   .arg(QString::number(*result.suggestion, 'g', 3));
    } else {
        m_plot->graph(2)->data()->clear();
        text = tr("No suggestion: only %n step(s) ran.", nullptr, static_cast<int>(result.points.size()));
    }
    if (result.diverged)
        text += QLatin1Char(' ') + tr("The sweep stopped early where the loss diverged.");
    if (result.stopped)
        text += QLatin1Char(' ') + tr("Stopped before the end.");
    setStatus(text);
    // The sweep's range stays on the x axis (where it diverged shows against it); a result
    // outside it (the fields changed since) gets an axis that fits.
    const QCPRange xs = m_plot->xAxis->range();
    bool found = false;
    const QCPRange drawn = m_plot->graph(1)->getKeyRange(found);
    if (!found || drawn.lower < xs.lower * (1 - 1e-9) || drawn.upper > xs.upper * (1 + 1e-9))
        m_plot->rescaleAxes();
    m_plot->replot();
    return m_suggestion.has_value();
}

void LrFinderDialog::applyResult()
{
    if (m_suggestion)
        Q_EMIT learningRateApplied(QString::number(*m_suggestion, 'g', 3).toDouble());  // as the CLI prints it
}

}  // namespace hearth::ui
