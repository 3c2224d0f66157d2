#include "ui/live/FailureBanner.h"

#include "ui/widgets/ValidatedField.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

namespace hearth::ui {

FailureBanner::FailureBanner(QWidget* parent)
    : QFrame(parent), m_title(new QLabel), m_message(new QLabel), m_suggestion(new QLabel)
{
    setObjectName(QStringLiteral("failureBanner"));
    setFrameShape(QFrame::StyledPanel);
    setStyleSheet(QStringLiteral("#failureBanner { border: 1px solid %1; border-radius: 4px; }")
                      .arg(errorColor().name()));
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::Base);

    auto* icon = new QLabel;
    const int size = style()->pixelMetric(QStyle::PM_MessageBoxIconSize, nullptr, this);
    icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxCritical, nullptr, this).pixmap(size, size));
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    for (QLabel* l : {m_message, m_suggestion}) {
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    m_message->setObjectName(QStringLiteral("failureMessage"));
    m_suggestion->setObjectName(QStringLiteral("failureSuggestion"));
    auto* close = new QToolButton;
    close->setAutoRaise(true);
    close->setIcon(style()->standardIcon(QStyle::SP_TitleBarCloseButton, nullptr, this));
    close->setToolTip(tr("Dismiss"));
    connect(close, &QToolButton::clicked, this, &QWidget::hide);

    auto* text = new QVBoxLayout;
    text->addWidget(m_title);
    text->addWidget(m_message);
    text->addWidget(m_suggestion);
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(icon, 0, Qt::AlignTop);
    layout->addLayout(text, 1);
    layout->addWidget(close, 0, Qt::AlignTop);
    hide();
}

void FailureBanner::showProblem(const QString& title, const QString& message, const QString& suggestion)
{
    m_title->setText(title);
    m_message->setText(message);
    m_suggestion->setText(suggestion.isEmpty() ? QString() : tr("Try: %1").arg(suggestion));
    m_suggestion->setVisible(!suggestion.isEmpty());
    show();
}

QString FailureBanner::message() const
{
    return m_message->text();
}

QString FailureBanner::suggestion() const
{
    return m_suggestion->text();
}

}  // namespace hearth::ui
