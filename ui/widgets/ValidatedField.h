#pragma once
// ValidatedField: an editor with a message line under it; a problem frames the editor in the
// error colour, shows the message in place and adds it to the tooltip.

#include <QColor>
#include <QString>
#include <QWidget>

class QLabel;

namespace hearth::ui {

// The one semantic colour outside plots: problems.
QColor errorColor();

class ValidatedField final : public QWidget {
    Q_OBJECT

public:
    // `frame` is the widget that gets the error frame (the editor itself, or its line edit).
    ValidatedField(QWidget* editor, QWidget* frame, const QString& toolTip, QWidget* parent = nullptr);

    QWidget* editor() const { return m_editor; }
    QString message() const { return m_message; }
    void setMessage(const QString& message);   // "" clears

private:
    QWidget* m_editor;
    QWidget* m_frame;
    QLabel* m_label;
    QString m_toolTip;
    QString m_message;
};

}  // namespace hearth::ui
