#include "ui/session/CliProcess.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QStandardPaths>

namespace hearth::ui {

CliProcess::CliProcess(QObject* parent) : QObject(parent)
{
    connect(&m_process, &QProcess::readyReadStandardOutput, this, &CliProcess::readLines);
    connect(&m_process, &QProcess::readyReadStandardError, this, [this] {
        const auto text = QString::fromUtf8(m_process.readAllStandardError());
        for (const auto& line : text.split('\n', Qt::SkipEmptyParts)) {
            m_errors << line.trimmed();
            if (m_errors.size() > 20)
                m_errors.removeFirst();
        }
    });
    connect(&m_process, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        readLines();
        if (!m_pending.isEmpty())
            Q_EMIT lineRead(std::exchange(m_pending, {}));
        Q_EMIT finished(exitCode, status == QProcess::CrashExit);
    });
}

CliProcess::~CliProcess()
{
    if (m_process.state() == QProcess::NotRunning)
        return;
    m_process.blockSignals(true);   // no signals into a half-destroyed owner
    m_process.terminate();
    if (!m_process.waitForFinished(kGraceMs)) {
        m_process.kill();
        m_process.waitForFinished(5000);
    }
}

QString CliProcess::cliPath()
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

bool CliProcess::start(const QStringList& arguments, const QString& what, QString* error)
{
    const QString cli = cliPath();
    if (cli.isEmpty()) {
        if (error)
            *error = tr("%1 runs in hearth-cli, which was not found next to the workbench or on PATH (set HEARTH_CLI "
                        "to its path).")
                         .arg(what);
        return false;
    }
    m_pending.clear();
    m_errors.clear();
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("HEARTH_PARENT_PID"), QString::number(QCoreApplication::applicationPid()));
    m_process.setProcessEnvironment(env);
    m_process.start(cli, arguments);
    if (!m_process.waitForStarted(10000)) {
        if (error)
            *error = tr("Could not start %1: %2").arg(cli, m_process.errorString());
        return false;
    }
    return true;
}

void CliProcess::stop()
{
    if (m_process.state() != QProcess::NotRunning)
        m_process.terminate();
}

QString CliProcess::failureText(int exitCode, bool crashed) const
{
    const QString why = m_errors.isEmpty() ? tr("no output") : m_errors.join(QStringLiteral("\n"));
    return crashed ? tr("hearth-cli crashed: %1").arg(why) : tr("hearth-cli exited with %1: %2").arg(exitCode).arg(why);
}

void CliProcess::readLines()
{
    m_pending += m_process.readAllStandardOutput();
    qsizetype end = 0;
    while ((end = m_pending.indexOf('\n')) >= 0) {
        const QByteArray line = m_pending.left(end);
        m_pending.remove(0, end + 1);
        Q_EMIT lineRead(line);
    }
}

}  // namespace hearth::ui
