#pragma once
// HistoryView: the history of all runs — search, status and tag filters, sortable columns;
// rename / tag / note / delete; open a run's report or compare the selected runs. Loading and
// store problems show in a line above the table, never in a dialog that waits.

#include <QList>
#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QPushButton;
class QTableView;

namespace hearth::ui {

class HistoryFilterModel;
class HistoryModel;

class HistoryView final : public QWidget {
    Q_OBJECT

public:
    explicit HistoryView(const QString& dbPath, QWidget* parent = nullptr);

    HistoryModel* model() const { return m_model; }
    HistoryFilterModel* filter() const { return m_filter; }
    QTableView* table() const { return m_table; }
    // The line above the table: "Loading runs…", or the last store problem; "" when hidden.
    QString statusText() const;
    QList<qint64> selectedRunIds() const;
    // Selects these runs. A run the list does not show yet (the first load has not arrived, or a
    // run just written that the next refresh brings) is selected when it comes, unless the user
    // has chosen other rows by then.
    void selectRuns(const QList<qint64>& ids);
    // The columns' widths and order as the user left them. Until a state is restored, the first
    // load that lists runs fits the columns to their contents (the table starts empty, and a column
    // as wide as its header shows "fashion…" and "2026-11-…").
    QByteArray saveHeaderState() const;
    void restoreHeaderState(const QByteArray& state);
    // The header's menu (the caller owns it): a checkable entry per column that can be hidden
    // (all but ID and Name) and "Fit Columns". Hidden columns are part of the header state.
    QMenu* columnMenu();

Q_SIGNALS:
    void openReportRequested(qint64 runId);
    void predictRequested(qint64 runId);   // classify new inputs with the run (Report's Predict…)
    void compareRequested(const QList<qint64>& runIds);
    // Resume on a stopped, interrupted or failed run.
    void resumeRequested(qint64 runId);

protected:
    void showEvent(QShowEvent* event) override;

public Q_SLOTS:
    void editTags();
    void editNotes();
    void renameSelected();
    void deleteSelected();

private:
    // The one selected run, when it can be resumed (stopped, interrupted or failed); else 0.
    qint64 resumableSelection() const;
    void updateActions();
    // Selects the listed runs that are shown; true when every one of them was.
    bool applySelection(const QList<qint64>& ids);
    void updateTagFilter();
    void showContextMenu(const QPoint& pos);
    void showStatus(const QString& text, bool problem);
    // Each column as wide as its widest cell, at most about 40 characters (a long name or note).
    // Where that is wider than the table, the free-text columns (name, device, tags, notes) give
    // up width down to a floor, so that the numbers fit without scrolling sideways; their cells
    // elide, and the tooltip shows them whole. Until the table is shown its width is unknown, so
    // a fit asked for before then happens when it is.
    void fitColumns();
    void shrinkTextColumnsToFit();

    HistoryModel* m_model;
    HistoryFilterModel* m_filter;
    QTableView* m_table;
    QLabel* m_status;
    QLineEdit* m_search;
    QComboBox* m_statusFilter;
    QComboBox* m_tag;
    QPushButton* m_open;
    QPushButton* m_compare;
    QPushButton* m_delete;
    QPushButton* m_resume;
    QList<qint64> m_selectWhenLoaded;
    QList<qint64> m_selectedBeforeReset;   // a refresh that adds or removes runs keeps the selection
    bool m_applyingSelection = false;
    bool m_columnsSized = false;   // fitted to the first runs listed, or restored
    // A column the user resized by mouse (or a restored header): refreshes that add runs no longer
    // fit the columns. The stretched last column's resizes follow the window, not the user.
    bool m_columnsByUser = false;
    bool m_fitting = false;
    bool m_contentChanged = false; // runs added or removed, or a name, tags or notes changed, since the last fit
    bool m_fitWhenShown = false;
};

}  // namespace hearth::ui
