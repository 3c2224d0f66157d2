#pragma once
// HistoryModel: every run in the store as a table (one row per run, newest first), refreshed
// when the store's change counter moves — so runs added by hearth-cli appear within a second.
// Name, tags and notes are editable and written back to the store.

#include "storage/RunStore.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QTimer>

#include <memory>
#include <vector>

namespace hearth::ui {

class HistoryModel final : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { Id, Name, Status, Started, TrainTime, BestVal, TestAcc, Throughput, PeakMemory, Device, Tags,
                  Notes, ColumnCount };
    static constexpr int SortRole = Qt::UserRole;      // numbers sort as numbers
    static constexpr int RunIdRole = Qt::UserRole + 1;

    explicit HistoryModel(std::shared_ptr<hearth::RunStore> store, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;

    const hearth::RunSummary& run(int row) const { return m_runs.at(static_cast<size_t>(row)); }
    int rowOf(qint64 runId) const;   // -1 when absent
    QStringList allTags() const;
    void deleteRun(qint64 runId);    // throws hearth::StoreError
    void setPollInterval(int ms) { m_poll.setInterval(ms); }

public Q_SLOTS:
    void refresh();                  // re-reads the store now
    void refreshIfChanged();         // re-reads only when the store changed

Q_SIGNALS:
    void refreshed();
    void storeError(const QString& message);

private:
    QVariant display(const hearth::RunSummary& r, int column) const;
    QVariant sortValue(const hearth::RunSummary& r, int column) const;

    std::shared_ptr<hearth::RunStore> m_store;
    std::vector<hearth::RunSummary> m_runs;
    int64_t m_lastChange = -1;
    QTimer m_poll;
};

// Text / status / tag filter over the history; sorts by HistoryModel::SortRole.
class HistoryFilterModel final : public QSortFilterProxyModel {
    Q_OBJECT

public:
    explicit HistoryFilterModel(QObject* parent = nullptr);

    void setText(const QString& text);
    void setStatus(const QString& status);   // "" = any
    void setTag(const QString& tag);         // "" = any

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QString m_text, m_status, m_tag;
};

}  // namespace hearth::ui
