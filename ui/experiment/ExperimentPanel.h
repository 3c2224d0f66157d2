#pragma once
// ExperimentPanel: the "Set up" side of the workbench: the experiment form, its file actions
// (open/save JSON, recent files, last config restored at start), live validation with the CLI's
// messages, and the Start / Stop buttons.

#include "engine/config/ExperimentConfig.h"
#include "ui/experiment/InputCheck.h"
#include "ui/session/MetaTypes.h"   // ExperimentConfig travels in a signal

#include <QStringList>
#include <QWidget>

class QLabel;
class QMenu;
class QPushButton;

namespace hearth::ui {

class ExperimentForm;

class ExperimentPanel final : public QWidget {
    Q_OBJECT

public:
    explicit ExperimentPanel(QWidget* parent = nullptr);

    void setConfig(const hearth::ExperimentConfig& config);
    hearth::ExperimentConfig config() const;
    bool isValid() const { return m_valid; }
    // All problems currently shown: "key: message" lines (parse errors and hearth::validate).
    QStringList issues() const { return m_issueLines; }
    ExperimentForm* form() const { return m_form; }
    QPushButton* startButton() const { return m_start; }
    QPushButton* stopButton() const { return m_stop; }
    QPushButton* ladderButton() const { return m_ladder; }
    QMenu* recentMenu() const { return m_recentMenu; }
    QString currentFile() const { return m_file; }

    bool openFile(const QString& path, QString* error = nullptr);
    bool saveFile(const QString& path, QString* error = nullptr);
    void setDataSource(const QString& path);
    void setRunning(bool running);

    // QSettings: the last config (as JSON) and the recent files.
    bool restoreLastConfig();
    void rememberConfig() const;

Q_SIGNALS:
    void startRequested(const hearth::ExperimentConfig& config);
    // The technique ladder (speed study) of the current experiment.
    void ladderRequested(const hearth::ExperimentConfig& config);
    void stopRequested();
    void validityChanged(bool valid);
    void fileChanged(const QString& path);

public Q_SLOTS:
    void openInteractively();
    void saveInteractively();
    void saveAsInteractively();
    void requestStart();

private:
    void revalidate();
    void addRecent(const QString& path);
    void setCurrentFile(const QString& path);   // remembers it as the open file and a recent one
    void rebuildRecentMenu();

    ExperimentForm* m_form;
    QLabel* m_summary;
    QPushButton* m_start;
    QPushButton* m_stop;
    QPushButton* m_ladder;
    QMenu* m_recentMenu;
    hearth::DeviceCapabilities m_caps;
    InputCheck m_inputCheck;   // the paths, off the GUI thread
    QStringList m_issueLines;
    QString m_file;
    bool m_valid = true;
    bool m_running = false;
};

}  // namespace hearth::ui
