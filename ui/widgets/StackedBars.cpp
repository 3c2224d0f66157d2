#include "ui/widgets/StackedBars.h"

#include "ui/widgets/PlotTheme.h"

#include <QLabel>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>

namespace hearth::ui {

StackedBars::StackedBars(const QString& valueLabel, QWidget* parent)
    : QWidget(parent), m_plot(new QCustomPlot(this)), m_legend(new QLabel(this)), m_valueLabel(valueLabel),
      m_format([](double v) { return QString::number(v, 'g', 4); })
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    // The legend as wrapped text above the plot: whole names at any width, never over the bars.
    m_legend->setWordWrap(true);
    m_legend->setTextFormat(Qt::RichText);
    layout->addWidget(m_legend);
    layout->addWidget(m_plot, 1);
    layout->addStretch();   // the plot stops at its maximum height: the rest goes below it, not above the legend
    applyPlotTheme(m_plot);
    rebuild();
}

void StackedBars::setParts(const QStringList& parts, std::function<QString(double)> format)
{
    if (parts == m_parts && !format)
        return;   // the same names (ProfileBars sets them with every selection): nothing to redraw
    m_parts = parts;
    if (format)
        m_format = std::move(format);
    rebuild();
}

void StackedBars::setRows(std::vector<Row> rows)
{
    m_rows = std::move(rows);
    rebuild();
}

void StackedBars::setEmptyText(const QString& text)
{
    m_emptyText = text;
    rebuild();
}

double StackedBars::value(int row, int part) const
{
    if (row < 0 || row >= rowCount())
        return 0.0;
    const auto& v = m_rows[static_cast<size_t>(row)].values;
    return part >= 0 && static_cast<size_t>(part) < v.size() ? v[static_cast<size_t>(part)] : 0.0;
}

double StackedBars::total(int row) const
{
    double sum = 0.0;
    for (int p = 0; p < m_parts.size(); ++p)
        sum += std::max(0.0, value(row, p));
    return sum;
}

std::vector<bool> StackedBars::shownParts() const
{
    std::vector<bool> shown(static_cast<size_t>(m_parts.size()), m_rows.empty());
    for (int p = 0; p < m_parts.size(); ++p)
        for (int r = 0; r < rowCount(); ++r)
            if (value(r, p) > 0.0)
                shown[static_cast<size_t>(p)] = true;
    return shown;
}

QStringList StackedBars::legendParts() const
{
    const auto shown = shownParts();
    QStringList names;
    for (int p = 0; p < m_parts.size(); ++p)
        if (shown[static_cast<size_t>(p)])
            names << m_parts[p];
    return names;
}

void StackedBars::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    rebuild();   // label eliding and the room for totals follow the width
}

void StackedBars::rebuild()
{
    m_plot->clearPlottables();
    m_plot->clearItems();
    const int rows = rowCount();
    // Rows top to bottom in the order given: the first row at the top.
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    // Long run names keep their start and end ("#4 fashion-c…accumulation"), so bars keep the width.
    const QFontMetrics metrics(m_plot->yAxis->tickLabelFont());
    for (int r = 0; r < rows; ++r)
        ticker->addTick(rows - 1 - r, metrics.elidedText(m_rows[static_cast<size_t>(r)].label, Qt::ElideMiddle,
                                                         std::clamp(width() / 3, 60, 220)));
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->xAxis->setLabel(m_valueLabel);
    QCPBars* below = nullptr;
    double maxTotal = 0.0;
    int labelWidth = 0;
    for (int p = 0; p < m_parts.size(); ++p) {
        auto* bars = new QCPBars(m_plot->yAxis, m_plot->xAxis);
        bars->setName(m_parts[p]);
        const QColor c = seriesColor(p);
        bars->setPen(QPen(c.darker(130)));
        bars->setBrush(c);
        bars->setWidth(0.6);
        if (below)
            bars->moveAbove(below);
        for (int r = 0; r < rows; ++r)
            bars->addData(rows - 1 - r, std::max(0.0, value(r, p)));
        below = bars;
    }
    for (int r = 0; r < rows; ++r) {
        const double t = total(r);
        maxTotal = std::max(maxTotal, t);
        auto* label = new QCPItemText(m_plot);
        label->position->setType(QCPItemPosition::ptPlotCoords);
        label->position->setAxes(m_plot->xAxis, m_plot->yAxis);
        label->position->setCoords(t, rows - 1 - r);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        label->setPadding(QMargins(4, 0, 0, 0));
        label->setText(m_format(t));
        labelWidth = std::max(labelWidth, QFontMetrics(label->font()).horizontalAdvance(label->text()) + 4);
        label->setColor(palette().color(QPalette::WindowText));
    }
    m_plot->legend->setVisible(false);
    m_legend->setText(seriesLegendHtml(m_parts, shownParts()));
    // Room after the longest bar for its total, at whatever width the plot gets.
    fitBarValueAxis(m_plot, maxTotal, labelWidth);
    m_plot->yAxis->setRange(-0.6, std::max(rows, 1) - 0.4);
    if (rows == 0 && !m_emptyText.isEmpty()) {
        auto* text = new QCPItemText(m_plot);
        text->position->setType(QCPItemPosition::ptAxisRectRatio);
        text->position->setCoords(0.5, 0.5);
        text->setText(m_emptyText);
        text->setColor(palette().color(QPalette::PlaceholderText));
    }
    // Each bar gets room for its label; the legend and axis take the rest.
    m_plot->setMinimumHeight(std::max(100, 26 * rows + 50));
    m_plot->setMaximumHeight(std::max(160, 44 * rows + 90));   // few rows: bars, not slabs
    m_plot->replot();
}

}  // namespace hearth::ui
