#pragma once
// LiveView: the "Watch live" tab — failure banner, progress, the live charts, the log and the
// memory gauges — fed with the batches TrainingSession drains from the engine.

#include "ui/session/MetaTypes.h"

#include <QWidget>

class QSplitter;

namespace hearth::ui {

class BreakdownChart;
class DeviceMonitorPanel;
class FailureBanner;
class LivePlots;
class LogPane;
class ProgressPanel;

class LiveView final : public QWidget {
    Q_OBJECT

public:
    explicit LiveView(QWidget* parent = nullptr);

    LivePlots* plots() const { return m_plots; }
    ProgressPanel* progress() const { return m_progress; }
    DeviceMonitorPanel* devices() const { return m_devices; }
    BreakdownChart* breakdown() const { return m_breakdown; }
    LogPane* log() const { return m_log; }
    FailureBanner* banner() const { return m_banner; }
    QByteArray saveSplitterState() const;
    void restoreSplitterState(const QByteArray& state);

public Q_SLOTS:
    void beginRun(qint64 runId, const QString& name);
    // A resumed run: what it logged before the interruption, drawn before its new steps.
    void showHistory(const std::vector<hearth::StepMetrics>& steps, const std::vector<hearth::EpochMetrics>& epochs);
    void handleEvents(const hearth::ui::EventBatch& batch);
    void showProblem(const QString& title, const QString& message, const QString& suggestion = {});

private:
    FailureBanner* m_banner;
    ProgressPanel* m_progress;
    LivePlots* m_plots;
    LogPane* m_log;
    DeviceMonitorPanel* m_devices;
    BreakdownChart* m_breakdown;
    QSplitter* m_vertical;
    QSplitter* m_bottom;
};

}  // namespace hearth::ui
