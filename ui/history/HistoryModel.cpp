#include "ui/history/HistoryModel.h"

#include "ui/widgets/Format.h"

#include <QSet>

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

std::vector<std::string> splitTags(const QString& text)
{
    std::vector<std::string> tags;
    QSet<QString> seen;
    for (QString t : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        t = t.trimmed();
        if (!t.isEmpty() && !seen.contains(t)) {
            seen.insert(t);
            tags.push_back(t.toStdString());
        }
    }
    return tags;
}

}  // namespace

HistoryModel::HistoryModel(std::shared_ptr<hearth::RunStore> store, QObject* parent)
    : QAbstractTableModel(parent), m_store(std::move(store))
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

void HistoryModel::refreshIfChanged()
{
    try {
        if (m_store->changeCounter() != m_lastChange)
            refresh();
    } catch (const std::exception& e) {
        Q_EMIT storeError(qstr(e.what()));
    }
}

void HistoryModel::refresh()
{
    try {
        m_lastChange = m_store->changeCounter();
        auto runs = m_store->listRuns();
        const bool sameRows = runs.size() == m_runs.size()
            && std::equal(runs.begin(), runs.end(), m_runs.begin(), [](const auto& a, const auto& b) { return a.id == b.id; });
        if (sameRows) {
            // Same runs, new values (e.g. a running run's metrics): keep selection and scroll position.
            m_runs = std::move(runs);
            if (!m_runs.empty())
                Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        } else {
            beginResetModel();
            m_runs = std::move(runs);
            endResetModel();
        }
        Q_EMIT refreshed();
    } catch (const std::exception& e) {
        Q_EMIT storeError(qstr(e.what()));
    }
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
    const QString text = value.toString();
    try {
        switch (index.column()) {
        case Name:
            if (text.trimmed().isEmpty())
                return false;
            m_store->rename(r.id, text.trimmed().toStdString());
            r.name = text.trimmed().toStdString();
            break;
        case Tags:
            r.tags = splitTags(text);
            m_store->setTags(r.id, r.tags);
            break;
        case Notes:
            m_store->setNotes(r.id, text.toStdString());
            r.notes = text.toStdString();
            break;
        default: return false;
        }
        m_lastChange = m_store->changeCounter();  // our own write: no reload needed
    } catch (const std::exception& e) {
        Q_EMIT storeError(qstr(e.what()));
        return false;
    }
    Q_EMIT dataChanged(index, index);
    return true;
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
    m_store->deleteRun(runId);
    refresh();
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
