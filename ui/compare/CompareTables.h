#pragma once
// The Compare tab's tables: one row per run, sortable by any column (numbers as numbers). The
// metrics table shows speed-up against a baseline run; the differences table the settings that
// differ, a column each.

#include "ui/compare/CompareRun.h"
#include "ui/compare/RunColoring.h"

#include <QTableWidgetItem>

#include <optional>
#include <vector>

class QTableWidget;

namespace hearth::ui {

// A cell that sorts by a number (SortRole) rather than its text; cells without one sort last.
class SortedCell final : public QTableWidgetItem {
public:
    static constexpr int SortRole = Qt::UserRole + 1;
    SortedCell(const QString& text, std::optional<double> sortValue);
    bool operator<(const QTableWidgetItem& other) const override;
};

QTableWidget* makeCompareTable(const QString& objectName);
// Fills `table` with sorting held off, then lets the user sort it again (rows start in run order).
void fillMetricsTable(QTableWidget* table, const std::vector<CompareRun>& runs, qint64 baselineId,
                      const RunColors& colors);
void fillDifferencesTable(QTableWidget* table, const std::vector<CompareRun>& runs,
                          const QVector<ConfigDifference>& differences, const RunColors& colors);

}  // namespace hearth::ui
