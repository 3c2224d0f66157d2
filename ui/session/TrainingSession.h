#pragma once
// TrainingSession: the GUI-thread owner of one job at a time: a run or a resumed run, each a child
// `hearth-cli … --events` (ProcessRun), whose events reach the views in batches drained by a
// ~40 ms timer. The window never trains: the child creates or reopens the run's row and records
// it, and when it has exited the run's end is read from the stored row (the writer's or the
// child's message when it failed), never assumed. Nothing here waits on the database.

#include "engine/config/ExperimentConfig.h"
#include "engine/run/RunController.h"
#include "ui/session/MetaTypes.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>

namespace hearth {
class RunWriter;
}

namespace hearth::ui {

class UiEventSink;
class ProcessRun;

class TrainingSession final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TrainingSession)

public:
    // Opens the process's RunWriter for `dbPath` (sharedRunWriter: the ladder's sweep and the
    // reading of a run's end go through it). Throws hearth::StoreError when the store cannot be opened.
    explicit TrainingSession(QString dbPath, QObject* parent = nullptr);
    ~TrainingSession() override;   // stops a running job and waits for its process (30 s at most)

    // Starts `hearth-cli run` for `config` (in `sweepId`'s group when given) and returns at once;
    // runStarted follows once the child has its run row, or startFailed says why there is none.
    // False with `error` set when nothing was started (a job is already running, no hearth-cli).
    bool start(const hearth::ExperimentConfig& config, QString* error = nullptr,
               std::optional<int64_t> sweepId = std::nullopt);
    // Continues a stopped, interrupted or failed run from its newest training state, through
    // hearth-cli resume; runStarted names it once it was reopened. False with `error` set when
    // nothing was started.
    bool resume(qint64 runId, const QString& name, QString* error = nullptr);
    // Stops the job after its current step; a run still being created stops at its first.
    void stop();
    // From start() until runEnded or startFailed.
    bool isRunning() const { return m_state != State::Idle; }
    qint64 currentRunId() const { return m_runId; }   // 0 until runStarted
    qint64 jobProcessId() const;                      // the job's child process while it runs, else 0
    const QString& dbPath() const { return m_dbPath; }
    const std::shared_ptr<hearth::RunWriter>& writer() const { return m_writer; }
    // How often the queue drains; the bench and tests may shorten it.
    void setDrainInterval(int ms) { m_drainTimer.setInterval(ms); }

Q_SIGNALS:
    void runStarted(qint64 runId, const QString& name);
    // The job ended without a run row (a refused config, a store that refuses the run); nothing ran.
    void startFailed(const QString& message);
    void eventsReady(const hearth::ui::EventBatch& batch);
    // After the job's process has exited, with the status its stored row holds.
    void runEnded(qint64 runId, hearth::RunStatus status, const QString& message);
    void runningChanged(bool running);

private:
    enum class State { Idle, Starting, Running, Ending };

    bool startJob(const QString& name, const std::function<bool(ProcessRun&)>& launch, QString* error);
    void drain();
    void onJobEnded(qint64 runId, const hearth::RunOutcome& outcome);
    void endRun(qint64 runId, const hearth::RunOutcome& outcome);
    void failStart(const QString& message);

    QString m_dbPath;
    std::shared_ptr<hearth::RunWriter> m_writer;
    std::shared_ptr<UiEventSink> m_sink;
    std::unique_ptr<ProcessRun> m_job;
    QTimer m_drainTimer;
    qint64 m_runId = 0;
    State m_state = State::Idle;
};

}  // namespace hearth::ui
