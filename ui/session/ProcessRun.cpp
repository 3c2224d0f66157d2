#include "ui/session/ProcessRun.h"

#include "engine/events/EventJson.h"
#include "ui/session/CliProcess.h"

#include <QDir>

namespace hearth::ui {

ProcessRun::ProcessRun(QString dbPath, std::shared_ptr<hearth::EventSink> sink, QObject* parent)
    : QObject(parent), m_dbPath(std::move(dbPath)), m_sink(std::move(sink)), m_process(new CliProcess(this))
{
    connect(m_process, &CliProcess::lineRead, this, &ProcessRun::onLine);
    connect(m_process, &CliProcess::finished, this, &ProcessRun::onFinished);
}

ProcessRun::~ProcessRun() = default;   // CliProcess stops the child

bool ProcessRun::isRunning() const
{
    return m_process->isRunning();
}

qint64 ProcessRun::processId() const
{
    return m_process->processId();
}

bool ProcessRun::start(const hearth::ExperimentConfig& config, std::optional<int64_t> sweepId, QString* error)
{
    m_config.setFileTemplate(QDir::temp().filePath("hearth-run-XXXXXX.json"));
    const QByteArray json = QByteArray::fromStdString(hearth::configToJson(config));
    if (!m_config.open() || m_config.write(json) != json.size() || !m_config.flush()) {
        if (error)
            *error = tr("Could not write the experiment for hearth-cli: %1").arg(m_config.errorString());
        return false;
    }
    QStringList args{"--db", m_dbPath, "run", "--config", m_config.fileName(), "--events"};
    if (sweepId)
        args << "--sweep" << QString::number(*sweepId);
    m_runId = 0;
    m_outcome.reset();
    return m_process->start(args, tr("A run"), error);
}

bool ProcessRun::resume(qint64 runId, QString* error)
{
    m_runId = 0;
    m_outcome.reset();
    return m_process->start({"--db", m_dbPath, "resume", QString::number(runId), "--events"}, tr("A resumed run"),
                            error);
}

void ProcessRun::stop()
{
    m_process->stop();
}

void ProcessRun::onLine(const QByteArray& bytes)
{
    const std::string line = bytes.toStdString();
    if (const auto id = hearth::eventjson::runIdFromLine(line)) {
        m_runId = *id;
        Q_EMIT runCreated(m_runId);
        return;
    }
    const auto event = hearth::eventjson::fromLine(line);
    if (!event)
        return;   // not an event line
    if (const auto* done = std::get_if<hearth::RunFinished>(&*event)) {
        m_outcome = hearth::RunOutcome{done->status == "stopped" ? hearth::RunStatus::Stopped
                                                                   : hearth::RunStatus::Completed,
                                       hearth::FailureKind::Training, ""};
    } else if (const auto* failed = std::get_if<hearth::RunFailed>(&*event)) {
        m_outcome = hearth::RunOutcome{hearth::RunStatus::Failed, failed->kind, failed->message};
    }
    m_sink->onEvent(*event);
}

void ProcessRun::onFinished(int exitCode, bool crashed)
{
    hearth::RunOutcome outcome;
    // A verdict counts only when the exit status agrees with it: a run that finished but whose
    // store failed exits 3, a rank that failed after rank 0 finished makes the launcher exit non-zero.
    const bool agrees = m_outcome && !crashed &&
                        (m_outcome->status == hearth::RunStatus::Failed ||
                         (m_outcome->status == hearth::RunStatus::Completed && exitCode == 0) ||
                         (m_outcome->status == hearth::RunStatus::Stopped && exitCode == 130));
    if (agrees) {
        outcome = *m_outcome;
    } else {
        outcome.status = hearth::RunStatus::Failed;
        outcome.message = m_process->failureText(exitCode, crashed).toStdString();
    }
    if (!m_config.fileName().isEmpty())   // a resume wrote no config file
        m_config.remove();
    Q_EMIT finished(m_runId, outcome);
}

}  // namespace hearth::ui
