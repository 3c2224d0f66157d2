#pragma once
// FinderRunner: runs one batch-size or learning-rate finder (engine/run/Finders.h) on its own
// thread. The finder's callbacks only update a small shared state under a lock; the GUI thread
// reads it on a 40 ms timer and emits progress and the end, so the window never waits on training.

#include "engine/run/Finders.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

class QThread;

namespace hearth::ui {

class FinderRunner final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(FinderRunner)

public:
    explicit FinderRunner(QObject* parent = nullptr);
    ~FinderRunner() override;  // asks the finder to stop and waits for its thread

    // Return false (and do nothing) while a finder is running. The options' callbacks are replaced.
    bool startBatchSize(const hearth::ExperimentConfig& config, hearth::BatchSizeFinderOptions options);
    bool startLearningRate(const hearth::ExperimentConfig& config, hearth::LrFinderOptions options);
    void requestStop();
    bool isRunning() const { return m_thread != nullptr; }

    // What the last finder produced; valid after finished().
    const std::optional<hearth::BatchSizeResult>& batchSizeResult() const { return m_batch; }
    const std::optional<hearth::LrFinderResult>& lrResult() const { return m_lr; }
    // The batch-size trials so far (grows while it runs).
    const std::vector<hearth::BatchSizeTrial>& trials() const { return m_trials; }
    QString errorMessage() const { return m_error; }

Q_SIGNALS:
    void progress(double fraction, const QString& what);
    void trialsChanged();
    void finished();  // results or errorMessage() are set

private:
    struct Shared;
    bool startThread(std::function<void(Shared&)> body);
    static std::function<void(double, const std::string&)> progressInto(Shared& shared);
    void poll();

    std::shared_ptr<Shared> m_shared;
    QThread* m_thread = nullptr;
    QTimer m_poll;
    std::optional<hearth::BatchSizeResult> m_batch;
    std::optional<hearth::LrFinderResult> m_lr;
    std::vector<hearth::BatchSizeTrial> m_trials;
    QString m_error;
};

}  // namespace hearth::ui
