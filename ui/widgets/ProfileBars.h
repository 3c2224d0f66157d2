#pragma once
// ProfileBars: the step-time breakdown (ms per micro-batch) and the memory breakdown (bytes at
// the peak) as stacked horizontal bars side by side — one bar per epoch in a run's report, one
// per run in Compare, so a technique's effect shows as the parts it shrinks.

#include "engine/events/Events.h"

#include <QWidget>

#include <optional>
#include <vector>

class QLabel;

namespace hearth::ui {

class StackedBars;

class ProfileBars final : public QWidget {
    Q_OBJECT

public:
    struct Row {
        QString label;
        std::optional<hearth::StepBreakdown> breakdown;
        std::optional<hearth::MemoryBreakdown> memory;
    };

    explicit ProfileBars(QWidget* parent = nullptr);
    void setRows(const std::vector<Row>& rows);

    StackedBars* timeBars() const { return m_time; }
    StackedBars* memoryBars() const { return m_memory; }

private:
    StackedBars* m_time;
    StackedBars* m_memory;
    QLabel* m_note;
};

}  // namespace hearth::ui
