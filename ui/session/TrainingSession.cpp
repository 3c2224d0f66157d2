#include "ui/session/TrainingSession.h"

#include "storage/RunEdits.h"
#include "storage/RunWriter.h"
#include "ui/session/UiEventSink.h"
#include "ui/session/WriterJobs.h"

#include <utility>

namespace hearth::ui {

TrainingSession::TrainingSession(QString dbPath, QObject* parent)
    : QObject(parent), m_dbPath(std::move(dbPath)), m_writer(sharedRunWriter(m_dbPath))
{
    registerMetaTypes();
    m_drainTimer.setInterval(40);
    connect(&m_drainTimer, &QTimer::timeout, this, &TrainingSession::drain);
}

TrainingSession::~TrainingSession()
{
    if (m_abandoned)
        *m_abandoned = true;
    if (m_state == State::Running) {
        // The recorder has queued every event by the time the thread has joined; the writer
        // commits them before it closes (its last owner destroys it), so nothing waits here.
        m_controller.requestStop();
        m_controller.wait();
    }
}

bool TrainingSession::start(const hearth::ExperimentConfig& config, QString* error, std::optional<int64_t> sweepId)
{
    if (m_state != State::Idle || m_controller.isRunning()) {
        if (error)
            *error = tr("A run is already in progress.");
        return false;
    }
    std::string configJson;
    try {
        configJson = hearth::configToJson(config);
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
    m_state = State::Creating;
    m_stopRequested = false;
    m_runId = 0;
    m_abandoned = std::make_shared<std::atomic<bool>>(false);
    struct Created {
        int64_t runId = 0;
        std::string artifactsDir;
    };
    hearth::RunWriter* writer = m_writer.get();   // jobs run before their writer is destroyed
    submitToWriter(
        *m_writer, this,
        [writer, abandoned = m_abandoned, name = config.name, configJson, sweepId](hearth::sqlite::Connection& db) {
            Created created;
            if (*abandoned)
                return created;
            created.runId = hearth::runedits::createRun(db, name, configJson, sweepId);
            created.artifactsDir = writer->artifactsDir(created.runId);
            return created;
        },
        [this, config](const Created& created) { onRunCreated(created.runId, created.artifactsDir, config); },
        [this](const QString& message) {
            failStart(tr("Could not record the run in %1: %2").arg(m_dbPath, message));
        });
    Q_EMIT runningChanged(true);
    return true;
}

void TrainingSession::onRunCreated(int64_t runId, const std::string& artifactsDir, const hearth::ExperimentConfig& config)
{
    if (m_state != State::Creating)
        return;
    hearth::RunOptions options;
    options.artifacts_dir = artifactsDir;
    m_sink = std::make_shared<UiEventSink>();
    auto recorder = std::make_shared<hearth::RunRecorder>(m_writer, runId);
    bool started = false;
    QString problem = tr("The engine is still busy with the previous run.");
    try {
        // The recorder comes first so the store has an event before the UI shows it.
        started = m_controller.start(config, options, {recorder, m_sink});
    } catch (const std::exception& e) {
        problem = QString::fromStdString(e.what());
    }
    if (!started) {
        // The row exists: finish it as failed rather than leave it `running`.
        hearth::RunFailed failed;
        failed.message = problem.toStdString();
        m_writer->enqueue(runId, failed);
        failStart(problem);
        return;
    }
    m_runId = runId;
    m_state = State::Running;
    m_drainTimer.start();
    if (m_stopRequested)
        m_controller.requestStop();
    Q_EMIT runStarted(m_runId, QString::fromStdString(config.name));
}

void TrainingSession::failStart(const QString& message)
{
    m_state = State::Idle;
    Q_EMIT runningChanged(false);
    Q_EMIT startFailed(message);
}

void TrainingSession::stop()
{
    if (m_state == State::Creating)
        m_stopRequested = true;
    else if (m_state == State::Running)
        m_controller.requestStop();
}

void TrainingSession::drain()
{
    if (!m_sink)
        return;
    // Read "still running" before taking the batch: events pushed before the thread ended
    // are then part of this batch.
    const bool ended = m_state == State::Running && !m_controller.isRunning();
    EventBatch batch = m_sink->takeAll();
    if (!batch.empty())
        Q_EMIT eventsReady(batch);
    if (ended)
        finishRun();
}

void TrainingSession::finishRun()
{
    const hearth::RunOutcome outcome = m_controller.wait();   // the thread has ended: joins at once
    EventBatch rest = m_sink->takeAll();
    if (!rest.empty())
        Q_EMIT eventsReady(rest);
    m_drainTimer.stop();
    m_state = State::Committing;
    // Every event of the run is queued by now; a job runs after all of them are committed.
    const qint64 runId = m_runId;
    submitToWriter(
        *m_writer, this, [](hearth::sqlite::Connection&) {}, [this, runId, outcome] { endRun(runId, outcome); },
        [this, runId, outcome](const QString&) { endRun(runId, outcome); });
}

void TrainingSession::endRun(qint64 runId, const hearth::RunOutcome& outcome)
{
    m_state = State::Idle;
    Q_EMIT runningChanged(false);
    Q_EMIT runEnded(runId, outcome.status, QString::fromStdString(outcome.message));
}

}  // namespace hearth::ui
