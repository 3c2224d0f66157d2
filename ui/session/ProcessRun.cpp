#include "ui/session/ProcessRun.h"

#include "engine/events/EventJson.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace hearth::ui {

ProcessRun::ProcessRun(QString dbPath, std::shared_ptr<hearth::EventSink> sink, QObject* parent)
    : QObject(parent), m_dbPath(std::move(dbPath)), m_sink(std::move(sink))
{
    connect(&m_process, &QProcess::readyReadStandardOutput, this, &ProcessRun::readLines);
    connect(&m_process, &QProcess::readyReadStandardError, this, [this] {
        const auto text = QString::fromUtf8(m_process.readAllStandardError());
        for (const auto& line : text.split('\n', Qt::SkipEmptyParts)) {
            m_errors << line.trimmed();
            if (m_errors.size() > 20)
                m_errors.removeFirst();
        }
    });
    connect(&m_process, &QProcess::finished, this, &ProcessRun::onFinished);
}

ProcessRun::~ProcessRun()
{
    if (m_process.state() == QProcess::NotRunning)
        return;
    m_process.blockSignals(true);   // no signals into a half-destroyed owner
    m_process.terminate();
    if (!m_process.waitForFinished(30000)) {
        m_process.kill();
        m_process.waitForFinished(5000);
    }
}

QString ProcessRun::cliPath()
{
    QString fromEnv = qEnvironmentVariable("HEARTH_CLI");
    if (!fromEnv.isEmpty() && QFileInfo(fromEnv).isExecutable())
        return fromEnv;
    const QDir here(QCoreApplication::applicationDirPath());
    for (const QString& candidate : {here.filePath("hearth-cli"), here.filePath("../cli/hearth-cli")}) {
        if (QFileInfo(candidate).isExecutable())
            return QFileInfo(candidate).canonicalFilePath();
    }
    return QStandardPaths::findExecutable("hearth-cli");
}

bool ProcessRun::start(const hearth::ExperimentConfig& config, std::optional<int64_t> sweepId, QString* error)
{
    const QString cli = cliPath();
    if (cli.isEmpty()) {
        if (error)
            *error = tr("A run on several devices is started by hearth-cli, which was not found next to the "
                        "workbench or on PATH (set HEARTH_CLI to its path).");
        return false;
    }
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
    return launch(cli, args, error);
}

bool ProcessRun::resume(qint64 runId, QString* error)
{
    const QString cli = cliPath();
    if (cli.isEmpty()) {
        if (error)
            *error = tr("A run is resumed by hearth-cli, which was not found next to the workbench or on PATH "
                        "(set HEARTH_CLI to its path).");
        return false;
    }
    return launch(cli, {"--db", m_dbPath, "resume", QString::number(runId), "--events"}, error);
}

bool ProcessRun::launch(const QString& cli, const QStringList& args, QString* error)
{
    m_runId = 0;
    m_outcome.reset();
    m_pending.clear();
    m_errors.clear();
    m_process.start(cli, args);
    if (!m_process.waitForStarted(10000)) {
        if (error)
            *error = tr("Could not start %1: %2").arg(cli, m_process.errorString());
        return false;
    }
    return true;
}

void ProcessRun::stop()
{
    if (m_process.state() != QProcess::NotRunning)
        m_process.terminate();
}

void ProcessRun::readLines()
{
    m_pending += m_process.readAllStandardOutput();
    qsizetype end = 0;
    while ((end = m_pending.indexOf('\n')) >= 0) {
        const std::string line = m_pending.left(end).toStdString();
        m_pending.remove(0, end + 1);
        if (const auto id = hearth::eventjson::runIdFromLine(line)) {
            m_runId = *id;
            Q_EMIT runCreated(m_runId);
            continue;
        }
        const auto event = hearth::eventjson::fromLine(line);
        if (!event)
            continue;   // not an event line
        if (const auto* done = std::get_if<hearth::RunFinished>(&*event)) {
            m_outcome = hearth::RunOutcome{done->status == "stopped" ? hearth::RunStatus::Stopped
                                                                       : hearth::RunStatus::Completed,
                                           hearth::FailureKind::Training, ""};
        } else if (const auto* failed = std::get_if<hearth::RunFailed>(&*event)) {
            m_outcome = hearth::RunOutcome{hearth::RunStatus::Failed, failed->kind, failed->message};
        }
        m_sink->onEvent(*event);
    }
}

void ProcessRun::onFinished(int exitCode, QProcess::ExitStatus status)
{
    readLines();
    hearth::RunOutcome outcome;
    if (m_outcome && !(m_outcome->status == hearth::RunStatus::Completed && exitCode != 0)) {
        outcome = *m_outcome;
    } else {
        // No verdict from rank 0 (it died, or another rank failed after it finished): what the
        // launcher printed says why.
        outcome.status = hearth::RunStatus::Failed;
        const QString why = m_errors.isEmpty() ? tr("no output") : m_errors.join(QStringLiteral("\n"));
        outcome.message = (status == QProcess::CrashExit
                               ? tr("hearth-cli crashed: %1").arg(why)
                               : tr("hearth-cli exited with %1: %2").arg(exitCode).arg(why))
                              .toStdString();
    }
    if (!m_config.fileName().isEmpty())   // a resume wrote no config file
        m_config.remove();
    Q_EMIT finished(m_runId, outcome);
}

}  // namespace hearth::ui
