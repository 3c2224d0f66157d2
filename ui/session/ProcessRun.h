#pragma once
// ProcessRun: a run of several processes (trainer.devices > 1 with a distributed strategy), which
// the workbench cannot train on its own engine thread, or a resumed run (hearth-cli resume). It starts `hearth-cli run --events`, which
// launches one process per device and whose rank 0 records the run in the same store; the run's
// id and every event come back as JSON lines on its standard output and are handed to `sink`
// exactly as an in-process run's events are. Stop sends SIGTERM: the launcher forwards it and
// every rank stops after its current step.

#include "engine/config/ExperimentConfig.h"
#include "engine/events/Events.h"
#include "engine/run/RunController.h"

#include <QByteArray>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryFile>

#include <memory>
#include <optional>

namespace hearth::ui {

class ProcessRun final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ProcessRun)

public:
    ProcessRun(QString dbPath, std::shared_ptr<hearth::EventSink> sink, QObject* parent = nullptr);
    ~ProcessRun() override;   // stops a running run (SIGTERM, then SIGKILL after 30 s)

    // The hearth-cli that launches the processes: $HEARTH_CLI, else next to this executable
    // (installed), else ../cli/ (the build tree), else on PATH. Empty when there is none.
    static QString cliPath();

    // Starts the processes; false with `error` set when hearth-cli is missing or cannot start.
    bool start(const hearth::ExperimentConfig& config, std::optional<int64_t> sweepId, QString* error);
    // `hearth-cli resume RUN --events`: continues a stopped, interrupted or failed run from its
    // newest training state; its events come back as a run's do (runCreated names that run).
    bool resume(qint64 runId, QString* error);
    void stop();
    bool isRunning() const { return m_process.state() != QProcess::NotRunning; }

Q_SIGNALS:
    // Rank 0 created the run's row.
    void runCreated(qint64 runId);
    // Every process has exited; the outcome is the run's last RunFinished/RunFailed, or, when
    // the processes died without one, a failure quoting their last output. runId is 0 when the
    // run never got its row (a refused config, say).
    void finished(qint64 runId, const hearth::RunOutcome& outcome);

private:
    bool launch(const QString& cli, const QStringList& args, QString* error);
    void readLines();
    void onFinished(int exitCode, QProcess::ExitStatus status);

    QString m_dbPath;
    std::shared_ptr<hearth::EventSink> m_sink;
    QProcess m_process;
    QTemporaryFile m_config;
    QByteArray m_pending;            // stdout after the last complete line
    QStringList m_errors;            // the last lines of stderr
    qint64 m_runId = 0;
    std::optional<hearth::RunOutcome> m_outcome;
};

}  // namespace hearth::ui
