#include "ui/compare/CompareLegend.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPixmap>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace hearth::ui {

namespace {

QIcon swatch(const QColor& color)
{
    QPixmap pixmap(14, 10);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.fillRect(QRect(0, 0, 14, 10), color);
    painter.setPen(color.darker(130));
    painter.drawRect(QRect(0, 0, 13, 9));
    return QIcon(pixmap);
}

// `value`: the setting's value, written first so that a list sorted by it reads like the scale.
QTreeWidgetItem* runItem(const CompareRun& run, int index, const QColor& color, const QString& value = {},
                         const QString& key = {})
{
    auto* item = new QTreeWidgetItem;
    const QString label = compareRunLabel(run.summary);
    item->setText(0, value.isEmpty() ? label : value + QStringLiteral("  ") + label);
    item->setToolTip(0, value.isEmpty() ? label : QStringLiteral("%1\n%2 = %3").arg(label, key, value));
    item->setIcon(0, swatch(color));
    item->setData(0, CompareLegend::RunRole, index);
    return item;
}

}  // namespace

CompareLegend::CompareLegend(QWidget* parent)
    : QWidget(parent), m_title(new QLabel), m_filter(new QLineEdit), m_tree(new QTreeWidget)
{
    m_tree->setObjectName(QStringLiteral("compareLegend"));
    m_tree->setHeaderHidden(true);
    m_tree->setColumnCount(1);
    m_tree->setUniformRowHeights(true);
    m_tree->setMouseTracking(true);
    m_tree->setSelectionMode(QAbstractItemView::SingleSelection);
    // In the middle, as the tables elide run names: the value and the run number lead, and a name's
    // end tells runs apart as often as its start.
    m_tree->setTextElideMode(Qt::ElideMiddle);
    m_tree->setIconSize(QSize(14, 10));
    m_tree->viewport()->installEventFilter(this);
    m_filter->setObjectName(QStringLiteral("compareLegendFilter"));
    m_filter->setPlaceholderText(tr("Filter runs…"));
    m_filter->setClearButtonEnabled(true);
    m_title->setText(tr("Runs"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(3);
    layout->addWidget(m_title);
    layout->addWidget(m_filter);
    layout->addWidget(m_tree, 1);
    setMinimumWidth(120);

    connect(m_filter, &QLineEdit::textChanged, this, &CompareLegend::applyFilter);
    connect(m_tree, &QTreeWidget::itemEntered, this, [this](QTreeWidgetItem* item) {
        Q_EMIT runHovered(item->data(0, RunRole).toInt());
    });
    connect(m_tree, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) {
        const int run = item->data(0, RunRole).toInt();
        if (run >= 0)
            setPinnedRun(run == m_pinned ? -1 : run);
    });
}

void CompareLegend::setRuns(const std::vector<CompareRun>& runs, const RunColors& colors)
{
    m_tree->setUpdatesEnabled(false);
    m_tree->clear();
    m_items.assign(runs.size(), nullptr);
    m_runCount = static_cast<int>(runs.size());
    m_pinned = -1;
    const auto colorOf = [&](size_t i) { return i < colors.colors.size() ? colors.colors[i] : QColor(Qt::gray); };
    QList<QTreeWidgetItem*> top;
    if (colors.numeric) {
        // Listed by value, so the list reads like the colour scale.
        std::vector<size_t> order(runs.size());
        std::iota(order.begin(), order.end(), size_t{0});
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            const double x = colors.values[a], y = colors.values[b];
            return std::isnan(y) ? !std::isnan(x) : (!std::isnan(x) && x < y);
        });
        for (size_t i : order) {
            m_items[i] = runItem(runs[i], int(i), colorOf(i), colors.groups.value(qsizetype(i)), colors.key);
            top << m_items[i];
        }
    } else if (colors.by != ColorBy::Run) {
        for (qsizetype g = 0; g < colors.groupOrder.size(); ++g) {
            auto* group = new QTreeWidgetItem;
            group->setData(0, RunRole, -1);
            group->setFlags(Qt::ItemIsEnabled);
            group->setIcon(0, swatch(distinctColor(int(g))));
            int members = 0;
            for (size_t i = 0; i < runs.size(); ++i) {
                if (colors.groups.value(qsizetype(i)) != colors.groupOrder[g])
                    continue;
                m_items[i] = runItem(runs[i], int(i), colorOf(i));
                group->addChild(m_items[i]);
                ++members;
            }
            const QString name = colors.key.isEmpty() ? colors.groupOrder[g] : colors.key + QStringLiteral(" = ") + colors.groupOrder[g];
            group->setText(0, tr("%1 (%2)").arg(name).arg(members));
            group->setToolTip(0, group->text(0));
            top << group;
        }
    } else {
        for (size_t i = 0; i < runs.size(); ++i) {
            m_items[i] = runItem(runs[i], int(i), colorOf(i));
            top << m_items[i];
        }
    }
    m_tree->addTopLevelItems(top);
    m_tree->setRootIsDecorated(colors.by != ColorBy::Run && !colors.numeric);
    m_tree->expandAll();
    m_title->setText(colors.key.isEmpty() ? tr("%n run(s)", nullptr, m_runCount)
                                          : tr("%n run(s) by %1", nullptr, m_runCount).arg(colors.key));
    m_filter->setVisible(m_runCount > 8);
    applyFilter();
    m_tree->setUpdatesEnabled(true);
}

QTreeWidgetItem* CompareLegend::itemForRun(int run) const
{
    return run >= 0 && run < int(m_items.size()) ? m_items[size_t(run)] : nullptr;
}

int CompareLegend::visibleRunCount() const
{
    return int(std::count_if(m_items.begin(), m_items.end(), [](const QTreeWidgetItem* i) { return i && !i->isHidden(); }));
}

void CompareLegend::setPinnedRun(int run)
{
    QTreeWidgetItem* item = itemForRun(run);
    m_pinned = item ? run : -1;
    if (item) {
        m_tree->setCurrentItem(item);
        m_tree->scrollToItem(item);
    } else {
        m_tree->clearSelection();
    }
    Q_EMIT runPinned(m_pinned);
}

void CompareLegend::setFilterText(const QString& text)
{
    m_filter->setText(text);
}

void CompareLegend::applyFilter()
{
    const QString text = m_filter->text().trimmed();
    for (int t = 0; t < m_tree->topLevelItemCount(); ++t) {
        QTreeWidgetItem* top = m_tree->topLevelItem(t);
        if (top->childCount() == 0) {
            top->setHidden(!text.isEmpty() && !top->text(0).contains(text, Qt::CaseInsensitive));
            continue;
        }
        // A group that matches shows all its runs; otherwise only the runs that match.
        const bool groupMatches = text.isEmpty() || top->text(0).contains(text, Qt::CaseInsensitive);
        int shown = 0;
        for (int c = 0; c < top->childCount(); ++c) {
            QTreeWidgetItem* child = top->child(c);
            const bool show = groupMatches || child->text(0).contains(text, Qt::CaseInsensitive);
            child->setHidden(!show);
            shown += show ? 1 : 0;
        }
        top->setHidden(shown == 0);
    }
}

bool CompareLegend::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_tree->viewport() && event->type() == QEvent::Leave)
        Q_EMIT runHovered(-1);
    return QWidget::eventFilter(watched, event);
}

}  // namespace hearth::ui
