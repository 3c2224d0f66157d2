#pragma once
// CompareLegend: the compared runs beside the curves instead of inside them: a scrollable list
// with each run's colour swatch and a filter line for long lists. Coloured by a group (sweep,
// tag, a categorical setting) the runs sit under one entry per group; coloured by a numeric
// setting they are listed by its value. Pointing at an entry highlights its curve; clicking one
// keeps it highlighted until it is clicked again.

#include "ui/compare/CompareRun.h"
#include "ui/compare/RunColoring.h"

#include <QWidget>

#include <vector>

class QLabel;
class QLineEdit;
class QTreeWidget;
class QTreeWidgetItem;

namespace hearth::ui {

class CompareLegend final : public QWidget {
    Q_OBJECT

public:
    static constexpr int RunRole = Qt::UserRole;   // the run's index, -1 on a group entry

    explicit CompareLegend(QWidget* parent = nullptr);

    void setRuns(const std::vector<CompareRun>& runs, const RunColors& colors);
    int runCount() const { return m_runCount; }            // run entries
    int visibleRunCount() const;                             // run entries the filter leaves
    QTreeWidgetItem* itemForRun(int run) const;
    int pinnedRun() const { return m_pinned; }               // -1: none
    void setPinnedRun(int run);
    void setFilterText(const QString& text);
    QTreeWidget* tree() const { return m_tree; }

Q_SIGNALS:
    void runHovered(int run);    // -1 when the pointer leaves the entries
    void runPinned(int run);     // -1 when unpinned

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void applyFilter();

    QLabel* m_title;
    QLineEdit* m_filter;
    QTreeWidget* m_tree;
    std::vector<QTreeWidgetItem*> m_items;   // by run index
    int m_runCount = 0;
    int m_pinned = -1;
};

}  // namespace hearth::ui
