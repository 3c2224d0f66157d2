#pragma once
// HistoryView: the history of all runs — search, status and tag filters, sortable columns;
// rename / tag / note / delete; open a run's report or compare the selected runs.

#include <QList>
#include <QWidget>

#include <memory>

class QComboBox;
class QLineEdit;
class QPushButton;
class QTableView;

namespace hearth {
class RunStore;
}

namespace hearth::ui {

class HistoryFilterModel;
class HistoryModel;

class HistoryView final : public QWidget {
    Q_OBJECT

public:
    explicit HistoryView(std::shared_ptr<hearth::RunStore> store, QWidget* parent = nullptr);

    HistoryModel* model() const { return m_model; }
    HistoryFilterModel* filter() const { return m_filter; }
    QTableView* table() const { return m_table; }
    QList<qint64> selectedRunIds() const;
    void selectRuns(const QList<qint64>& ids);
    QByteArray saveHeaderState() const;
    void restoreHeaderState(const QByteArray& state);

Q_SIGNALS:
    void openReportRequested(qint64 runId);
    void compareRequested(const QList<qint64>& runIds);

public Q_SLOTS:
    void editTags();
    void editNotes();
    void renameSelected();
    void deleteSelected();

private:
    void updateActions();
    void updateTagFilter();
    void showContextMenu(const QPoint& pos);

    HistoryModel* m_model;
    HistoryFilterModel* m_filter;
    QTableView* m_table;
    QLineEdit* m_search;
    QComboBox* m_status;
    QComboBox* m_tag;
    QPushButton* m_open;
    QPushButton* m_compare;
    QPushButton* m_delete;
};

}  // namespace hearth::ui
