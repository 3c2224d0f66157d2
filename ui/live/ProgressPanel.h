#pragma once
// ProgressPanel: where the run stands — a progress bar over the whole fit plus epoch, the epoch's batch n/N,
// it/s, samples/s, achieved TFLOP/s with MFU, elapsed time and ETA.

#include "engine/events/Events.h"

#include <QWidget>

class QLabel;
class QProgressBar;

namespace hearth::ui {

class ProgressPanel final : public QWidget {
    Q_OBJECT

public:
    explicit ProgressPanel(QWidget* parent = nullptr);

    void begin(qint64 runId, const QString& name);
    void setStarted(const hearth::RunStarted& started);
    void setStep(const hearth::StepMetrics& step);
    void setEpoch(const hearth::EpochMetrics& epoch);
    void setFinished(const hearth::RunFinished& finished);
    void setFailed(const hearth::RunFailed& failed);
    QString stateText() const;
    int percent() const;

private:
    QLabel* m_state;
    QProgressBar* m_bar;
    QLabel* m_epoch;
    QLabel* m_batch;     // micro-batches of this epoch; the global optimizer step in its tool tip
    QLabel* m_itPerSec;
    QLabel* m_samplesPerSec;
    QLabel* m_elapsed;
    QLabel* m_eta;
    QLabel* m_compute;   // achieved TFLOP/s and MFU
    QString m_runLabel;
    int64_t m_maxEpochs = 0;
    int64_t m_batchesPerEpoch = 0;
};

}  // namespace hearth::ui
