#pragma once
// FinderRunner: runs one batch-size or learning-rate finder (engine/run/Finders.h) as a child
// `hearth-cli tune … --events` (CliProcess), so an out-of-memory probe or a crash costs the
// finder, never the window, and a config for several devices is tuned on all of them (the child
// launches the ranks, as `hearth-cli tune` does). Its progress, trials and result come back as JSON
// lines (engine/run/FinderJson.h).

#include "engine/config/ExperimentConfig.h"
#include "engine/run/Finders.h"

#include <QObject>
#include <QString>
#include <QStringList>
#include <QTemporaryFile>

#include <optional>
#include <vector>

namespace hearth::ui {

class CliProcess;

class FinderRunner final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(FinderRunner)

public:
    explicit FinderRunner(QObject* parent = nullptr);
    ~FinderRunner() override;   // stops a running finder (SIGTERM) and waits for its process

    // Return false (and do nothing) while a finder is running. A child that cannot start ends at
    // once: finished() with errorMessage() set. The options' callbacks are not used (the child
    // reports through its lines).
    bool startBatchSize(const hearth::ExperimentConfig& config, const hearth::BatchSizeFinderOptions& options);
    bool startLearningRate(const hearth::ExperimentConfig& config, const hearth::LrFinderOptions& options);
    void requestStop();
    bool isRunning() const { return m_running; }
    qint64 processId() const;   // the finder's child process while it runs, else 0

    // What the last finder produced; valid after finished().
    const std::optional<hearth::BatchSizeResult>& batchSizeResult() const { return m_batch; }
    const std::optional<hearth::LrFinderResult>& lrResult() const { return m_lr; }
    // The batch-size trials so far (grows while it runs).
    const std::vector<hearth::BatchSizeTrial>& trials() const { return m_trials; }
    // The learning-rate sweep's points so far (grows while it runs, one per optimizer step).
    const std::vector<hearth::LrPoint>& lrPoints() const { return m_lrPoints; }
    QString errorMessage() const { return m_error; }

Q_SIGNALS:
    void progress(double fraction, const QString& what);
    void trialsChanged();
    void lrPointsChanged();
    void finished();  // results or errorMessage() are set

private:
    bool startTune(const hearth::ExperimentConfig& config, const QStringList& arguments);
    void onLine(const QByteArray& line);
    void onFinished(int exitCode, bool crashed);

    CliProcess* m_process;
    QTemporaryFile m_config;
    bool m_running = false;
    std::optional<hearth::BatchSizeResult> m_batch;
    std::optional<hearth::LrFinderResult> m_lr;
    std::vector<hearth::BatchSizeTrial> m_trials;
    std::vector<hearth::LrPoint> m_lrPoints;
    QString m_error;
};

}  // namespace hearth::ui
