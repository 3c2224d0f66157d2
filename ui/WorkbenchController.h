#pragma once
// WorkbenchController: what the workbench does between the training session and its views. A
// started run is shown live, an ended run refreshes the history and opens its report, a finished
// technique ladder opens in Compare, and the run's state is reported for the status bar.
// MainWindow builds the widgets and hands them here; the decisions live in this class.

#include "engine/events/Events.h"
#include "engine/ladder/LadderPlan.h"
#include "engine/ladder/TechniqueLadder.h"

#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hearth::ui {

class CompareView;
class ExperimentPanel;
class HistoryView;
class LadderRunner;
class LiveView;
class ReportView;
class StoreLoader;
class TrainingSession;

enum class WorkbenchTab { Live, Report, History, Compare };

struct WorkbenchViews {
    ExperimentPanel* panel = nullptr;
    LiveView* live = nullptr;
    ReportView* report = nullptr;
    HistoryView* history = nullptr;
    CompareView* compare = nullptr;
};

class WorkbenchController final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(WorkbenchController)

public:
    WorkbenchController(TrainingSession* session, LadderRunner* ladder, const WorkbenchViews& views,
                        QObject* parent = nullptr);

    // The panel's experiment; false when it did not start (the Live tab then says why, also when
    // the store could not create the run: that comes later, from the writer thread).
    bool startRun();
    // The technique ladder of the panel's experiment (a further accumulation step up to
    // `targetBatch` when given).
    bool startLadder(std::optional<int64_t> targetBatch);
    bool startLadder(const hearth::LadderPlan& plan);   // the planner's (LadderPlanDialog)
    // The memory ladder of the panel's experiment (each memory toggle turned on in turn).
    bool startMemoryLadder();
    void stopRun();
    // Continues a stopped, interrupted or failed run (hearth-cli resume): what it logged before
    // is read first and drawn in the Live tab, then its new steps follow.
    void resumeRun(qint64 runId);
    void openReport(qint64 runId);
    void compareRuns(const QList<qint64>& runIds);
    // A run or a technique ladder is in progress.
    bool isBusy() const;
    // A valid experiment and nothing in progress.
    bool canStart() const;

Q_SIGNALS:
    void tabRequested(hearth::ui::WorkbenchTab tab);
    void runStatusChanged(const QString& text);            // the status bar's run label
    void statusMessage(const QString& text, int timeoutMs);   // a transient status-bar message (0: until replaced)
    void canStartChanged(bool canStart);
    void busyChanged(bool busy);

private:
    bool startLadder(const hearth::LadderOptions& options);
    void connectSession();
    void connectLadder();
    void onRunEnded(qint64 runId, int status, const QString& message);
    void updateBusy();

    // What a resumed run logged up to its newest training state (drawn when it starts).
    struct ResumeHistory {
        qint64 runId = 0;
        QString name;
        std::string status;
        int64_t stateStep = -1;   // the optimizer step of the newest training state; -1 none
        std::vector<hearth::StepMetrics> steps;
        std::vector<hearth::EpochMetrics> epochs;
    };
    void onResumeHistory(ResumeHistory history);

    TrainingSession* m_session;
    LadderRunner* m_ladder;
    WorkbenchViews m_views;
    StoreLoader* m_loader = nullptr;   // created at the first resume
    std::optional<ResumeHistory> m_resumed;
    QStringList m_ladderLeftOut;       // the running ladder's rungs left out: "label (slower: steady 1.02x, ...)", "label (not run: ...)"
    QString m_ladderPrediction;   // the step about to run: its predicted footprint, for the status line
};

}  // namespace hearth::ui
