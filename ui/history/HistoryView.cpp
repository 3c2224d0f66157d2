#include "ui/history/HistoryView.h"

#include "ui/history/HistoryModel.h"
#include "ui/widgets/ElideDelegate.h"
#include "ui/widgets/Format.h"
#include "ui/widgets/SortHeader.h"
#include "ui/widgets/ValidatedField.h"

#include <QComboBox>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QScopedValueRollback>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

namespace hearth::ui {

HistoryView::HistoryView(const QString& dbPath, QWidget* parent)
    : QWidget(parent), m_model(new HistoryModel(dbPath, this)), m_filter(new HistoryFilterModel(this)),
      m_table(new QTableView), m_status(new QLabel), m_search(new QLineEdit), m_statusFilter(new QComboBox),
      m_tag(new QComboBox),
      m_open(new QPushButton(tr("Open Report"))), m_compare(new QPushButton(tr("Compare"))),
      m_delete(new QPushButton(tr("Delete…"))), m_resume(new QPushButton(tr("Resume")))
{
    m_filter->setSourceModel(m_model);
    m_table->setObjectName(QStringLiteral("historyTable"));
    m_table->setModel(m_filter);
    m_table->setHorizontalHeader(new SortHeader(m_table));   // before sorting turns the arrow on
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(HistoryModel::Id, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setEditTriggers(QAbstractItemView::EditKeyPressed);   // F2; double-click opens the report
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    m_table->horizontalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
    m_table->setWordWrap(false);
    // Notes and tags elide on the right (a sentence's start says what it is about); a run name in
    // the middle, since its end tells runs apart as often as its start.
    m_table->setTextElideMode(Qt::ElideRight);
    m_table->setItemDelegateForColumn(HistoryModel::Name, new ElideDelegate(Qt::ElideMiddle, m_table));
    // Tags beside the name: they tell runs of one name apart ("baseline", "bf16") and stay in view
    // when the columns need more than the window's width. A saved layout keeps its own order.
    m_table->horizontalHeader()->moveSection(HistoryModel::Tags, HistoryModel::Name + 1);

    m_search->setPlaceholderText(tr("Filter by name, tag, notes…"));
    m_search->setClearButtonEnabled(true);
    m_statusFilter->addItem(tr("Any status"), QString());
    for (const char* s : {"completed", "running", "stopped", "failed", "interrupted"})
        m_statusFilter->addItem(QString::fromLatin1(s), QString::fromLatin1(s));
    m_status->setObjectName(QStringLiteral("historyStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_compare->setToolTip(tr("Select two or more runs to compare them."));
    m_open->setDefault(false);

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_search, 2);
    bar->addWidget(m_statusFilter);
    bar->addWidget(m_tag);
    bar->addStretch(1);
    m_resume->setObjectName(QStringLiteral("historyResume"));
    m_resume->setToolTip(tr("Continue the selected stopped, interrupted or failed run from its last saved "
                            "training state."));
    bar->addWidget(m_resume);
    bar->addWidget(m_open);
    bar->addWidget(m_compare);
    bar->addWidget(m_delete);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_status);
    layout->addWidget(m_table, 1);

    connect(m_search, &QLineEdit::textChanged, m_filter, &HistoryFilterModel::setText);
    connect(m_statusFilter, &QComboBox::currentIndexChanged, this,
            [this] { m_filter->setStatus(m_statusFilter->currentData().toString()); });
    connect(m_tag, &QComboBox::currentIndexChanged, this, [this] { m_filter->setTag(m_tag->currentData().toString()); });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        if (!m_applyingSelection)
            m_selectWhenLoaded.clear();   // the user chose: a selection asked for earlier is dropped
        updateActions();
    });
    // A refresh that adds or removes runs resets the model, which would drop the selection: the
    // rows selected before are selected again (the ones still there).
    connect(m_model, &HistoryModel::modelAboutToBeReset, this, [this] { m_selectedBeforeReset = selectedRunIds(); });
    connect(m_model, &HistoryModel::modelReset, this, [this] {
        applySelection(std::exchange(m_selectedBeforeReset, {}));
        updateActions();
        m_contentChanged = true;
    });
    connect(m_model, &HistoryModel::textChanged, this, [this] { m_contentChanged = true; });
    connect(m_table->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int logical, int, int) {
        const QHeaderView* header = m_table->horizontalHeader();
        int stretched = -1;   // the last visible column, which stretches to the table's edge
        for (int visual = header->count() - 1; visual >= 0 && stretched < 0; --visual)
            if (!header->isSectionHidden(header->logicalIndex(visual)))
                stretched = header->logicalIndex(visual);
        // A drag or double-click on a divider, not the room a sort click makes for its arrow.
        if (!m_fitting && logical != stretched && (QGuiApplication::mouseButtons() & Qt::LeftButton))
            m_columnsByUser = true;
    });
    // A refresh that only changed statuses (a resumed run now completed) updates rows in place.
    connect(m_model, &HistoryModel::dataChanged, this, &HistoryView::updateActions);
    connect(m_model, &HistoryModel::refreshed, this, &HistoryView::updateTagFilter);
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        Q_EMIT openReportRequested(index.data(HistoryModel::RunIdRole).toLongLong());
    });
    connect(m_table, &QTableView::customContextMenuRequested, this, &HistoryView::showContextMenu);
    connect(m_table->horizontalHeader(), &QHeaderView::customContextMenuRequested, this, [this](const QPoint& pos) {
        const std::unique_ptr<QMenu> menu(columnMenu());
        menu->exec(m_table->horizontalHeader()->mapToGlobal(pos));
    });
    connect(m_open, &QPushButton::clicked, this, [this] {
        if (const auto ids = selectedRunIds(); !ids.isEmpty())
            Q_EMIT openReportRequested(ids.first());
    });
    connect(m_compare, &QPushButton::clicked, this, [this] { Q_EMIT compareRequested(selectedRunIds()); });
    connect(m_delete, &QPushButton::clicked, this, &HistoryView::deleteSelected);
    connect(m_resume, &QPushButton::clicked, this, [this] {
        if (const qint64 id = resumableSelection())
            Q_EMIT resumeRequested(id);
    });
    connect(m_model, &HistoryModel::storeError, this, [this](const QString& message) { showStatus(message, true); });
    connect(m_model, &HistoryModel::refreshed, this, [this] {
        if (!m_status->property("problem").toBool())
            showStatus(QString(), false);   // loaded: "Loading runs…" goes
        if (!m_selectWhenLoaded.isEmpty() && applySelection(m_selectWhenLoaded))
            m_selectWhenLoaded.clear();
        // New runs and renamed or tagged ones (a longer name, more tags) fit too, as long as the
        // widths are Hearth's own.
        if (m_filter->rowCount() > 0 && (!m_columnsSized || (m_contentChanged && !m_columnsByUser))) {
            fitColumns();
            m_columnsSized = true;
        }
        m_contentChanged = false;
    });
    showStatus(tr("Loading runs…"), false);
    updateTagFilter();
    updateActions();
}

void HistoryView::showStatus(const QString& text, bool problem)
{
    m_status->setText(text);
    m_status->setProperty("problem", problem);
    QPalette palette = m_status->palette();
    palette.setColor(QPalette::WindowText, problem ? errorColor() : this->palette().color(QPalette::PlaceholderText));
    m_status->setPalette(palette);
    m_status->setVisible(!text.isEmpty());
}

QString HistoryView::statusText() const
{
    return m_status->isVisibleTo(this) ? m_status->text() : QString();
}

QList<qint64> HistoryView::selectedRunIds() const
{
    QList<qint64> ids;
    for (const QModelIndex& index : m_table->selectionModel()->selectedRows())
        ids << index.data(HistoryModel::RunIdRole).toLongLong();
    std::sort(ids.begin(), ids.end());
    return ids;
}

void HistoryView::selectRuns(const QList<qint64>& ids)
{
    m_selectWhenLoaded.clear();
    if (!m_model->hasLoaded() || !applySelection(ids))
        m_selectWhenLoaded = ids;   // selected when a refresh brings them
}

bool HistoryView::applySelection(const QList<qint64>& ids)
{
    if (ids.isEmpty())
        return true;
    QItemSelection selection;
    bool all = true;
    for (qint64 id : ids) {
        const int row = m_model->rowOf(id);
        const QModelIndex index = row < 0 ? QModelIndex() : m_filter->mapFromSource(m_model->index(row, 0));
        if (!index.isValid()) {
            all = all && row >= 0;   // hidden by the filter: shown, it is not waited for
            continue;
        }
        selection.select(index, index);
    }
    const QScopedValueRollback<bool> applying(m_applyingSelection, true);
    m_table->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    return all;
}

qint64 HistoryView::resumableSelection() const
{
    const QList<qint64> ids = selectedRunIds();
    if (ids.size() != 1)
        return 0;
    const int row = m_model->rowOf(ids.first());
    if (row < 0)
        return 0;
    const std::string& status = m_model->run(row).status;
    return status == "stopped" || status == "interrupted" || status == "failed" ? ids.first() : 0;
}

void HistoryView::updateActions()
{
    m_resume->setEnabled(resumableSelection() != 0);
    const int n = static_cast<int>(selectedRunIds().size());
    m_open->setEnabled(n >= 1);
    m_compare->setEnabled(n >= 2);
    m_delete->setEnabled(n >= 1);
}

void HistoryView::updateTagFilter()
{
    const QString current = m_tag->currentData().toString();
    const QStringList tags = m_model->allTags();
    QStringList existing;
    for (int i = 1; i < m_tag->count(); ++i)
        existing << m_tag->itemData(i).toString();
    if (existing == tags && m_tag->count() > 0)
        return;
    const QSignalBlocker block(m_tag);
    m_tag->clear();
    m_tag->addItem(tr("Any tag"), QString());
    for (const QString& t : tags)
        m_tag->addItem(t, t);
    m_tag->setCurrentIndex(std::max(0, m_tag->findData(current)));
    m_tag->setEnabled(!tags.isEmpty());
}

void HistoryView::showContextMenu(const QPoint& pos)
{
    const QList<qint64> ids = selectedRunIds();
    if (ids.isEmpty())
        return;
    QMenu menu(this);
    menu.addAction(tr("Open Report"), this, [this, ids] { Q_EMIT openReportRequested(ids.first()); });
    menu.addAction(tr("Predict…"), this, [this, ids] { Q_EMIT predictRequested(ids.first()); })
        ->setEnabled(ids.size() == 1);
    QAction* compare = menu.addAction(tr("Compare Selected"), this, [this, ids] { Q_EMIT compareRequested(ids); });
    compare->setEnabled(ids.size() >= 2);
    const qint64 resumable = resumableSelection();
    menu.addAction(tr("Resume"), this, [this, resumable] { Q_EMIT resumeRequested(resumable); })
        ->setEnabled(resumable != 0);
    menu.addSeparator();
    menu.addAction(tr("Rename…"), this, &HistoryView::renameSelected)->setEnabled(ids.size() == 1);
    menu.addAction(tr("Edit Tags…"), this, &HistoryView::editTags);
    menu.addAction(tr("Edit Notes…"), this, &HistoryView::editNotes)->setEnabled(ids.size() == 1);
    menu.addSeparator();
    menu.addAction(tr("Delete…"), this, &HistoryView::deleteSelected);
    menu.exec(m_table->viewport()->mapToGlobal(pos));
}

void HistoryView::renameSelected()
{
    showStatus(QString(), false);
    const QModelIndex current = m_table->currentIndex();
    if (current.isValid())
        m_table->edit(current.siblingAtColumn(HistoryModel::Name));
}

void HistoryView::editTags()
{
    showStatus(QString(), false);
    const QList<qint64> ids = selectedRunIds();
    if (ids.isEmpty())
        return;
    const int row = m_model->rowOf(ids.first());
    const QString current = m_model->data(m_model->index(row, HistoryModel::Tags), Qt::EditRole).toString();
    bool ok = false;
    const QString tags = QInputDialog::getText(this, tr("Edit Tags"),
                                               tr("Tags for %n run(s), separated by commas:", nullptr, int(ids.size())),
                                               QLineEdit::Normal, current, &ok);
    if (!ok)
        return;
    for (qint64 id : ids)
        m_model->setData(m_model->index(m_model->rowOf(id), HistoryModel::Tags), tags, Qt::EditRole);
    updateTagFilter();
}

void HistoryView::editNotes()
{
    showStatus(QString(), false);
    const QList<qint64> ids = selectedRunIds();
    if (ids.size() != 1)
        return;
    const int row = m_model->rowOf(ids.first());
    bool ok = false;
    const QString notes = QInputDialog::getMultiLineText(this, tr("Edit Notes"), tr("Notes for run %1:").arg(ids.first()),
                                                         qstr(m_model->run(row).notes), &ok);
    if (ok)
        m_model->setData(m_model->index(row, HistoryModel::Notes), notes, Qt::EditRole);
}

void HistoryView::deleteSelected()
{
    const QList<qint64> ids = selectedRunIds();
    if (ids.isEmpty())
        return;
    QStringList names;
    for (qint64 id : ids) {
        const auto& r = m_model->run(m_model->rowOf(id));
        if (r.status == "running") {
            QMessageBox::information(this, tr("Delete Runs"), tr("Run %1 is still running. Stop it first.").arg(id));
            return;
        }
        names << tr("%1 (%2)").arg(id).arg(qstr(r.name));
    }
    const auto answer = QMessageBox::question(
        this, tr("Delete Runs"),
        tr("Delete %n run(s)?\n\n%1\n\nTheir metrics, reports and checkpoint files are removed. This cannot be undone.",
           nullptr, int(ids.size())).arg(names.join(QStringLiteral(", "))),
        QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
    if (answer != QMessageBox::Yes)
        return;
    showStatus(QString(), false);
    for (qint64 id : ids)
        m_model->deleteRun(id);   // writer jobs; a failure shows above the table
}

QByteArray HistoryView::saveHeaderState() const
{
    return m_table->horizontalHeader()->saveState();
}

void HistoryView::restoreHeaderState(const QByteArray& state)
{
    if (!state.isEmpty() && m_table->horizontalHeader()->restoreState(state))
        m_columnsSized = m_columnsByUser = true;
}

void HistoryView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (std::exchange(m_fitWhenShown, false))
        fitColumns();
}

QMenu* HistoryView::columnMenu()
{
    auto* menu = new QMenu(this);
    QHeaderView* header = m_table->horizontalHeader();
    for (int column = HistoryModel::Name + 1; column < HistoryModel::ColumnCount; ++column) {
        QAction* action = menu->addAction(m_model->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString());
        action->setCheckable(true);
        action->setChecked(!header->isSectionHidden(column));
        connect(action, &QAction::toggled, this, [header, column](bool shown) { header->setSectionHidden(column, !shown); });
    }
    menu->addSeparator();
    menu->addAction(tr("Fit Columns"), this, &HistoryView::fitColumns);
    return menu;
}

void HistoryView::fitColumns()
{
    if (!m_table->isVisible()) {
        m_fitWhenShown = true;
        return;
    }
    // While fitting, the last column is as wide as its contents, not stretched to the table's edge
    // (nor kept at its stretched width when the others need the room); it stretches again after.
    const QScopedValueRollback<bool> fitting(m_fitting, true);
    QHeaderView* header = m_table->horizontalHeader();
    header->setStretchLastSection(false);
    m_table->resizeColumnsToContents();   // the header samples the first 1,000 rows
    const int widest = m_table->fontMetrics().averageCharWidth() * 40;
    for (int column = 0; column < HistoryModel::ColumnCount; ++column)
        if (m_table->columnWidth(column) > widest)
            m_table->setColumnWidth(column, widest);
    shrinkTextColumnsToFit();
    header->setStretchLastSection(true);
}

void HistoryView::shrinkTextColumnsToFit()
{
    const QHeaderView* header = m_table->horizontalHeader();
    int total = 0;
    for (int column = 0; column < HistoryModel::ColumnCount; ++column)
        if (!header->isSectionHidden(column))
            total += m_table->columnWidth(column);
    const int excess = total - m_table->viewport()->width();
    if (excess <= 0)
        return;
    // Each text column keeps at least its header and 8 characters; a name keeps 32, enough for most
    // whole (a run is found by its name), the tags beside it 24 (two or three tags), and notes 16
    // (their first words).
    struct Elastic {
        int column, slack;
    };
    std::vector<Elastic> elastic;
    int slack = 0;
    const int chars = m_table->fontMetrics().averageCharWidth();
    for (const int column : {int(HistoryModel::Name), int(HistoryModel::Device), int(HistoryModel::Tags),
                             int(HistoryModel::Notes)}) {
        if (header->isSectionHidden(column))
            continue;
        const int least = column == HistoryModel::Name ? 32
                          : column == HistoryModel::Tags ? 24
                          : column == HistoryModel::Notes ? 16
                                                          : 8;
        const int floor = std::max(header->sectionSizeHint(column), chars * least);
        const int room = std::max(0, m_table->columnWidth(column) - floor);
        elastic.push_back({column, room});
        slack += room;
    }
    if (slack == 0)
        return;
    // Each gives up its share of what is too wide, in proportion to how far it is above its floor.
    const int take = std::min(excess, slack);
    for (const Elastic& e : elastic)
        m_table->setColumnWidth(e.column, m_table->columnWidth(e.column) - (e.slack * take + slack - 1) / slack);
}

}  // namespace hearth::ui
