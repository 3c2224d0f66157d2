#pragma once
// LadderRunner: runs the technique ladder or the memory ladder (engine/ladder/TechniqueLadder.h) from
// the workbench — one run per step and repeat through the TrainingSession, the steps alternating
// round by round (each round its own seed), grouped as one sweep in the store with its plan and
// each run's step and repeat — and reports the run ids when the last run ends, for the Compare
// view. The sweep, each run and its place in the sweep are created by writer jobs: nothing here
// waits on the database. Each speed step's fit time and epochs come from its events; in the first
// round a rung that trained slower than the step it built on is left out of the steps after it
// (hearth::settleLadderStep), as in the CLI. Before a step's first run its footprint is predicted
// by a child `hearth-cli tune --footprint --json` (a short probe at a quarter and half its batch):
// a step predicted not to fit is not run (the plan keeps why), as `hearth-cli sweep` does.

#include "engine/config/ExperimentConfig.h"
#include "engine/ladder/LadderPlan.h"
#include "engine/ladder/TechniqueLadder.h"

#include <QByteArray>
#include <QList>
#include <QObject>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QTemporaryFile;

namespace hearth::ui {

class CliProcess;
class TrainingSession;

class LadderRunner final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(LadderRunner)

public:
    explicit LadderRunner(TrainingSession* session, QObject* parent = nullptr);
    ~LadderRunner() override;

    // Builds the steps for `base` on this machine, then asks for the sweep and starts the first
    // step once it exists. False with `error` set when nothing started (e.g. a run is in
    // progress, bad target batch); later problems come as failed() and finished(.., false).
    bool start(const hearth::ExperimentConfig& base, std::optional<int64_t> targetBatch, QString* error = nullptr);
    // Any ladder (the memory ladder: options.kind = LadderKind::Memory), one run per step.
    bool start(const hearth::ExperimentConfig& base, const hearth::LadderOptions& options, QString* error = nullptr);
    // The speed ladder as planned (LadderPlanDialog): its rungs, stacked or alone, `plan.repeats` rounds.
    bool start(const hearth::ExperimentConfig& base, const hearth::LadderPlan& plan, QString* error = nullptr);
    void stop();                          // stops the current step; later steps do not start
    bool isRunning() const { return !m_done; }
    const std::vector<hearth::LadderStep>& steps() const { return m_steps; }
    const QList<qint64>& runIds() const { return m_runIds; }  // the steps' runs so far
    const std::vector<hearth::LadderMeasure>& measures() const { return m_measures; }  // the completed steps'

Q_SIGNALS:
    // From start() until finished: the window keeps Start disabled in between, also while the
    // sweep is being created and between two steps.
    void runningChanged(bool running);
    void stepStarted(int index, int count, const QString& label);
    // With repeats: the round the step just started belongs to (1-based) of `rounds`.
    void roundStarted(int round, int rounds);
    // The sweep or a step's run could not be created; finished(.., false) follows.
    void failed(const QString& message);
    // After the last step, or after a step that did not complete (complete == false).
    void finished(const QList<qint64>& runIds, bool complete);
    // A speed rung trained slower than `reference` ("steady 1.02x, whole fit 0.43x"): the next
    // steps leave it out.
    void stepLeftOut(int index, const QString& label, const QString& reference, const QString& speedups);
    // The footprint probe of a step is running (before its first run).
    void stepProbing(int index, int count, const QString& label);
    // Its prediction: "peak 331.7 MiB (activations 48.3 MiB), step 61.8 ms"; or, when the probe
    // failed for another reason than memory, why there is none (`predicted` false; the step runs).
    void stepPredicted(int index, const QString& label, const QString& text, bool predicted);
    // Predicted not to fit (or its probe ran out of memory): the step is not run.
    void stepNotRun(int index, const QString& label, const QString& reason);

private:
    bool canBegin(QString* error) const;
    // Builds the steps (a ConfigError becomes `error`), then asks for the sweep and starts.
    bool begin(const hearth::ExperimentConfig& base, const hearth::LadderPlan& plan, bool memory, QString* error,
               const std::function<std::vector<hearth::LadderStep>()>& build);
    void storePlan();   // the plan as it now stands (left-out rungs, the accuracy target), by a writer job
    void startStep();   // the step at m_next, probed first in the first round; skips steps not run
    void runStep();
    void startStepLater();   // startStep from the event loop (not inside the signal that ended a step)
    void probeStep();
    void onProbeEnded(int exitCode, bool crashed);
    void onStepRunStarted(qint64 runId);
    void onRunEnded(qint64 runId, int status);
    void onEvents(const std::vector<hearth::Event>& batch);
    void settleStep();
    void fail(const QString& message);
    void end(bool complete);

    TrainingSession* m_session;
    std::vector<hearth::LadderStep> m_steps;
    QList<qint64> m_runIds;
    std::vector<hearth::LadderMeasure> m_measures;        // the finished steps'
    std::vector<hearth::EpochMetrics> m_epochs;           // the current step's, as its events came
    double m_fitSeconds = 0.0;                            // the current step's, from its RunFinished
    double m_bestValAccuracy = 0.0;                       // the current step's, from its RunFinished
    bool m_speed = true;
    hearth::LadderPlan m_plan;                            // repeats 1 for the memory ladder
    std::optional<int64_t> m_sweepId;
    int m_next = 0;                                       // the next step of the current round
    int m_round = 0;
    bool m_done = true;
    bool m_waitingForRun = false;         // a step was asked of the session; its run not started yet
    bool m_stopRequested = false;
    CliProcess* m_probe = nullptr;                        // the current footprint probe, once one ran
    std::unique_ptr<QTemporaryFile> m_probeConfig;        // its step's config
    QByteArray m_probeJson;                               // its prediction line
    int m_probed = -1;                                    // the step last probed (a failed probe is not retried)
};

}  // namespace hearth::ui
