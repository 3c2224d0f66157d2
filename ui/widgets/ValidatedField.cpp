#include "ui/widgets/ValidatedField.h"

#include <QLabel>
#include <QStringList>
#include <QVBoxLayout>

namespace hearth::ui {

QColor errorColor()
{
    return QColor(0xd3, 0x2f, 0x2f);
}

ValidatedField::ValidatedField(QWidget* editor, QWidget* frame, const QString& toolTip, QWidget* parent)
    : QWidget(parent), m_editor(editor), m_frame(frame), m_label(new QLabel(this)), m_toolTip(toolTip)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(editor);
    layout->addWidget(m_label);
    m_label->setWordWrap(true);
    m_label->setVisible(false);
    QPalette pal = m_label->palette();
    pal.setColor(QPalette::WindowText, errorColor());
    m_label->setPalette(pal);
    QFont small = m_label->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_label->setFont(small);
    m_editor->setToolTip(m_toolTip);
}

void ValidatedField::setMessage(const QString& message)
{
    if (message == m_message)
        return;
    m_message = message;
    m_label->setText(message);
    m_label->setVisible(!message.isEmpty());
    if (message.isEmpty())
        m_frame->setStyleSheet(QString());
    else
        m_frame->setStyleSheet(QStringLiteral("%1 { border: 1px solid %2; border-radius: 3px; padding: 1px; }")
                                   .arg(QString::fromLatin1(m_frame->metaObject()->className()),
                                        errorColor().name()));
    updateState();
}

void ValidatedField::setNoEffect(const QString& reason)
{
    if (reason == m_noEffect)
        return;
    m_noEffect = reason;
    updateState();
}

void ValidatedField::updateState()
{
    setEnabled(m_noEffect.isEmpty() || !m_message.isEmpty());
    QStringList tip;
    if (!m_toolTip.isEmpty())
        tip << m_toolTip;
    if (!m_noEffect.isEmpty())
        tip << tr("Has no effect here: %1").arg(m_noEffect);
    if (!m_message.isEmpty())
        tip << m_message;
    m_editor->setToolTip(tip.join(QStringLiteral("\n\n")));
}

}  // namespace hearth::ui
