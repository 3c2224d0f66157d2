#include "ui/compare/CompareTables.h"

#include "storage/report/RunComparison.h"
#include "storage/report/RunReport.h"
#include "ui/widgets/Format.h"
#include "ui/widgets/SortHeader.h"

#include <QHeaderView>
#include <QObject>
#include <QTableWidget>

namespace hearth::ui {

namespace {

// Holds sorting off while a table is filled (or every setItem re-sorts), and leaves the rows in
// run order with no sort indicator.
class FillGuard {
public:
    explicit FillGuard(QTableWidget* table) : m_table(table)
    {
        m_table->setSortingEnabled(false);
        m_table->setUpdatesEnabled(false);
    }
    ~FillGuard()
    {
        m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
        m_table->setSortingEnabled(true);
        m_table->resizeColumnsToContents();
        // A long run name is elided in its middle (its whole in the tool tip) so that the figures
        // beside it stay in view: the run column keeps 32 characters, as History's names do.
        const int runWidth = m_table->fontMetrics().averageCharWidth() * 32;
        if (m_table->columnWidth(0) > runWidth)
            m_table->setColumnWidth(0, runWidth);
        m_table->setUpdatesEnabled(true);
    }
    FillGuard(const FillGuard&) = delete;
    FillGuard& operator=(const FillGuard&) = delete;

private:
    QTableWidget* m_table;
};

void setCell(QTableWidget* t, int row, int column, const QString& text, std::optional<double> sortValue = {})
{
    auto* item = new SortedCell(text, sortValue);
    item->setTextAlignment(column == 0 ? Qt::AlignLeft | Qt::AlignVCenter : Qt::AlignRight | Qt::AlignVCenter);
    t->setItem(row, column, item);
}

void setRunCell(QTableWidget* t, int row, const CompareRun& run, const RunColors& colors, size_t index)
{
    const QString label = compareRunLabel(run.summary);
    setCell(t, row, 0, label, double(run.summary.id));
    t->item(row, 0)->setToolTip(label);   // whole where the column elides it
    if (index < colors.colors.size())
        t->item(row, 0)->setForeground(colors.colors[index]);
}

QString dash() { return QStringLiteral("–"); }

}  // namespace

SortedCell::SortedCell(const QString& text, std::optional<double> sortValue) : QTableWidgetItem(text)
{
    if (sortValue)
        setData(SortRole, *sortValue);
}

bool SortedCell::operator<(const QTableWidgetItem& other) const
{
    const QVariant a = data(SortRole), b = other.data(SortRole);
    if (a.isValid() && b.isValid())
        return a.toDouble() < b.toDouble();
    if (a.isValid() != b.isValid())
        return a.isValid();
    return text().localeAwareCompare(other.text()) < 0;
}

QTableWidget* makeCompareTable(const QString& objectName)
{
    auto* t = new QTableWidget;
    t->setObjectName(objectName);
    t->setHorizontalHeader(new SortHeader(t));   // the arrow's room only in the sorted column
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->verticalHeader()->hide();
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
    t->setAlternatingRowColors(true);
    t->setWordWrap(false);
    t->setTextElideMode(Qt::ElideMiddle);   // a run name's end tells runs apart as often as its start
    t->horizontalHeader()->setStretchLastSection(true);
    t->horizontalHeader()->setSortIndicatorShown(true);
    // Column widths from the first rows (and the visible ones), not from a thousand.
    t->horizontalHeader()->setResizeContentsPrecision(100);
    // Header and at least four rows stay visible however the splitters are dragged.
    t->setMinimumHeight(t->horizontalHeader()->sizeHint().height() + 4 * (t->fontMetrics().height() + 6) + 4);
    return t;
}

void fillMetricsTable(QTableWidget* table, const std::vector<CompareRun>& runs, qint64 baselineId,
                      const RunColors& colors)
{
    const FillGuard guard(table);
    const QStringList header{QObject::tr("Run"),          QObject::tr("Status"),   QObject::tr("Train time"),
                             QObject::tr("Speed-up"),     QObject::tr("Samples/s"), QObject::tr("Best val acc"),
                             QObject::tr("Test acc"),     QObject::tr("Peak memory"), QObject::tr("TFLOP/s"),
                             QObject::tr("MFU"),          QObject::tr("Device")};
    table->clear();
    table->setColumnCount(static_cast<int>(header.size()));
    table->setHorizontalHeaderLabels(header);
    table->horizontalHeaderItem(3)->setToolTip(
        QObject::tr("Training samples/s against the baseline's: for runs that trained the same samples, the ratio of "
                    "their training times; still right for runs that trained different amounts (epochs, data limit, "
                    "an early stop)"));
    table->setRowCount(static_cast<int>(runs.size()));
    const hearth::RunSummary* baseline = nullptr;
    for (const auto& r : runs) {
        if (r.summary.id == baselineId)
            baseline = &r.summary;
    }
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto& s = runs[i].summary;
        const int row = static_cast<int>(i);
        QString speedup = dash();
        std::optional<double> speedupValue;
        if (baseline)
            speedupValue = hearth::report::speedup(*baseline, s);
        if (speedupValue)
            speedup = s.id == baselineId ? QObject::tr("baseline") : QStringLiteral("%1×").arg(*speedupValue, 0, 'f', 2);
        const auto pct = [](const std::optional<double>& v) { return v ? formatPercent(*v) : dash(); };
        setRunCell(table, row, runs[i], colors, i);
        setCell(table, row, 1, qstr(s.status));
        setCell(table, row, 2, s.train_time_s ? formatDuration(*s.train_time_s) : dash(), s.train_time_s);
        setCell(table, row, 3, speedup, speedupValue);
        setCell(table, row, 4, s.samples_per_sec ? formatRate(*s.samples_per_sec) : dash(), s.samples_per_sec);
        setCell(table, row, 5, pct(s.best_val_accuracy), s.best_val_accuracy);
        setCell(table, row, 6, pct(s.test_accuracy), s.test_accuracy);
        std::optional<double> peak;
        if (s.peak_memory_bytes)
            peak = double(*s.peak_memory_bytes);
        setCell(table, row, 7, s.peak_memory_bytes ? formatBytes(*s.peak_memory_bytes) : dash(), peak);
        setCell(table, row, 8, s.tflops ? qstr(hearth::report::formatCompute(s.tflops, std::nullopt, false)) : dash(), s.tflops);
        setCell(table, row, 9, pct(s.mfu), s.mfu);
        setCell(table, row, 10, qstr(s.device));
    }
}

void fillDifferencesTable(QTableWidget* table, const std::vector<CompareRun>& runs,
                          const QVector<ConfigDifference>& differences, const RunColors& colors)
{
    const FillGuard guard(table);
    QStringList header{QObject::tr("Run")};
    for (const auto& d : differences)
        header << d.key;
    table->clear();
    if (differences.isEmpty() && runs.size() >= 2)
        header << QObject::tr("Differing settings");
    table->setColumnCount(static_cast<int>(header.size()));
    table->setHorizontalHeaderLabels(header);
    table->setRowCount(static_cast<int>(runs.size()));
    for (size_t i = 0; i < runs.size(); ++i) {
        const int row = static_cast<int>(i);
        setRunCell(table, row, runs[i], colors, i);
        for (qsizetype k = 0; k < differences.size(); ++k) {
            const QString& v = differences[k].values.value(qsizetype(i));
            setCell(table, row, int(k) + 1, v.isEmpty() ? dash() : v, settingNumber(v));
        }
        if (differences.isEmpty() && runs.size() >= 2)
            setCell(table, row, 1, QObject::tr("(same configuration apart from the name)"));
    }
}

}  // namespace hearth::ui
