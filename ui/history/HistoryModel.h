#pragma once
// HistoryModel: every run in the store as a table (one row per run, newest first), refreshed
// when the store's change counter moves — so runs added by hearth-cli appear within a second.
// Name, tags and notes are editable. Reads go through the model's own StoreLoader and edits
// are jobs on the process's RunWriter: the GUI thread never waits on the database.

#include "storage/RunStore.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace hearth {
class RunWriter;
namespace sqlite {
class Connection;
}
}  // namespace hearth

namespace hearth::ui {

class StoreLoader;

class HistoryModel final : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { Id, Name, Status, Started, TrainTime, BestVal, TestAcc, Throughput, PeakMemory, Device, Tags,
                  Notes, ColumnCount };
    static constexpr int SortRole = Qt::UserRole;      // numbers sort as numbers
    static constexpr int RunIdRole = Qt::UserRole + 1;

    // Starts loading at once; rows appear when the first load arrives.
    explicit HistoryModel(const QString& dbPath, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    // Shows the edit at once and writes it by a writer job; a failure comes as storeError and
    // the row is read again from the store.
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;

    const hearth::RunSummary& run(int row) const { return m_runs.at(static_cast<size_t>(row)); }
    int rowOf(qint64 runId) const;   // -1 when absent
    QStringList allTags() const;
    // A writer job: the row goes when the store has deleted it; a failure comes as storeError.
    void deleteRun(qint64 runId);
    void setPollInterval(int ms) { m_poll.setInterval(ms); }
    bool hasLoaded() const { return m_loaded; }   // the first load has arrived
    bool isLoading() const;
    int pendingEdits() const { return m_pendingEdits; }

public Q_SLOTS:
    void refresh();                  // re-reads the store now (off the GUI thread)
    void refreshIfChanged();         // re-reads only when the store changed

Q_SIGNALS:
    void refreshed();
    // A run's name, tags, notes or device changed (an edit here, or a refresh that read another
    // process's rename): the columns may want other widths.
    void textChanged();
    void storeError(const QString& message);

private:
    struct Snapshot {
        int64_t change = 0;
        std::optional<std::vector<hearth::RunSummary>> runs;   // none when nothing changed
    };

    void load(bool onlyIfChanged);
    void apply(Snapshot snapshot);
    void submitEdit(const QString& what, std::function<void(hearth::sqlite::Connection&)> edit);
    hearth::RunWriter& writer();
    QVariant display(const hearth::RunSummary& r, int column) const;
    QVariant sortValue(const hearth::RunSummary& r, int column) const;

    QString m_dbPath;
    StoreLoader* m_loader;
    std::shared_ptr<hearth::RunWriter> m_writer;   // the process's writer, on the first edit
    std::vector<hearth::RunSummary> m_runs;
    int64_t m_lastChange = -1;
    int m_pendingEdits = 0;          // edits not yet written: loads meanwhile may predate them
    bool m_loaded = false;
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
