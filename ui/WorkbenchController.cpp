#include "ui/WorkbenchController.h"

#include "engine/train/StateFiles.h"
#include "ui/compare/CompareView.h"
#include "ui/experiment/ExperimentPanel.h"
#include "ui/history/HistoryModel.h"
#include "ui/history/HistoryView.h"
#include "ui/live/LiveView.h"
#include "ui/report/ReportView.h"
#include "ui/session/LadderRunner.h"
#include "ui/session/StoreLoader.h"
#include "ui/session/TrainingSession.h"

namespace hearth::ui {

WorkbenchController::WorkbenchController(TrainingSession* session, LadderRunner* ladder, const WorkbenchViews& views,
                                         QObject* parent)
    : QObject(parent), m_session(session), m_ladder(ladder), m_views(views)
{
    connectSession();
    connectLadder();
    connect(m_views.panel, &ExperimentPanel::validityChanged, this, [this] { Q_EMIT canStartChanged(canStart()); });
    connect(m_views.history, &HistoryView::openReportRequested, this, &WorkbenchController::openReport);
    connect(m_views.history, &HistoryView::predictRequested, this, [this](qint64 runId) {
        m_views.report->predictWith(runId);
        Q_EMIT tabRequested(WorkbenchTab::Report);
    });
    connect(m_views.history, &HistoryView::compareRequested, this, &WorkbenchController::compareRuns);
    connect(m_views.history, &HistoryView::resumeRequested, this, &WorkbenchController::resumeRun);
}

void WorkbenchController::connectSession()
{
    connect(m_session, &TrainingSession::runStarted, this, [this](qint64 runId, const QString& name) {
        m_views.live->beginRun(runId, name);
        if (m_resumed && m_resumed->runId == runId) {
            m_views.live->showHistory(m_resumed->steps, m_resumed->epochs);
            Q_EMIT statusMessage(QString(), 0);   // "Resuming run N…" is done: the run is running
        }
        m_resumed.reset();
        Q_EMIT runStatusChanged(tr("Running run %1").arg(runId));
        Q_EMIT tabRequested(WorkbenchTab::Live);
    });
    connect(m_session, &TrainingSession::startFailed, this, [this](const QString& message) {
        m_views.live->showProblem(tr("The run could not start"), message);
        Q_EMIT runStatusChanged(tr("Idle"));
        Q_EMIT tabRequested(WorkbenchTab::Live);
    });
    connect(m_session, &TrainingSession::eventsReady, m_views.live, &LiveView::handleEvents);
    connect(m_session, &TrainingSession::runningChanged, this, [this] {
        m_views.history->model()->refresh();
        updateBusy();
    });
    connect(m_session, &TrainingSession::runEnded, this,
            [this](qint64 runId, hearth::RunStatus status, const QString& message) {
                onRunEnded(runId, static_cast<int>(status), message);
            });
}

void WorkbenchController::connectLadder()
{
    connect(m_ladder, &LadderRunner::runningChanged, this, &WorkbenchController::updateBusy);
    connect(m_ladder, &LadderRunner::stepStarted, this, [this](int index, int count, const QString& label) {
        if (index == 0)
            m_ladderLeftOut.clear();
        QString text = tr("Technique ladder: step %1 of %2 (%3)").arg(index + 1).arg(count).arg(label);
        if (!m_ladderPrediction.isEmpty())
            text += QStringLiteral("; ") + m_ladderPrediction;
        m_ladderPrediction.clear();
        if (!m_ladderLeftOut.isEmpty())
            text += tr("; left out: %1").arg(m_ladderLeftOut.join(QStringLiteral(", ")));
        Q_EMIT statusMessage(text, 0);
    });
    connect(m_ladder, &LadderRunner::stepProbing, this, [this](int index, int count, const QString& label) {
        Q_EMIT statusMessage(tr("Technique ladder: step %1 of %2 (%3): predicting its memory and step time (a short "
                                "probe)")
                                 .arg(index + 1)
                                 .arg(count)
                                 .arg(label),
                             0);
    });
    connect(m_ladder, &LadderRunner::stepPredicted, this,
            [this](int, const QString&, const QString& text, bool predicted) {
                m_ladderPrediction = predicted ? tr("predicted %1").arg(text) : tr("no prediction: %1").arg(text);
            });
    connect(m_ladder, &LadderRunner::stepNotRun, this, [this](int, const QString& label, const QString& reason) {
        m_ladderLeftOut << tr("%1 (not run: %2)").arg(label, reason);
    });
    connect(m_ladder, &LadderRunner::stepLeftOut, this,
            [this](int, const QString& label, const QString&, const QString& speedups) {
                m_ladderLeftOut << tr("%1 (slower: %2)").arg(label, speedups);
            });
    connect(m_ladder, &LadderRunner::failed, this, [this](const QString& message) {
        m_views.live->showProblem(tr("The technique ladder could not go on"), message);
        Q_EMIT tabRequested(WorkbenchTab::Live);
    });
    connect(m_ladder, &LadderRunner::finished, this, [this](const QList<qint64>& runIds, bool complete) {
        Q_EMIT statusMessage(complete ? tr("Technique ladder finished: %n run(s) compared.", nullptr, runIds.size())
                                      : tr("Technique ladder ended early."),
                             10000);
        if (runIds.size() >= 2)
            compareRuns(runIds);
    });
}

void WorkbenchController::onRunEnded(qint64 runId, int status, const QString& message)
{
    m_views.history->model()->refresh();
    m_views.report->showRun(runId);
    switch (static_cast<hearth::RunStatus>(status)) {
    case hearth::RunStatus::Completed:
        Q_EMIT runStatusChanged(tr("Run %1 completed").arg(runId));
        Q_EMIT statusMessage(tr("Run %1 completed — its report is in the Report tab (Ctrl+2).").arg(runId), 0);
        break;
    case hearth::RunStatus::Stopped:
        Q_EMIT runStatusChanged(tr("Run %1 stopped").arg(runId));
        break;
    case hearth::RunStatus::Failed:
        Q_EMIT runStatusChanged(tr("Run %1 failed").arg(runId));
        Q_EMIT statusMessage(message, 10000);
        break;
    }
}

bool WorkbenchController::isBusy() const
{
    return m_session->isRunning() || m_ladder->isRunning();
}

bool WorkbenchController::canStart() const
{
    return m_views.panel->isValid() && !isBusy();
}

void WorkbenchController::updateBusy()
{
    const bool busy = isBusy();
    m_views.panel->setRunning(busy);
    Q_EMIT busyChanged(busy);
    Q_EMIT canStartChanged(canStart());
}

bool WorkbenchController::startRun()
{
    if (!canStart())
        return false;
    const hearth::ExperimentConfig config = m_views.panel->config();
    m_views.panel->rememberConfig();
    QString error;
    // The run row is created on the writer thread: runStarted or startFailed follows.
    if (!m_session->start(config, &error)) {
        m_views.live->showProblem(tr("The run could not start"), error);
        Q_EMIT tabRequested(WorkbenchTab::Live);
        return false;
    }
    return true;
}

bool WorkbenchController::startLadder(std::optional<int64_t> targetBatch)
{
    hearth::LadderOptions options;
    options.target_batch = targetBatch;
    return startLadder(options);
}

bool WorkbenchController::startLadder(const hearth::LadderPlan& plan)
{
    if (!canStart())
        return false;
    m_views.panel->rememberConfig();
    QString error;
    if (!m_ladder->start(m_views.panel->config(), plan, &error)) {
        m_views.live->showProblem(tr("The technique ladder could not start"), error);
        Q_EMIT tabRequested(WorkbenchTab::Live);
        return false;
    }
    return true;
}

bool WorkbenchController::startMemoryLadder()
{
    hearth::LadderOptions options;
    options.kind = hearth::LadderKind::Memory;
    return startLadder(options);
}

bool WorkbenchController::startLadder(const hearth::LadderOptions& options)
{
    if (!canStart())
        return false;
    m_views.panel->rememberConfig();
    QString error;
    if (!m_ladder->start(m_views.panel->config(), options, &error)) {
        m_views.live->showProblem(tr("The technique ladder could not start"), error);
        Q_EMIT tabRequested(WorkbenchTab::Live);
        return false;
    }
    return true;
}

void WorkbenchController::stopRun()
{
    if (!isBusy())
        return;
    m_ladder->stop();   // no further ladder steps (does nothing outside a ladder)
    m_session->stop();
    Q_EMIT runStatusChanged(tr("Stopping after this step…"));
}

void WorkbenchController::resumeRun(qint64 runId)
{
    if (isBusy()) {
        Q_EMIT statusMessage(tr("Run %1 can be resumed once the run in progress has ended.").arg(runId), 10000);
        return;
    }
    if (!m_loader)
        m_loader = new StoreLoader(m_session->dbPath(), this);
    Q_EMIT statusMessage(tr("Resuming run %1…").arg(runId), 0);
    m_loader->load(
        [runId](const hearth::RunStore& store) {
            ResumeHistory h;
            h.runId = runId;
            const auto run = store.run(runId);
            if (!run)
                throw hearth::StoreError("Run #" + std::to_string(runId) + " is not in the store any more.");
            h.name = QString::fromStdString(run->name);
            h.status = run->status;
            const auto states = hearth::trainingStatesIn(store.artifactsDir(runId));
            h.stateStep = states.empty() ? -1 : hearth::trainingStateStep(states.front());
            // What stays of the run once it is reopened at that state.
            if (!states.empty()) {
                auto kept = store.historyKeptAt(runId, states.front());
                h.steps = std::move(kept.steps);
                h.epochs = std::move(kept.epochs);
            }
            return h;
        },
        [this](ResumeHistory h) { onResumeHistory(std::move(h)); },
        [this, runId](const QString& message) {
            m_views.live->showProblem(tr("Run %1 could not be resumed").arg(runId), message);
            Q_EMIT tabRequested(WorkbenchTab::Live);
        });
}

void WorkbenchController::onResumeHistory(ResumeHistory history)
{
    const qint64 runId = history.runId;
    QString problem;
    if (history.status != "stopped" && history.status != "interrupted" && history.status != "failed")
        problem = tr("Run %1 is %2: only a stopped, interrupted or failed run can be resumed.")
                      .arg(runId)
                      .arg(QString::fromStdString(history.status));
    else if (history.stateStep < 0)
        problem = tr("Run %1 has no saved training state: it ended before its first safety checkpoint "
                     "(trainer.safety_checkpoint), or was stored by an older Hearth. Start it anew.")
                      .arg(runId);
    QString error;
    if (problem.isEmpty()) {
        const QString name = history.name;
        m_resumed = std::move(history);
        if (m_session->resume(runId, name, &error))
            return;   // runStarted draws the history, then the new steps follow
        m_resumed.reset();
        problem = error;
    }
    m_views.live->showProblem(tr("Run %1 could not be resumed").arg(runId), problem);
    Q_EMIT statusMessage(QString(), 0);
    Q_EMIT tabRequested(WorkbenchTab::Live);
}

void WorkbenchController::openReport(qint64 runId)
{
    m_views.report->showRun(runId);
    Q_EMIT tabRequested(WorkbenchTab::Report);
}

void WorkbenchController::compareRuns(const QList<qint64>& runIds)
{
    m_views.compare->setRuns(runIds);
    m_views.history->selectRuns(runIds);
    Q_EMIT tabRequested(WorkbenchTab::Compare);
}

}  // namespace hearth::ui
