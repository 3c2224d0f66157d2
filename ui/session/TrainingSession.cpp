#include "ui/session/TrainingSession.h"

#include "engine/config/DeviceInfo.h"
#include "storage/RunEdits.h"
#include "storage/RunWriter.h"
#include "ui/session/ProcessRun.h"
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

bool TrainingSession::runsInProcesses(const hearth::ExperimentConfig& config)
{
    const auto t = hearth::resolveTrainer(config.trainer, hearth::queryDeviceCapabilities());
    return t.strategy != "auto" && t.devices.value_or(1) * t.num_nodes > 1;
}

bool TrainingSession::start(const hearth::ExperimentConfig& config, QString* error, std::optional<int64_t> sweepId)
{
    if (m_state != State::Idle || m_controller.isRunning() || (m_processes && m_processes->isRunning())) {
        if (error)
            *error = tr("A run is already in progress.");
        return false;
    }
    if (runsInProcesses(config))
        return startProcesses(config, error, sweepId);
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

bool TrainingSession::startProcesses(const hearth::ExperimentConfig& config, QString* error,
                                     std::optional<int64_t> sweepId)
{
    if (config.trainer.num_nodes > 1) {
        if (error)
            *error = tr("A run across %1 nodes is started with torchrun or srun on every node (see the README); "
                        "the workbench starts processes on this machine only.")
                         .arg(config.trainer.num_nodes);
        return false;
    }
    return startProcessRun(QString::fromStdString(config.name),
                           [&](ProcessRun& run) { return run.start(config, sweepId, error); });
}

bool TrainingSession::resume(qint64 runId, const QString& name, QString* error)
{
    if (m_state != State::Idle || m_controller.isRunning() || (m_processes && m_processes->isRunning())) {
        if (error)
            *error = tr("A run is already in progress.");
        return false;
    }
    return startProcessRun(name, [&](ProcessRun& run) { return run.resume(runId, error); });
}

bool TrainingSession::startProcessRun(const QString& name, const std::function<bool(ProcessRun&)>& launch)
{
    m_sink = std::make_shared<UiEventSink>();
    m_processes = std::make_unique<ProcessRun>(m_dbPath, m_sink);
    connect(m_processes.get(), &ProcessRun::runCreated, this, [this, name](qint64 runId) {
        m_runId = runId;
        m_state = State::Running;
        Q_EMIT runStarted(m_runId, name);
    });
    connect(m_processes.get(), &ProcessRun::finished, this, &TrainingSession::onProcessesEnded);
    m_stopRequested = false;
    m_runId = 0;
    if (!launch(*m_processes)) {
        m_processes.reset();
        return false;
    }
    m_state = State::Creating;
    m_drainTimer.start();
    Q_EMIT runningChanged(true);
    return true;
}

void TrainingSession::onProcessesEnded(qint64 runId, const hearth::RunOutcome& outcome)
{
    // Every event the processes wrote was read before `finished`: hand over the rest.
    EventBatch rest = m_sink->takeAll();
    if (!rest.empty())
        Q_EMIT eventsReady(rest);
    m_drainTimer.stop();
    m_processes.release()->deleteLater();   // it is emitting this signal
    // Rank 0 committed the run before it exited; the row is in the store for the views.
    if (runId == 0)
        failStart(QString::fromStdString(outcome.message));
    else
        endRun(runId, outcome);
}

void TrainingSession::failStart(const QString& message)
{
    m_state = State::Idle;
    Q_EMIT runningChanged(false);
    Q_EMIT startFailed(message);
}

void TrainingSession::stop()
{
    if (m_processes && m_processes->isRunning()) {
        // Before rank 0 has its row the launcher still gets the signal: every rank stops at its
        // first step.
        m_stopRequested = true;
        m_processes->stop();
        return;
    }
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
    // (A run in processes ends with ProcessRun::finished instead.)
    const bool ended = !m_processes && m_state == State::Running && !m_controller.isRunning();
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
