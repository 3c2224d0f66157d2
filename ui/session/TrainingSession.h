#pragma once
// TrainingSession: the GUI-thread owner of one training run at a time. It records the run in
// the store (RunWriter + RunRecorder), runs it on the engine thread (RunController) and hands
// the live events to the views in batches drained by a ~40 ms timer.

#include "engine/config/ExperimentConfig.h"
#include "engine/run/RunController.h"
#include "ui/session/MetaTypes.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>
#include <optional>

namespace hearth {
class RunWriter;
}

namespace hearth::ui {

class UiEventSink;

// The process's one RunWriter for `dbPath` (created on first use, shared while anyone holds it).
std::shared_ptr<hearth::RunWriter> sharedRunWriter(const QString& dbPath);

class TrainingSession final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TrainingSession)

public:
    explicit TrainingSession(QString dbPath, QObject* parent = nullptr);
    ~TrainingSession() override;   // stops a running run and waits for it

    // Creates the run row (in `sweepId`'s group when given) and starts training. False with
    // `error` set when nothing started.
    bool start(const hearth::ExperimentConfig& config, QString* error = nullptr,
               std::optional<int64_t> sweepId = std::nullopt);
    void stop();
    bool isRunning() const { return m_active; }
    qint64 currentRunId() const { return m_runId; }
    const QString& dbPath() const { return m_dbPath; }
    // How often the queue drains; the bench and tests may shorten it.
    void setDrainInterval(int ms) { m_drainTimer.setInterval(ms); }

Q_SIGNALS:
    void runStarted(qint64 runId, const QString& name);
    void eventsReady(const hearth::ui::EventBatch& batch);
    // After the engine thread has joined and the store has committed every event of the run.
    void runEnded(qint64 runId, hearth::RunStatus status, const QString& message);
    void runningChanged(bool running);

private:
    void drain();
    void finishRun();

    QString m_dbPath;
    std::shared_ptr<hearth::RunWriter> m_writer;
    std::shared_ptr<UiEventSink> m_sink;
    hearth::RunController m_controller;
    QTimer m_drainTimer;
    qint64 m_runId = 0;
    bool m_active = false;
};

}  // namespace hearth::ui
