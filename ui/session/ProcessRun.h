#pragma once
// ProcessRun: one run of the workbench as a child `hearth-cli run|resume … --events` (CliProcess).
// The child carries out its own launch plan (one process, or one per device through hearth-cli's
// launcher, whose rank 0 records the run in the same store); the run's id and every event come
// back as JSON lines and are handed to `sink`. Stop sends SIGTERM: every rank stops after its
// current step.

#include "engine/config/ExperimentConfig.h"
#include "engine/events/Events.h"
#include "engine/run/RunController.h"

#include <QObject>
#include <QString>
#include <QTemporaryFile>

#include <memory>
#include <optional>

namespace hearth::ui {

class CliProcess;

class ProcessRun final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ProcessRun)

public:
    ProcessRun(QString dbPath, std::shared_ptr<hearth::EventSink> sink, QObject* parent = nullptr);
    ~ProcessRun() override;   // stops a running run (SIGTERM, then SIGKILL after 30 s)

    // Starts `hearth-cli run --config … --events [--sweep ID]`; false with `error` set when
    // hearth-cli is missing or cannot start.
    bool start(const hearth::ExperimentConfig& config, std::optional<int64_t> sweepId, QString* error);
    // `hearth-cli resume RUN --events`: continues a stopped, interrupted or failed run from its
    // newest training state; its events come back as a run's do (runCreated names that run).
    bool resume(qint64 runId, QString* error);
    void stop();
    bool isRunning() const;
    qint64 processId() const;   // the child's, while it runs

Q_SIGNALS:
    // The child named its run (it created or reopened the run's row).
    void runCreated(qint64 runId);
    // The child has exited. `outcome` is what its events and exit status said: the run's last
    // RunFinished/RunFailed, or, when it died without one (or exited badly after one), a failure
    // quoting its last output. runId is 0 when the run never got its row (a refused config, say).
    void finished(qint64 runId, const hearth::RunOutcome& outcome);

private:
    void onLine(const QByteArray& line);
    void onFinished(int exitCode, bool crashed);

    QString m_dbPath;
    std::shared_ptr<hearth::EventSink> m_sink;
    CliProcess* m_process;
    QTemporaryFile m_config;
    qint64 m_runId = 0;
    std::optional<hearth::RunOutcome> m_outcome;
};

}  // namespace hearth::ui
