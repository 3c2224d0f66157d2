#pragma once
// FinderDialog: what the two finder dialogs share: their settings above a Start/Stop button, a
// progress bar and status line while the finder runs in its own process (FinderRunner), the results
// below, and Apply, which hands the value found to the experiment form.

#include "engine/config/ExperimentConfig.h"

#include <QDialog>

class QFormLayout;
class QLabel;
class QProgressBar;
class QPushButton;
class QVBoxLayout;

namespace hearth::ui {

class FinderRunner;

class FinderDialog : public QDialog {
    Q_OBJECT

public:
    QPushButton* startButton() const { return m_start; }
    QPushButton* applyButton() const { return m_apply; }
    QProgressBar* progressBar() const { return m_progress; }
    QLabel* statusLabel() const { return m_status; }
    FinderRunner* runner() const { return m_runner; }

public Q_SLOTS:
    void start();  // or stop, while running
    // Closing while the finder runs asks it to stop and closes once it has (never waits here).
    void done(int result) override;

protected:
    FinderDialog(const hearth::ExperimentConfig& config, const QString& title, const QString& intro, QWidget* parent);
    QFormLayout* settingsLayout() const { return m_settings; }
    QVBoxLayout* resultsLayout() const { return m_results; }
    // Reads the settings and starts the runner; returns an error message for bad settings.
    virtual QString startFinder() = 0;
    // The runner finished without an error: show its result; return whether there is a value to apply.
    virtual bool showResult() = 0;
    // Apply was clicked (only when showResult() returned true).
    virtual void applyResult() = 0;
    void setStatus(const QString& text, bool error = false);

    const hearth::ExperimentConfig m_config;

private:
    void onFinished();
    void setRunning(bool running);

    FinderRunner* m_runner;
    QFormLayout* m_settings;
    QVBoxLayout* m_results;
    QPushButton* m_start;
    QPushButton* m_apply;
    QProgressBar* m_progress;
    QLabel* m_status;
    bool m_closeWhenStopped = false;
};

}  // namespace hearth::ui
