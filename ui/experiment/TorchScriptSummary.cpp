#include "ui/experiment/TorchScriptSummary.h"

#include "ui/session/CliProcess.h"

#include <QFileInfo>

namespace hearth::ui {

TorchScriptSummary::TorchScriptSummary(QWidget* parent) : QLabel(parent)
{
    setObjectName(QStringLiteral("torchscriptSummary"));
    setWordWrap(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    setVisible(false);
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(300);
    connect(&m_debounce, &QTimer::timeout, this, &TorchScriptSummary::inspect);
}

TorchScriptSummary::~TorchScriptSummary()
{
    if (m_process) {
        m_process->disconnect(this);
        m_process->kill();
        m_process->waitForFinished(2000);
    }
}

void TorchScriptSummary::setFile(const QString& path)
{
    m_path = path.trimmed();
    setVisible(!m_path.isEmpty());
    if (m_path.isEmpty()) {
        m_debounce.stop();
        setText(QString());
        return;
    }
    if (!QFileInfo(m_path).isFile()) {
        m_debounce.stop();
        setText(tr("No such file: %1").arg(m_path));
        return;
    }
    setText(tr("Reading %1…").arg(QFileInfo(m_path).fileName()));
    m_debounce.start();
}

void TorchScriptSummary::inspect()
{
    if (m_process) {   // an older path: its answer is no longer wanted
        m_process->disconnect(this);
        m_process->kill();
        m_process->deleteLater();
        m_process = nullptr;
    }
    const QString cli = CliProcess::cliPath();
    if (cli.isEmpty()) {
        setText(tr("hearth-cli is not found: the file is read when a run starts."));
        return;
    }
    auto* process = new QProcess(this);
    m_process = process;
    const QString path = m_path;
    connect(process, &QProcess::finished, this, [this, process, path](int code, QProcess::ExitStatus status) {
        if (process != m_process)
            return;
        m_process = nullptr;
        process->deleteLater();
        if (path != m_path)
            return;
        const QString out = QString::fromUtf8(process->readAllStandardOutput()).trimmed();
        QString err = QString::fromUtf8(process->readAllStandardError()).trimmed();
        if (err.startsWith(QLatin1String("error: ")))
            err = err.mid(7);
        setText(status == QProcess::NormalExit && code == 0 ? out : err.isEmpty() ? tr("hearth-cli inspect failed") : err);
    });
    process->start(cli, {QStringLiteral("inspect"), path});
}

}  // namespace hearth::ui
