#pragma once
// LivePlots: the four live charts of a run — training loss per step (with EMA smoothing),
// validation loss/accuracy per epoch, learning rate and throughput — fed in batches and
// replotted once per batch.

#include "engine/events/Events.h"

#include <QVector>
#include <QWidget>

#include <initializer_list>

class QCustomPlot;
class QCPGraph;
class QCPItemText;
class QHBoxLayout;
class QLabel;
class QSlider;

namespace hearth::ui {

class LivePlots final : public QWidget {
    Q_OBJECT

public:
    enum class Plot { Loss, Epochs, LearningRate, Throughput };

    explicit LivePlots(QWidget* parent = nullptr);

    void clear();
    void setMaxEpochs(int64_t epochs);   // the epoch axis spans the whole run from the start
    void appendSteps(const std::vector<hearth::StepMetrics>& steps);
    void appendEpoch(const hearth::EpochMetrics& epoch);
    // 0 = raw, up to 0.99 = heavy smoothing (TensorBoard-style debiased EMA).
    void setSmoothing(double weight);
    double smoothing() const { return m_smoothing; }
    int pointCount(Plot plot) const;
    QCustomPlot* plot(Plot plot) const;
    void resetView();
    // Saves the four charts as one image (PNG) or document (PDF).
    bool saveAll(const QString& path);

private:
    QHBoxLayout* makeToolbar();
    QCustomPlot* makePlot(const QString& title, const QString& xLabel, const QString& yLabel);
    void recomputeEma();
    void replotAll();
    void fitToData(QCustomPlot* plot);
    void replot(std::initializer_list<QCustomPlot*> plots);
    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void showContextMenu(QCustomPlot* plot, const QPoint& pos);

    QCustomPlot* m_lossPlot;
    QCustomPlot* m_epochPlot;
    QCustomPlot* m_lrPlot;
    QCustomPlot* m_speedPlot;
    QCPGraph* m_lossRaw = nullptr;
    QCPGraph* m_lossEma = nullptr;
    QCPGraph* m_valLoss = nullptr;
    QCPGraph* m_trainLossEpoch = nullptr;
    QCPGraph* m_valAcc = nullptr;
    QCPGraph* m_lr = nullptr;
    QCPGraph* m_speed = nullptr;
    QCPItemText* m_epochHint = nullptr;
    QSlider* m_smoothingSlider;
    QLabel* m_smoothingLabel;
    QVector<double> m_steps, m_losses;
    double m_smoothing = 0.6;
    double m_emaNumerator = 0.0;     // running EMA state for appends (debiased by m_emaWeight)
    double m_emaWeight = 0.0;
    bool m_followData = true;        // until the user pans or zooms
    bool m_stale = false;
    int64_t m_maxEpochs = 0;            // data arrived while hidden
};

}  // namespace hearth::ui
