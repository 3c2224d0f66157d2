#pragma once
// LadderRunner: runs the technique ladder (engine/run/TechniqueLadder.h) from the workbench —
// one run per step through the TrainingSession, grouped as one sweep in the store — and reports
// the run ids when the last step ends, for the Compare view's speed-study chart.

#include "engine/config/ExperimentConfig.h"
#include "engine/run/TechniqueLadder.h"

#include <QList>
#include <QObject>

#include <optional>
#include <vector>

namespace hearth::ui {

class TrainingSession;

class LadderRunner final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(LadderRunner)

public:
    explicit LadderRunner(TrainingSession* session, QObject* parent = nullptr);

    // Builds the steps for `base` on this machine, creates the sweep and starts the first step.
    // False with `error` set when nothing started (e.g. a run is in progress, bad target batch).
    bool start(const hearth::ExperimentConfig& base, std::optional<int64_t> targetBatch, QString* error = nullptr);
    void stop();                          // stops the current step; later steps do not start
    bool isRunning() const { return m_next > 0 && m_next <= static_cast<int>(m_steps.size()) && !m_done; }
    const std::vector<hearth::LadderStep>& steps() const { return m_steps; }
    const QList<qint64>& runIds() const { return m_runIds; }  // the steps' runs so far

Q_SIGNALS:
    void stepStarted(int index, int count, const QString& label);
    // After the last step, or after a step that did not complete (complete == false).
    void finished(const QList<qint64>& runIds, bool complete);

private:
    void onRunEnded(qint64 runId, int status);
    bool startStep(QString* error);

    TrainingSession* m_session;
    std::vector<hearth::LadderStep> m_steps;
    QList<qint64> m_runIds;
    std::optional<int64_t> m_sweepId;
    int m_next = 0;
    bool m_done = true;
    bool m_stopRequested = false;
};

}  // namespace hearth::ui
