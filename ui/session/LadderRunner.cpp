#include "ui/session/LadderRunner.h"

#include "engine/config/DeviceInfo.h"
#include "storage/RunWriter.h"
#include "ui/session/TrainingSession.h"

#include <QTimer>

namespace hearth::ui {

LadderRunner::LadderRunner(TrainingSession* session, QObject* parent) : QObject(parent), m_session(session)
{
    connect(m_session, &TrainingSession::runEnded, this,
            [this](qint64 runId, hearth::RunStatus status, const QString&) { onRunEnded(runId, static_cast<int>(status)); });
}

bool LadderRunner::start(const hearth::ExperimentConfig& base, std::optional<int64_t> targetBatch, QString* error)
{
    if (m_session->isRunning() || !m_done) {
        if (error)
            *error = tr("A run is already in progress.");
        return false;
    }
    try {
        hearth::LadderOptions options;
        options.target_batch = targetBatch;
        m_steps = hearth::buildTechniqueLadder(base, hearth::queryDeviceCapabilities(), options);
        m_sweepId = sharedRunWriter(m_session->dbPath())->createSweep(base.name + " ladder", "ladder");
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
    m_runIds.clear();
    m_next = 0;
    m_done = false;
    m_stopRequested = false;
    return startStep(error);
}

bool LadderRunner::startStep(QString* error)
{
    const auto& step = m_steps[static_cast<size_t>(m_next)];
    ++m_next;
    if (!m_session->start(step.config, error, m_sweepId)) {
        m_done = true;
        Q_EMIT finished(m_runIds, false);
        return false;
    }
    m_runIds << m_session->currentRunId();
    Q_EMIT stepStarted(m_next - 1, static_cast<int>(m_steps.size()), QString::fromStdString(step.label));
    return true;
}

void LadderRunner::stop()
{
    if (m_done)
        return;
    m_stopRequested = true;
    m_session->stop();
}

void LadderRunner::onRunEnded(qint64 runId, int status)
{
    if (m_done || m_runIds.isEmpty() || m_runIds.back() != runId)
        return;   // a run the ladder did not start
    const bool completed = static_cast<hearth::RunStatus>(status) == hearth::RunStatus::Completed;
    if (!completed || m_stopRequested || m_next >= static_cast<int>(m_steps.size())) {
        m_done = true;
        Q_EMIT finished(m_runIds, completed && !m_stopRequested);
        return;
    }
    // The next step starts once this run's end has reached every receiver (the window shows the
    // ended run's status and report first), not from inside the signal that announces it.
    QTimer::singleShot(0, this, [this] {
        if (m_done) return;
        if (m_stopRequested) {
            m_done = true;
            Q_EMIT finished(m_runIds, false);
            return;
        }
        QString error;
        startStep(&error);  // emits finished(.., false) itself when the step cannot start
    });
}

}  // namespace hearth::ui
