#include "ui/session/TrainingSession.h"

#include "storage/RunEdits.h"
#include "storage/RunWriter.h"
#include "ui/session/ProcessRun.h"
#include "ui/session/UiEventSink.h"
#include "ui/session/WriterJobs.h"

#include <utility>

namespace hearth::ui {
namespace {

// The run's end as its row holds it; `fromJob` (what the child's events and exit status said)
// fills in what the row cannot: the child's message when the row was left `running` because
// the child died, or when the row says failed without a message.
hearth::RunOutcome outcomeFromRow(const std::optional<hearth::runedits::StoredStatus>& row,
                                  const hearth::RunOutcome& fromJob)
{
    if (!row)
        return fromJob;
    hearth::RunOutcome outcome = fromJob;
    if (row->status == "completed") {
        outcome = {hearth::RunStatus::Completed, hearth::FailureKind::Training, ""};
    } else if (row->status == "stopped") {
        outcome = {hearth::RunStatus::Stopped, hearth::FailureKind::Training, ""};
    } else if (row->status == "failed") {
        outcome.status = hearth::RunStatus::Failed;
        if (!row->failure_message.empty())
            outcome.message = row->failure_message;
    } else {   // still `running`: the child died before it could finish the row
        outcome.status = hearth::RunStatus::Failed;
    }
    return outcome;
}

}  // namespace

TrainingSession::TrainingSession(QString dbPath, QObject* parent)
    : QObject(parent), m_dbPath(std::move(dbPath)), m_writer(sharedRunWriter(m_dbPath))
{
    registerMetaTypes();
    m_drainTimer.setInterval(40);
    connect(&m_drainTimer, &QTimer::timeout, this, &TrainingSession::drain);
}

TrainingSession::~TrainingSession() = default;   // ProcessRun stops the child and waits for it

qint64 TrainingSession::jobProcessId() const
{
    return m_job && m_job->isRunning() ? m_job->processId() : 0;
}

bool TrainingSession::start(const hearth::ExperimentConfig& config, QString* error, std::optional<int64_t> sweepId)
{
    return startJob(QString::fromStdString(config.name),
                    [&](ProcessRun& job) { return job.start(config, sweepId, error); }, error);
}

bool TrainingSession::resume(qint64 runId, const QString& name, QString* error)
{
    return startJob(name, [&](ProcessRun& job) { return job.resume(runId, error); }, error);
}

bool TrainingSession::startJob(const QString& name, const std::function<bool(ProcessRun&)>& launch, QString* error)
{
    if (m_state != State::Idle) {
        if (error)
            *error = tr("A run is already in progress.");
        return false;
    }
    m_sink = std::make_shared<UiEventSink>();
    m_job = std::make_unique<ProcessRun>(m_dbPath, m_sink);
    connect(m_job.get(), &ProcessRun::runCreated, this, [this, name](qint64 runId) {
        m_runId = runId;
        m_state = State::Running;
        Q_EMIT runStarted(m_runId, name);
    });
    connect(m_job.get(), &ProcessRun::finished, this, &TrainingSession::onJobEnded);
    m_runId = 0;
    if (!launch(*m_job)) {
        m_job.reset();
        return false;
    }
    m_state = State::Starting;
    m_drainTimer.start();
    Q_EMIT runningChanged(true);
    return true;
}

void TrainingSession::stop()
{
    // Before the child has its row it still gets the signal: it stops at its first step.
    if (m_job && m_job->isRunning())
        m_job->stop();
}

void TrainingSession::drain()
{
    if (!m_sink)
        return;
    EventBatch batch = m_sink->takeAll();
    if (!batch.empty())
        Q_EMIT eventsReady(batch);
}

void TrainingSession::onJobEnded(qint64 runId, const hearth::RunOutcome& outcome)
{
    // Every line the child wrote was read before `finished`: hand over the rest.
    drain();
    m_drainTimer.stop();
    m_job.release()->deleteLater();   // it is emitting this signal
    if (runId == 0) {
        failStart(QString::fromStdString(outcome.message));
        return;
    }
    // The child committed the run before it exited (or died trying): the row says how it ended.
    m_state = State::Ending;
    submitToWriter(
        *m_writer, this, [runId](hearth::sqlite::Connection& db) { return hearth::runedits::storedStatus(db, runId); },
        [this, runId, outcome](const std::optional<hearth::runedits::StoredStatus>& row) {
            endRun(runId, outcomeFromRow(row, outcome));
        },
        [this, runId, outcome](const QString& message) {
            hearth::RunOutcome unread = outcome;
            unread.message += (unread.message.empty() ? "" : "\n") +
                              tr("(the run's stored status could not be read: %1)").arg(message).toStdString();
            endRun(runId, unread);
        });
}

void TrainingSession::failStart(const QString& message)
{
    m_state = State::Idle;
    Q_EMIT runningChanged(false);
    Q_EMIT startFailed(message);
}

void TrainingSession::endRun(qint64 runId, const hearth::RunOutcome& outcome)
{
    m_state = State::Idle;
    Q_EMIT runningChanged(false);
    Q_EMIT runEnded(runId, outcome.status, QString::fromStdString(outcome.message));
}

}  // namespace hearth::ui
