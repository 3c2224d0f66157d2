#include "ui/widgets/SortHeader.h"

#include <QStyle>
#include <QStyleOptionHeader>

namespace hearth::ui {

SortHeader::SortHeader(QWidget* parent) : QHeaderView(Qt::Horizontal, parent)
{
    setSectionsClickable(true);
    setHighlightSections(true);
    connect(this, &QHeaderView::sortIndicatorChanged, this,
            [this](int logicalIndex, Qt::SortOrder) { makeRoomForArrow(logicalIndex); });
}

QSize SortHeader::sectionSizeFromContents(int logicalIndex) const
{
    QSize size = QHeaderView::sectionSizeFromContents(logicalIndex);
    if (isSortIndicatorShown() && logicalIndex != sortIndicatorSection()) {
        // Takes back what QHeaderView added for the arrow: the section's height and a margin.
        QStyleOptionHeader option;
        initStyleOption(&option);
        option.section = logicalIndex;
        size.rwidth() -= size.height() + style()->pixelMetric(QStyle::PM_HeaderMargin, &option, this);
    }
    return size;
}

void SortHeader::makeRoomForArrow(int logicalIndex)
{
    if (logicalIndex < 0 || logicalIndex >= count() || isSectionHidden(logicalIndex) ||
        sectionResizeMode(logicalIndex) != QHeaderView::Interactive)
        return;
    const int wanted = sectionSizeFromContents(logicalIndex).width();
    if (sectionSize(logicalIndex) < wanted)
        resizeSection(logicalIndex, wanted);
}

}  // namespace hearth::ui
