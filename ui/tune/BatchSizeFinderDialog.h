#pragma once
// BatchSizeFinderDialog: "Run → Find Batch Size…": the search's settings (the memory a trial may
// use: required on CPU, where peak RSS stands in for GPU memory; where the bisection ends), every
// trial as it ends, the largest batch that fits, and Apply, which sets trainer.batch_size in the form.

#include "ui/tune/FinderDialog.h"

#include <cstdint>

class QLineEdit;
class QSpinBox;
class QTableWidget;

namespace hearth::ui {

class BatchSizeFinderDialog final : public FinderDialog {
    Q_OBJECT

public:
    // cuda: the experiment trains on a GPU (the memory limit is then optional).
    BatchSizeFinderDialog(const hearth::ExperimentConfig& config, bool cuda, QWidget* parent = nullptr);

    QLineEdit* memoryLimitField() const { return m_limit; }
    QSpinBox* maxBatchField() const { return m_maxBatch; }
    QSpinBox* stepsField() const { return m_steps; }
    QSpinBox* multipleField() const { return m_multiple; }
    QSpinBox* toleranceField() const { return m_tolerance; }
    QTableWidget* trialsTable() const { return m_table; }
    int64_t found() const { return m_found; }

Q_SIGNALS:
    void batchSizeApplied(qint64 batchSize);

protected:
    QString startFinder() override;
    bool showResult() override;
    void applyResult() override;

private:
    void showTrials();

    bool m_cuda;
    QLineEdit* m_limit;
    QSpinBox* m_maxBatch;
    QSpinBox* m_steps;
    QSpinBox* m_multiple;
    QSpinBox* m_tolerance;   // percent
    QTableWidget* m_table;
    int64_t m_found = 0;
};

}  // namespace hearth::ui
