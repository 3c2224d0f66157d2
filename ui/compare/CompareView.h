#pragma once
// CompareView: two or more runs side by side — overlaid curves (one colour per run; x by step,
// epoch or wall time), the config keys that differ, a metrics table with speed-up against a
// chosen baseline, and bars of training time and test accuracy.

#include "storage/RunStore.h"

#include <QList>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <vector>

class QComboBox;
class QCustomPlot;
class QLabel;
class QSplitter;
class QTableWidget;

namespace hearth::ui {

class CompareView final : public QWidget {
    Q_OBJECT

public:
    enum class Metric { TrainLoss, ValLoss, ValAccuracy, LearningRate, Throughput };
    enum class XAxis { Step, Epoch, WallTime };

    explicit CompareView(std::shared_ptr<hearth::RunStore> store, QWidget* parent = nullptr);

    QList<qint64> runIds() const;
    void setMetric(Metric metric);
    void setXAxis(XAxis axis);
    void setBaseline(qint64 runId);
    int curveCount() const;                 // graphs with at least one point
    QStringList differingKeys() const;
    QCustomPlot* curves() const { return m_curves; }
    QCustomPlot* bars() const { return m_bars; }
    QTableWidget* metricsTable() const { return m_metrics; }
    QTableWidget* diffTable() const { return m_diff; }
    QByteArray saveSplitterState() const;
    void restoreSplitterState(const QByteArray& state);

public Q_SLOTS:
    void setRuns(const QList<qint64>& runIds);
    void reload();

private:
    struct RunData {
        hearth::RunSummary summary;
        std::vector<hearth::StepMetrics> steps;
        std::vector<hearth::EpochMetrics> epochs;
    };

    void drawCurves();
    void drawBars();
    void fillMetrics();
    void fillDiff();
    QString runLabel(const RunData& run) const;

    std::shared_ptr<hearth::RunStore> m_store;
    std::vector<RunData> m_runs;
    QLabel* m_hint;
    QComboBox* m_metric;
    QComboBox* m_xAxis;
    QComboBox* m_baseline;
    QCustomPlot* m_curves;
    QCustomPlot* m_bars;
    QTableWidget* m_metrics;
    QTableWidget* m_diff;
    QSplitter* m_vertical;
    QSplitter* m_top;
    QSplitter* m_bottom;
};

}  // namespace hearth::ui
