#pragma once
// CompareView: two or more runs side by side — overlaid curves (one colour per run; x by step,
// epoch or wall time), the config keys that differ, a metrics table with speed-up against a
// chosen baseline, and bars of training time and test accuracy. The runs (every step of each)
// are read through the view's own StoreLoader, off the GUI thread.

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

class StoreLoader;

class CompareView final : public QWidget {
    Q_OBJECT

public:
    enum class Metric { TrainLoss, ValLoss, ValAccuracy, LearningRate, Throughput };
    enum class XAxis { Step, Epoch, WallTime };

    explicit CompareView(const QString& dbPath, QWidget* parent = nullptr);

    QList<qint64> runIds() const;           // the runs shown (unknown ids are left out)
    bool isLoading() const;
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

    struct RunData {
        hearth::RunSummary summary;
        std::vector<hearth::StepMetrics> steps;
        std::vector<hearth::EpochMetrics> epochs;
    };

public Q_SLOTS:
    // Reads the runs off the GUI thread ("Loading…" meanwhile) and shows them when they arrive
    // (loaded). Runs asked for later replace runs still loading.
    void setRuns(const QList<qint64>& runIds);
    void reload();

Q_SIGNALS:
    void loaded();

private:
    void display(std::vector<RunData> runs);
    void updateHint();
    void drawCurves();
    void drawBars();
    void fillMetrics();
    void fillDiff();
    QString runLabel(const RunData& run) const;

    StoreLoader* m_loader;
    std::vector<RunData> m_runs;
    QList<qint64> m_requested;
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
