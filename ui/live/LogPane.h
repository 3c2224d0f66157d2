#pragma once
// LogPane: the engine's log lines for the current run, newest at the bottom, bounded in size.

#include "engine/events/Events.h"

#include <QWidget>

class QPlainTextEdit;

namespace hearth::ui {

class LogPane final : public QWidget {
    Q_OBJECT

public:
    explicit LogPane(QWidget* parent = nullptr);

    void clear();
    static QString format(const hearth::LogLine& line);   // "WARN   text"
    void append(const hearth::LogLine& line);
    void appendText(const QString& text);   // lines from the workbench itself (e.g. "run 3 started")
    void appendLines(const QStringList& lines);
    QString text() const;

private:
    QPlainTextEdit* m_view;
};

}  // namespace hearth::ui
