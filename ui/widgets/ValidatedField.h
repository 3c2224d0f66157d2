#pragma once
// ValidatedField: an editor with a message line under it; a problem frames the editor in the
// error colour, shows the message in place and adds it to the tooltip. A field whose key has no
// effect with the rest of the settings is disabled, its tooltip saying why.

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
    // Why the key has no effect here ("" when it applies). A field that shows a problem stays
    // editable all the same, so that its value can be taken back.
    void setNoEffect(const QString& reason);
    QString noEffect() const { return m_noEffect; }

private:
    void updateState();

    QWidget* m_editor;
    QWidget* m_frame;
    QLabel* m_label;
    QString m_toolTip;
    QString m_message;
    QString m_noEffect;
};

}  // namespace hearth::ui
