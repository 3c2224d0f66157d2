#include "ui/history/HistoryModel.h"

#include "engine/config/RunName.h"
#include "storage/RunEdits.h"
#include "storage/RunWriter.h"
#include "ui/session/StoreLoader.h"
#include "ui/session/WriterJobs.h"
#include "ui/widgets/Format.h"

#include <algorithm>
#include <set>

namespace hearth::ui {

namespace {

QString joinTags(const std::vector<std::string>& tags)
{
    QStringList out;
    for (const auto& t : tags)
        out << qstr(t);
    return out.join(QStringLiteral(", "));
}

}  // namespace

HistoryModel::HistoryModel(const QString& dbPath, QObject* parent)
    : QAbstractTableModel(parent), m_dbPath(dbPath), m_loader(new StoreLoader(dbPath, this))
{
    m_poll.setInterval(1000);
    connect(&m_poll, &QTimer::timeout, this, &HistoryModel::refreshIfChanged);
    m_poll.start();
    refresh();
}

int HistoryModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_runs.size());
}

int HistoryModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

bool HistoryModel::isLoading() const
{
    return m_loader->isLoading();
}

void HistoryModel::refreshIfChanged()
{
    // A poll never replaces a load in flight: on a slow store it would drop every result.
    if (!m_loader->isLoading())
        load(/*onlyIfChanged=*/true);
}

void HistoryModel::refresh()
{
    load(/*onlyIfChanged=*/false);
}

void HistoryModel::load(bool onlyIfChanged)
{
    const int64_t known = onlyIfChanged ? m_lastChange : -1;
    m_loader->load(
        [known](const hearth::RunStore& store) {
            Snapshot snapshot;
            snapshot.change = store.changeCounter();
            if (known < 0 || snapshot.change != known)
                snapshot.runs = store.listRuns();
            return snapshot;
        },
        [this](Snapshot snapshot) { apply(std::move(snapshot)); },
        [this](const QString& message) { Q_EMIT storeError(message); });
}

void HistoryModel::apply(Snapshot snapshot)
{
    // Read before an edit of ours was written: the rows would undo it for a moment. The edit's
    // completion asks for a fresh load.
    if (m_pendingEdits > 0)
        return;
    m_lastChange = snapshot.change;
    if (!snapshot.runs)
        return;
    auto& runs = *snapshot.runs;
    const bool sameRows = runs.size() == m_runs.size()
        && std::equal(runs.begin(), runs.end(), m_runs.begin(), [](const auto& a, const auto& b) { return a.id == b.id; });
    if (sameRows) {
        // Same runs, new values (e.g. a running run's metrics): keep selection and scroll position.
        const bool sameText = std::equal(runs.begin(), runs.end(), m_runs.begin(), [](const auto& a, const auto& b) {
            return a.name == b.name && a.tags == b.tags && a.notes == b.notes && a.device == b.device;
        });
        m_runs = std::move(runs);
        if (!m_runs.empty())
            Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        if (!sameText)
            Q_EMIT textChanged();
    } else {
        beginResetModel();
        m_runs = std::move(runs);
        endResetModel();
    }
    m_loaded = true;
    Q_EMIT refreshed();
}

QVariant HistoryModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const auto& r = m_runs[static_cast<size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole: return display(r, index.column());
    case Qt::EditRole:
        if (index.column() == Tags)
            return joinTags(r.tags);
        return display(r, index.column());
    case SortRole: return sortValue(r, index.column());
    case RunIdRole: return static_cast<qint64>(r.id);
    case Qt::TextAlignmentRole:
        if (index.column() == Id || (index.column() >= TrainTime && index.column() <= PeakMemory))
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        if (index.column() == Status && !r.failure_message.empty())
            return qstr(r.failure_message);
        if (index.column() == Notes)
            return qstr(r.notes);
        // The free-text columns elide when the table is narrow: their tooltip shows them whole.
        if (index.column() == Name || index.column() == Device || index.column() == Tags)
            return display(r, index.column());
        return {};
    default: return {};
    }
}

QVariant HistoryModel::display(const hearth::RunSummary& r, int column) const
{
    const auto pct = [](const std::optional<double>& v) { return v ? formatPercent(*v) : QString(); };
    switch (column) {
    case Id: return static_cast<qint64>(r.id);
    case Name: return qstr(r.name);
    case Status: return qstr(r.status);
    case Started: return formatTimestamp(r.started_at);
    case TrainTime: return r.train_time_s ? formatDuration(*r.train_time_s) : QString();
    case BestVal: return pct(r.best_val_accuracy);
    case TestAcc: return pct(r.test_accuracy);
    case Throughput: return r.samples_per_sec ? formatRate(*r.samples_per_sec) : QString();
    case PeakMemory: return r.peak_memory_bytes ? formatBytes(*r.peak_memory_bytes) : QString();
    case Device: return qstr(r.device);
    case Tags: return joinTags(r.tags);
    case Notes: return qstr(r.notes).section(QLatin1Char('\n'), 0, 0);
    default: return {};
    }
}

QVariant HistoryModel::sortValue(const hearth::RunSummary& r, int column) const
{
    const auto num = [](const auto& v) { return v ? QVariant(static_cast<double>(*v)) : QVariant(-1.0); };
    switch (column) {
    case Id: return static_cast<qint64>(r.id);
    case Started: return r.started_at;
    case TrainTime: return num(r.train_time_s);
    case BestVal: return num(r.best_val_accuracy);
    case TestAcc: return num(r.test_accuracy);
    case Throughput: return num(r.samples_per_sec);
    case PeakMemory: return num(r.peak_memory_bytes);
    default: return display(r, column).toString().toLower();
    }
}

QVariant HistoryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* const names[ColumnCount] = {
        QT_TR_NOOP("ID"), QT_TR_NOOP("Name"), QT_TR_NOOP("Status"), QT_TR_NOOP("Started"),
        QT_TR_NOOP("Train time"), QT_TR_NOOP("Best val acc"), QT_TR_NOOP("Test acc"), QT_TR_NOOP("Samples/s"),
        QT_TR_NOOP("Peak memory"), QT_TR_NOOP("Device"), QT_TR_NOOP("Tags"), QT_TR_NOOP("Notes")};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

Qt::ItemFlags HistoryModel::flags(const QModelIndex& index) const
{
    Qt::ItemFlags f = QAbstractTableModel::flags(index);
    if (index.column() == Name || index.column() == Tags || index.column() == Notes)
        f |= Qt::ItemIsEditable;
    return f;
}

bool HistoryModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (role != Qt::EditRole || !index.isValid())
        return false;
    auto& r = m_runs[static_cast<size_t>(index.row())];
    const int64_t id = r.id;
    const QString text = value.toString();
    switch (index.column()) {
    case Name: {
        const std::string name = hearth::oneLine(text.toStdString());
        if (name.empty())
            return false;
        r.name = name;
        submitEdit(tr("Could not rename run %1").arg(id),
                   [id, name](hearth::sqlite::Connection& db) { hearth::runedits::rename(db, id, name); });
        break;
    }
    case Tags: {
        const std::vector<std::string> tags = hearth::tagsFromWords({text.toStdString()});
        submitEdit(tr("Could not tag run %1").arg(id),
                   [id, tags](hearth::sqlite::Connection& db) { hearth::runedits::setTags(db, id, tags); });
        r.tags = tags;
        std::sort(r.tags.begin(), r.tags.end());   // as the store lists them
        break;
    }
    case Notes:
        r.notes = text.toStdString();
        submitEdit(tr("Could not save the notes of run %1").arg(id),
                   [id, notes = r.notes](hearth::sqlite::Connection& db) { hearth::runedits::setNotes(db, id, notes); });
        break;
    default: return false;
    }
    Q_EMIT dataChanged(index, index);
    Q_EMIT textChanged();
    return true;
}

void HistoryModel::submitEdit(const QString& what, std::function<void(hearth::sqlite::Connection&)> edit)
{
    hearth::RunWriter* target = nullptr;
    try {
        target = &writer();
    } catch (const std::exception& e) {
        Q_EMIT storeError(tr("%1: %2").arg(what, qstr(e.what())));
        refresh();
        return;
    }
    ++m_pendingEdits;
    submitToWriter(
        *target, this, std::move(edit),
        [this] {
            --m_pendingEdits;
            refresh();
        },
        [this, what](const QString& message) {
            --m_pendingEdits;
            Q_EMIT storeError(tr("%1: %2").arg(what, message));
            refresh();   // show what the store has
        });
}

hearth::RunWriter& HistoryModel::writer()
{
    if (!m_writer)
        m_writer = sharedRunWriter(m_dbPath);   // the session's, when the window has one
    return *m_writer;
}

int HistoryModel::rowOf(qint64 runId) const
{
    for (size_t i = 0; i < m_runs.size(); ++i) {
        if (m_runs[i].id == runId)
            return static_cast<int>(i);
    }
    return -1;
}

QStringList HistoryModel::allTags() const
{
    std::set<QString> tags;
    for (const auto& r : m_runs) {
        for (const auto& t : r.tags)
            tags.insert(qstr(t));
    }
    return QStringList(tags.begin(), tags.end());
}

void HistoryModel::deleteRun(qint64 runId)
{
    submitEdit(tr("Could not delete run %1").arg(runId),
               [runId](hearth::sqlite::Connection& db) { hearth::runedits::deleteRun(db, static_cast<int64_t>(runId)); });
}

HistoryFilterModel::HistoryFilterModel(QObject* parent) : QSortFilterProxyModel(parent)
{
    setSortRole(HistoryModel::SortRole);
    setDynamicSortFilter(true);
}

void HistoryFilterModel::setText(const QString& text)
{
    m_text = text.trimmed();
    invalidateFilter();
}

void HistoryFilterModel::setStatus(const QString& status)
{
    m_status = status;
    invalidateFilter();
}

void HistoryFilterModel::setTag(const QString& tag)
{
    m_tag = tag;
    invalidateFilter();
}

bool HistoryFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex&) const
{
    const auto* model = qobject_cast<const HistoryModel*>(sourceModel());
    if (!model)
        return true;
    const auto& r = model->run(sourceRow);
    if (!m_status.isEmpty() && qstr(r.status) != m_status)
        return false;
    if (!m_tag.isEmpty() && std::find(r.tags.begin(), r.tags.end(), m_tag.toStdString()) == r.tags.end())
        return false;
    if (m_text.isEmpty())
        return true;
    const auto has = [this](const std::string& s) { return qstr(s).contains(m_text, Qt::CaseInsensitive); };
    return has(r.name) || has(r.notes) || has(r.device) || has(r.status) || QString::number(r.id) == m_text
        || std::any_of(r.tags.begin(), r.tags.end(), has);
}

}  // namespace hearth::ui
