#pragma once
// SortHeader: a horizontal table header that keeps room for the sort arrow only in the column the
// table is sorted by. QHeaderView widens every section's size hint by the arrow (about 25 px) when
// sorting is on, which in History's twelve columns is some 275 px of blank header; here a column
// asks for the arrow's room only while sorted, and grows to it when the user sorts by it.

#include <QHeaderView>

namespace hearth::ui {

class SortHeader final : public QHeaderView {
    Q_OBJECT

public:
    explicit SortHeader(QWidget* parent = nullptr);

protected:
    QSize sectionSizeFromContents(int logicalIndex) const override;

private:
    void makeRoomForArrow(int logicalIndex);
};

}  // namespace hearth::ui
