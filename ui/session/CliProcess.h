#pragma once
// CliProcess: one job of the workbench as a child `hearth-cli` (a run, a resume, a ladder step or
// a finder with `--events`; a prediction): the GUI process never runs a training op, so a LibTorch abort, a CUDA
// device-side assert or an NCCL hang costs that job, never the window, and LibTorch's
// process-wide state lives and dies with the job. Its standard output comes back line by line,
// its standard error's last lines say why when it fails. The child ends with the window
// (HEARTH_PARENT_PID: hearth-cli asks the kernel for SIGTERM when its parent dies).

#include <QByteArray>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace hearth::ui {

class CliProcess final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CliProcess)

public:
    explicit CliProcess(QObject* parent = nullptr);
    // Stops a running job (SIGTERM: it stops after its current step), waiting up to `graceMs`
    // before it is killed, so that no process outlives the window.
    ~CliProcess() override;

    // The hearth-cli the jobs run: $HEARTH_CLI, else next to this executable (installed), else
    // ../cli/ (the build tree), else on PATH. Empty when there is none.
    static QString cliPath();

    // Starts `hearth-cli <arguments>`; false with `error` set when hearth-cli is missing or does not
    // start (`what` names the job in that message: "A run").
    bool start(const QStringList& arguments, const QString& what, QString* error);
    void stop();   // SIGTERM: the job stops after its current step
    bool isRunning() const { return m_process.state() != QProcess::NotRunning; }
    qint64 processId() const { return m_process.processId(); }
    // Its last lines of standard error (20 at most), e.g. the notes of a job that succeeded.
    QStringList errorLines() const { return m_errors; }
    // Why it ended badly: its last lines of standard error, or its exit status.
    QString failureText(int exitCode, bool crashed) const;
    static constexpr int kGraceMs = 30000;

Q_SIGNALS:
    void lineRead(const QByteArray& line);   // one line of standard output, without the newline
    void finished(int exitCode, bool crashed);   // after the last lineRead

private:
    void readLines();

    QProcess m_process;
    QByteArray m_pending;   // stdout after the last complete line
    QStringList m_errors;   // the last lines of stderr
};

}  // namespace hearth::ui
