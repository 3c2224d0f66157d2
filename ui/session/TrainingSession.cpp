#include "ui/session/TrainingSession.h"

#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "ui/session/UiEventSink.h"

#include <map>
#include <mutex>

namespace hearth::ui {

std::shared_ptr<hearth::RunWriter> sharedRunWriter(const QString& dbPath)
{
    static std::mutex mutex;
    static std::map<QString, std::weak_ptr<hearth::RunWriter>> writers;
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = writers[dbPath];
    if (auto existing = slot.lock())
        return existing;
    auto writer = std::make_shared<hearth::RunWriter>(dbPath.toStdString());
    slot = writer;
    return writer;
}

TrainingSession::TrainingSession(QString dbPath, QObject* parent)
    : QObject(parent), m_dbPath(std::move(dbPath))
{
    registerMetaTypes();
    m_drainTimer.setInterval(40);
    connect(&m_drainTimer, &QTimer::timeout, this, &TrainingSession::drain);
}

TrainingSession::~TrainingSession()
{
    if (m_active) {
        m_controller.requestStop();
        m_controller.wait();
        if (m_writer)
            m_writer->flush();
    }
}

bool TrainingSession::start(const hearth::ExperimentConfig& config, QString* error, std::optional<int64_t> sweepId)
{
    if (m_active || m_controller.isRunning()) {
        if (error)
            *error = tr("A run is already in progress.");
        return false;
    }
    try {
        if (!m_writer)
            m_writer = sharedRunWriter(m_dbPath);
        const int64_t runId = m_writer->createRun(config.name, hearth::configToJson(config), sweepId);
        hearth::RunOptions options;
        options.artifacts_dir = m_writer->artifactsDir(runId);
        m_sink = std::make_shared<UiEventSink>();
        auto recorder = std::make_shared<hearth::RunRecorder>(m_writer, runId);
        // The recorder comes first so the store has an event before the UI shows it.
        if (!m_controller.start(config, options, {recorder, m_sink})) {
            if (error)
                *error = tr("The engine is still busy with the previous run.");
            return false;
        }
        m_runId = runId;
    } catch (const std::exception& e) {
        if (error)
            *error = tr("Could not record the run in %1: %2").arg(m_dbPath, QString::fromStdString(e.what()));
        return false;
    }
    m_active = true;
    m_drainTimer.start();
    Q_EMIT runStarted(m_runId, QString::fromStdString(config.name));
    Q_EMIT runningChanged(true);
    return true;
}

void TrainingSession::stop()
{
    if (m_active)
        m_controller.requestStop();
}

void TrainingSession::drain()
{
    if (!m_sink)
        return;
    // Read "still running" before taking the batch: events pushed before the thread ended
    // are then part of this batch.
    const bool ended = m_active && !m_controller.isRunning();
    EventBatch batch = m_sink->takeAll();
    if (!batch.empty())
        Q_EMIT eventsReady(batch);
    if (ended)
        finishRun();
}

void TrainingSession::finishRun()
{
    const hearth::RunOutcome outcome = m_controller.wait();
    EventBatch rest = m_sink->takeAll();
    if (!rest.empty())
        Q_EMIT eventsReady(rest);
    if (m_writer)
        m_writer->flush();
    m_drainTimer.stop();
    m_active = false;
    Q_EMIT runningChanged(false);
    Q_EMIT runEnded(m_runId, outcome.status, QString::fromStdString(outcome.message));
}

}  // namespace hearth::ui
