#pragma once
// BreakdownChart: the step-time breakdown while a run trains — a stacked area per logged step
// (data wait, copy, forward, backward, communication wait, optimizer, metric sync, other), in ms
// per micro-batch, from the profiled steps of each logging interval.

#include "engine/events/Events.h"

#include <QVector>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QLabel;

namespace hearth::ui {

class BreakdownChart final : public QWidget {
    Q_OBJECT

public:
    explicit BreakdownChart(QWidget* parent = nullptr);

    void clear();
    void appendSteps(const std::vector<hearth::StepMetrics>& steps);
    int pointCount() const { return static_cast<int>(m_x.size()); }
    // The stacked top of part `part` at point `i` (the sum of parts 0..part).
    double stackedValue(int part, int i) const;
    QCustomPlot* plot() const { return m_plot; }

private:
    void redraw();

    QCustomPlot* m_plot;
    QLabel* m_latest;
    QVector<double> m_x;
    std::vector<QVector<double>> m_stacked;   // per part: cumulative sums
};

}  // namespace hearth::ui
