#include "ui/compare/CompareBars.h"

#include "ui/compare/CompareTables.h"
#include "ui/widgets/Format.h"
#include "ui/widgets/PlotTheme.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QStackedWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <numeric>

namespace hearth::ui {

namespace {

constexpr int kRowMin = 20;   // pixels per bar: names stay apart
constexpr int kRowMax = 34;   // and a few runs do not make fat bars
constexpr int kPlotChrome = 56;

// In the unit the bar's axis shows.
double shown(double value, CompareBars::Quantity q)
{
    switch (q) {
    case CompareBars::Quantity::TestAccuracy:
    case CompareBars::Quantity::BestValAccuracy: return value * 100.0;
    case CompareBars::Quantity::PeakMemory: return value / (1024.0 * 1024.0);
    default: return value;
    }
}

QString formatted(double value, CompareBars::Quantity q)
{
    switch (q) {
    case CompareBars::Quantity::TrainTime: return formatDuration(value);
    case CompareBars::Quantity::TestAccuracy:
    case CompareBars::Quantity::BestValAccuracy: return formatPercent(value);
    case CompareBars::Quantity::Throughput: return formatRate(value);
    case CompareBars::Quantity::PeakMemory: return formatBytes(static_cast<int64_t>(value));
    }
    return {};
}

}  // namespace

CompareBars::CompareBars(QWidget* parent)
    : QWidget(parent), m_quantity(new QComboBox), m_stack(new QStackedWidget), m_scroll(new QScrollArea),
      m_plot(new QCustomPlot), m_table(makeCompareTable(QStringLiteral("compareBarsTable")))
{
    m_quantity->setObjectName(QStringLiteral("compareBarsQuantity"));
    m_quantity->addItem(tr("Training time (s)"), int(Quantity::TrainTime));
    m_quantity->addItem(tr("Test accuracy (%)"), int(Quantity::TestAccuracy));
    m_quantity->addItem(tr("Best val accuracy (%)"), int(Quantity::BestValAccuracy));
    m_quantity->addItem(tr("Samples/s"), int(Quantity::Throughput));
    m_quantity->addItem(tr("Peak memory (MiB)"), int(Quantity::PeakMemory));
    m_plot->setObjectName(QStringLiteral("compareBars"));
    m_plot->setAutoAddPlottableToLegend(false);
    m_plot->legend->setVisible(false);
    m_plot->installEventFilter(this);
    m_scroll->setWidget(m_plot);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_stack->addWidget(m_scroll);
    m_stack->addWidget(m_table);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Show")));
    bar->addWidget(m_quantity, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(m_stack, 1);
    connect(m_quantity, &QComboBox::currentIndexChanged, this, &CompareBars::redraw);
}

bool CompareBars::eventFilter(QObject* watched, QEvent* event)
{
    // The plot would take the wheel (it zooms elsewhere); here the wheel scrolls the bars.
    if (watched == m_plot && event->type() == QEvent::Wheel) {
        QCoreApplication::sendEvent(m_scroll->verticalScrollBar(), event);
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

std::optional<double> CompareBars::quantityOf(const hearth::RunSummary& s, Quantity q)
{
    switch (q) {
    case Quantity::TrainTime: return s.train_time_s;
    case Quantity::TestAccuracy: return s.test_accuracy;
    case Quantity::BestValAccuracy: return s.best_val_accuracy;
    case Quantity::Throughput: return s.samples_per_sec;
    case Quantity::PeakMemory:
        return s.peak_memory_bytes ? std::optional<double>(double(*s.peak_memory_bytes)) : std::nullopt;
    }
    return std::nullopt;
}

void CompareBars::setRuns(const std::vector<CompareRun>& runs, const RunColors& colors)
{
    m_summaries.clear();
    m_summaries.reserve(runs.size());
    for (const auto& r : runs)
        m_summaries.push_back(r.summary);
    m_colors = colors.colors;
    redraw();
}

void CompareBars::setColors(const RunColors& colors)
{
    m_colors = colors.colors;
    redraw();
}

void CompareBars::setQuantity(Quantity quantity)
{
    m_quantity->setCurrentIndex(m_quantity->findData(int(quantity)));
}

bool CompareBars::showsTable() const
{
    return m_stack->currentWidget() == m_table;
}

void CompareBars::redraw()
{
    const auto q = static_cast<Quantity>(m_quantity->currentData().toInt());
    // Largest first; runs without the value (failed, stopped before test) after the rest.
    m_order.resize(m_summaries.size());
    std::iota(m_order.begin(), m_order.end(), 0);
    std::stable_sort(m_order.begin(), m_order.end(), [&](int a, int b) {
        const auto x = quantityOf(m_summaries[size_t(a)], q), y = quantityOf(m_summaries[size_t(b)], q);
        return x && (!y || *x > *y);
    });
    if (m_summaries.size() > size_t(kMaxBars)) {
        fillTable();
        m_stack->setCurrentWidget(m_table);
    } else {
        drawBars();
        m_stack->setCurrentWidget(m_scroll);
    }
}

void CompareBars::drawBars()
{
    const auto q = static_cast<Quantity>(m_quantity->currentData().toInt());
    m_plot->clearPlottables();
    m_plot->clearItems();
    const QFontMetrics metrics(m_plot->yAxis->tickLabelFont());
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    double maxValue = 0.0;
    int labelWidth = 0;
    int rows = 0;
    for (int run : m_order) {
        const auto& s = m_summaries[size_t(run)];
        const auto value = quantityOf(s, q);
        ++rows;
        ticker->addTick(rows, metrics.elidedText(compareRunLabel(s), Qt::ElideMiddle, kLabelWidth));
        auto* label = new QCPItemText(m_plot);
        label->position->setAxes(m_plot->xAxis, m_plot->yAxis);
        label->position->setCoords(value ? shown(*value, q) : 0.0, rows);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        label->setPadding(QMargins(4, 0, 0, 0));
        label->setText(value ? formatted(*value, q) : QStringLiteral("–"));
        labelWidth = std::max(labelWidth, QFontMetrics(label->font()).horizontalAdvance(label->text()) + 4);
        label->setColor(palette().color(QPalette::WindowText));
        label->setClipToAxisRect(false);
        if (!value)
            continue;
        QColor color = size_t(run) < m_colors.size() ? m_colors[size_t(run)] : seriesColor(0);
        auto* bars = new QCPBars(m_plot->yAxis, m_plot->xAxis);
        bars->setWidth(0.7);
        bars->setPen(QPen(color.darker(120)));
        bars->setBrush(color);
        bars->setName(compareRunLabel(s));
        bars->addData(rows, shown(*value, q));
        maxValue = std::max(maxValue, shown(*value, q));
    }
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->setRangeReversed(true);
    m_plot->yAxis->setRange(0.4, std::max(1.6, rows + 0.6));
    m_plot->yAxis->setSubTicks(false);
    m_plot->yAxis->setTickLength(0, 2);
    m_plot->yAxis->grid()->setVisible(false);
    // Room on the right for the value written after the longest bar, at whatever width the plot gets.
    fitBarValueAxis(m_plot, maxValue, labelWidth);
    m_plot->xAxis->setLabel(m_quantity->currentText());
    m_plot->setMinimumHeight(rows * kRowMin + kPlotChrome);
    m_plot->setMaximumHeight(std::max(rows, 2) * kRowMax + kPlotChrome);
    applyPlotTheme(m_plot);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void CompareBars::fillTable()
{
    const auto q = static_cast<Quantity>(m_quantity->currentData().toInt());
    m_table->setSortingEnabled(false);
    m_table->clear();
    m_table->setColumnCount(2);
    m_table->setHorizontalHeaderLabels({tr("Run"), m_quantity->currentText()});
    m_table->setRowCount(int(m_order.size()));
    for (size_t row = 0; row < m_order.size(); ++row) {
        const int run = m_order[row];
        const auto& s = m_summaries[size_t(run)];
        const auto value = quantityOf(s, q);
        auto* name = new SortedCell(compareRunLabel(s), double(s.id));
        if (size_t(run) < m_colors.size())
            name->setForeground(m_colors[size_t(run)]);
        auto* cell = new SortedCell(value ? formatted(*value, q) : QStringLiteral("–"), value);
        cell->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_table->setItem(int(row), 0, name);
        m_table->setItem(int(row), 1, cell);
    }
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::DescendingOrder);   // rows as m_order has them
    m_table->setSortingEnabled(true);
    m_table->resizeColumnsToContents();
}

}  // namespace hearth::ui
