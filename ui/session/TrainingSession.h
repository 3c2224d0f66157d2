#pragma once
// TrainingSession: the GUI-thread owner of one training run at a time. It records the run in
// the store (RunWriter jobs + RunRecorder), runs it on the engine thread (RunController) and
// hands the live events to the views in batches drained by a ~40 ms timer. It never waits on
// the database: the run row is created and the run's end committed by jobs on the writer thread.
// A run on several devices (a distributed strategy with trainer.devices > 1) runs in processes
// instead (ProcessRun: hearth-cli's launcher, whose rank 0 records the run); its events reach
// the views the same way.

#include "engine/config/ExperimentConfig.h"
#include "engine/run/RunController.h"
#include "ui/session/MetaTypes.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <atomic>
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
    // Opens the process's RunWriter for `dbPath` (sharedRunWriter). Throws hearth::StoreError
    // when the store cannot be opened.
    explicit TrainingSession(QString dbPath, QObject* parent = nullptr);
    ~TrainingSession() override;   // stops a running run and waits for the engine thread

    // Asks the writer thread for the run row (in `sweepId`'s group when given) and returns at
    // once; training starts when the row exists (runStarted), or startFailed says why not.
    // False with `error` set when nothing was asked (a run is already in progress).
    bool start(const hearth::ExperimentConfig& config, QString* error = nullptr,
               std::optional<int64_t> sweepId = std::nullopt);
    // Continues a stopped, interrupted or failed run from its newest training state, through
    // hearth-cli resume (ProcessRun); runStarted names it once it was reopened. False with `error`
    // set when nothing was started.
    bool resume(qint64 runId, const QString& name, QString* error = nullptr);
    // Stops the run after its current step; a run still being created stops at its first.
    void stop();
    // Whether `config` trains in several processes on this machine (and so through hearth-cli).
    static bool runsInProcesses(const hearth::ExperimentConfig& config);
    // From start() until runEnded or startFailed.
    bool isRunning() const { return m_state != State::Idle; }
    qint64 currentRunId() const { return m_runId; }   // 0 until runStarted
    const QString& dbPath() const { return m_dbPath; }
    const std::shared_ptr<hearth::RunWriter>& writer() const { return m_writer; }
    // How often the queue drains; the bench and tests may shorten it.
    void setDrainInterval(int ms) { m_drainTimer.setInterval(ms); }

Q_SIGNALS:
    void runStarted(qint64 runId, const QString& name);
    // The run could not be created (e.g. the store cannot be written); nothing runs.
    void startFailed(const QString& message);
    void eventsReady(const hearth::ui::EventBatch& batch);
    // After the engine thread has joined and the store has committed every event of the run.
    void runEnded(qint64 runId, hearth::RunStatus status, const QString& message);
    void runningChanged(bool running);

private:
    enum class State { Idle, Creating, Running, Committing };

    void onRunCreated(int64_t runId, const std::string& artifactsDir, const hearth::ExperimentConfig& config);
    void failStart(const QString& message);
    void drain();
    void finishRun();
    void endRun(qint64 runId, const hearth::RunOutcome& outcome);
    bool startProcesses(const hearth::ExperimentConfig& config, QString* error, std::optional<int64_t> sweepId);
    // Starts m_processes through `launch` (ProcessRun::start or resume).
    bool startProcessRun(const QString& name, const std::function<bool(ProcessRun&)>& launch);
    void onProcessesEnded(qint64 runId, const hearth::RunOutcome& outcome);

    QString m_dbPath;
    std::shared_ptr<hearth::RunWriter> m_writer;
    std::shared_ptr<UiEventSink> m_sink;
    hearth::RunController m_controller;
    std::unique_ptr<ProcessRun> m_processes;   // the current run when it runs in processes
    QTimer m_drainTimer;
    qint64 m_runId = 0;
    State m_state = State::Idle;
    bool m_stopRequested = false;
    // Set when this session goes away while its run row is being created: the job then
    // creates none.
    std::shared_ptr<std::atomic<bool>> m_abandoned;
};

}  // namespace hearth::ui
