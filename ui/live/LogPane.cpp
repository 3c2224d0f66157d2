#include "ui/live/LogPane.h"

#include "ui/widgets/Format.h"

#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTime>
#include <QVBoxLayout>

namespace hearth::ui {

namespace {

QString levelTag(hearth::LogLine::Level level)
{
    switch (level) {
    case hearth::LogLine::Level::Debug: return QStringLiteral("debug");
    case hearth::LogLine::Level::Info: return QStringLiteral("info ");
    case hearth::LogLine::Level::Warning: return QStringLiteral("WARN ");
    case hearth::LogLine::Level::Error: return QStringLiteral("ERROR");
    }
    return {};
}

}  // namespace

LogPane::LogPane(QWidget* parent) : QWidget(parent), m_view(new QPlainTextEdit)
{
    m_view->setObjectName(QStringLiteral("logView"));
    m_view->setReadOnly(true);
    m_view->setMaximumBlockCount(5000);   // a long run must not grow the document without bound
    m_view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_view->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    m_view->setPlaceholderText(tr("The run's log appears here."));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
}

void LogPane::clear()
{
    m_view->clear();
}

QString LogPane::format(const hearth::LogLine& line)
{
    return levelTag(line.level) + QStringLiteral("  ") + qstr(line.text);
}

void LogPane::append(const hearth::LogLine& line)
{
    appendText(format(line));
}

void LogPane::appendText(const QString& text)
{
    appendLines({text});
}

void LogPane::appendLines(const QStringList& lines)
{
    if (lines.isEmpty())
        return;
    QScrollBar* bar = m_view->verticalScrollBar();
    const bool atEnd = bar->value() == bar->maximum();
    const QString stamp = QTime::currentTime().toString(QStringLiteral("HH:mm:ss"));
    QStringList stamped;
    for (const QString& l : lines)
        stamped << stamp + QStringLiteral("  ") + l;
    m_view->appendPlainText(stamped.join(QLatin1Char('\n')));
    if (atEnd)   // follow the tail unless the user scrolled up to read
        bar->setValue(bar->maximum());
}

QString LogPane::text() const
{
    return m_view->toPlainText();
}

}  // namespace hearth::ui
