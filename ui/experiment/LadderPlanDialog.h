#pragma once
// LadderPlanDialog: the technique ladder's planner (Run → Technique Ladder…). Every rung Hearth
// knows for this experiment on this machine (hearth::ladderRungs): the ones that apply checked by
// default, the ones that trade speed for memory offered unchecked, the others greyed out with
// their reason; stacked or each alone against the baseline; repeats; the accumulation target and
// the loader workers; the steps it will run and an estimate of the time, from the newest
// completed run of this experiment in the store (read on a StoreLoader thread). plan() is what
// Start hands to LadderRunner, and what the sweep stores.

#include "engine/config/ExperimentConfig.h"
#include "engine/ladder/LadderPlan.h"

#include <QDialog>

#include <optional>
#include <utility>

class QComboBox;
class QLabel;
class QListWidget;
class QPushButton;
class QRadioButton;
class QDoubleSpinBox;
class QSpinBox;

namespace hearth::ui {

class StoreLoader;

class LadderPlanDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(LadderPlanDialog)

public:
    // `dbPath`: the store the estimate is read from (empty: no estimate).
    LadderPlanDialog(hearth::ExperimentConfig base, hearth::DeviceCapabilities caps, const QString& dbPath,
                     QWidget* parent = nullptr);

    hearth::LadderPlan plan() const;
    // What the summary line says now ("3 steps x 3 repeats = 9 runs; ..."), and the steps' labels.
    QString summaryText() const;
    QStringList stepLabels() const { return m_stepLabels; }
    QListWidget* rungList() const { return m_rungs; }   // for tests: one item per rung, data = its id

private:
    void fillRungs();    // the rung list for the current target batch and workers, checks kept by id
    void refresh();      // the steps, the run count, the estimate, Start enabled

    hearth::ExperimentConfig m_base;
    hearth::DeviceCapabilities m_caps;
    QListWidget* m_rungs = nullptr;
    QRadioButton* m_stacked = nullptr;
    QRadioButton* m_alone = nullptr;
    QSpinBox* m_repeats = nullptr;
    QSpinBox* m_targetBatch = nullptr;
    QSpinBox* m_workers = nullptr;
    QComboBox* m_measure = nullptr;
    QSpinBox* m_capEpochs = nullptr;
    QDoubleSpinBox* m_deviceMemory = nullptr;   // 0: the device's memory
    QLabel* m_steps = nullptr;
    QLabel* m_summary = nullptr;
    QPushButton* m_start = nullptr;
    QStringList m_stepLabels;
    StoreLoader* m_loader = nullptr;
    std::optional<std::pair<int64_t, double>> m_lastRun;   // the newest completed run: id, seconds
};

}  // namespace hearth::ui
