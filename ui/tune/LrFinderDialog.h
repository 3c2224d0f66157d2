#pragma once
// LrFinderDialog: "Run → Find Learning Rate…": the LR sweep's settings, its loss-vs-LR curve (log
// x axis) with the suggested rate marked, and Apply, which sets optimizer.lr in the form.

#include "ui/tune/FinderDialog.h"

#include "engine/run/Finders.h"

#include <optional>
#include <vector>

class QCustomPlot;
class QLineEdit;
class QSpinBox;

namespace hearth::ui {

class LrFinderDialog final : public FinderDialog {
    Q_OBJECT

public:
    explicit LrFinderDialog(const hearth::ExperimentConfig& config, QWidget* parent = nullptr);

    QLineEdit* minLrField() const { return m_minLr; }
    QLineEdit* maxLrField() const { return m_maxLr; }
    QSpinBox* stepsField() const { return m_steps; }
    QCustomPlot* plot() const { return m_plot; }
    std::optional<double> suggestion() const { return m_suggestion; }
    // Shows a result as if the finder had produced it (the curve, the mark, Apply's value).
    bool showLrResult(const hearth::LrFinderResult& result);
    // The sweep's points so far, drawn while it runs over the range the fields give.
    void showLrPoints(const std::vector<hearth::LrPoint>& points);

Q_SIGNALS:
    void learningRateApplied(double lr);

protected:
    QString startFinder() override;
    bool showResult() override;
    void applyResult() override;

private:
    // The x axis spans the sweep the fields describe (false: they describe none).
    bool showSweepRange();

    QLineEdit* m_minLr;
    QLineEdit* m_maxLr;
    QSpinBox* m_steps;
    QCustomPlot* m_plot;
    std::optional<double> m_suggestion;
};

}  // namespace hearth::ui
