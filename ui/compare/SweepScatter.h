#pragma once
// SweepScatter: what a sweep found — one point per run, a chosen result (test accuracy, best
// validation accuracy, samples/s, training time) against a chosen setting that differs between
// the runs. Numeric settings get a numeric x axis (logarithmic when the values span two decades
// or more); other settings put their values side by side along x.

#include "ui/compare/CompareRun.h"
#include "ui/compare/RunColoring.h"

#include <QWidget>

#include <vector>

class QComboBox;
class QCustomPlot;
class QLabel;

namespace hearth::ui {

class SweepScatter final : public QWidget {
    Q_OBJECT

public:
    enum class Result { TestAccuracy, BestValAccuracy, Throughput, TrainTime };

    explicit SweepScatter(QWidget* parent = nullptr);

    void setRuns(const std::vector<CompareRun>& runs, const QVector<ConfigDifference>& differences,
                 const RunColors& colors);
    void setColors(const RunColors& colors);
    void setResult(Result result);
    void setSetting(const QString& key);
    QString setting() const;
    bool categorical() const { return !m_categories.isEmpty(); }
    QStringList categories() const { return m_categories; }   // along x, in order
    void setHighlighted(int run);
    QCustomPlot* plot() const { return m_plot; }
    // The graph of run `run`, or -1 when it has no point (no value or no setting).
    int graphOfRun(int run) const;

Q_SIGNALS:
    void runHovered(int run);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void redraw();

    QComboBox* m_result;
    QComboBox* m_setting;
    QLabel* m_hint;
    QCustomPlot* m_plot;
    std::vector<hearth::RunSummary> m_summaries;
    QVector<ConfigDifference> m_differences;
    std::vector<QColor> m_colors;
    std::vector<int> m_graphOfRun;
    std::vector<int> m_runOfGraph;
    QStringList m_categories;
    int m_highlighted = -1;
    int m_hovered = -1;
};

}  // namespace hearth::ui
