#pragma once
// ElideDelegate: one column's own elision in a view that elides the others another way (History's
// run names in the middle, since their ends tell runs apart as often as their starts; its notes
// and tags on the right, where a sentence's start says what it is about).

#include <QStyledItemDelegate>

namespace hearth::ui {

class ElideDelegate final : public QStyledItemDelegate
{
public:
    ElideDelegate(Qt::TextElideMode mode, QObject* parent) : QStyledItemDelegate(parent), m_mode(mode) {}
    Qt::TextElideMode mode() const { return m_mode; }

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        option->textElideMode = m_mode;
    }

private:
    Qt::TextElideMode m_mode;
};

}  // namespace hearth::ui
