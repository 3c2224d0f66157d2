#pragma once
// MainWindow: the workbench — experiment panel in a left dock; Live, Report, History and
// Compare tabs in the centre; menus and a status bar. It assembles the views, hands them to the
// WorkbenchController (which decides what happens when) and keeps the window's geometry and
// layout between starts.

#include "ui/WorkbenchController.h"

#include <QMainWindow>
#include <QStringList>

class QAction;
class QDockWidget;
class QLabel;
class QTabWidget;

namespace hearth::ui {

class CompareView;
class ExperimentPanel;
class HistoryView;
class LadderRunner;
class LiveView;
class ReportView;
class TrainingSession;

struct MainWindowOptions {
    QString dbPath;                 // the run store (RunStore::defaultPath() unless --db)
    QString configPath;             // preload this experiment (--config)
    QStringList overrides;          // then these key=value overrides (--set), checked by the caller
};

class MainWindow final : public QMainWindow {
    Q_OBJECT

public:
    using Tab = WorkbenchTab;

    // Throws hearth::StoreError when the database cannot be opened (by the session's writer).
    explicit MainWindow(const MainWindowOptions& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    ExperimentPanel* experimentPanel() const { return m_panel; }
    LiveView* liveView() const { return m_live; }
    ReportView* reportView() const { return m_report; }
    HistoryView* historyView() const { return m_history; }
    CompareView* compareView() const { return m_compare; }
    TrainingSession* session() const { return m_session; }
    LadderRunner* ladderRunner() const { return m_ladder; }
    WorkbenchController* controller() const { return m_controller; }
    QAction* startAction() const { return m_startAction; }
    QAction* stopAction() const { return m_stopAction; }
    void showTab(Tab tab);
    Tab currentTab() const;

public Q_SLOTS:
    bool startRun();
    // Asks for an optional target batch, then runs the technique ladder of the current experiment.
    bool startLadder();
    void stopRun();
    void openReport(qint64 runId);
    void compareRuns(const QList<qint64>& runIds);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildActions();
    void buildMenus();
    void buildStatusBar();
    // The experiment the window opens with: --config, else the last one, else the default; then --set.
    void loadInitialConfig(const QString& configPath, const QStringList& overrides);
    void restoreLayout();
    void saveLayout() const;

    QString m_dbPath;
    TrainingSession* m_session;
    LadderRunner* m_ladder = nullptr;
    WorkbenchController* m_controller = nullptr;
    ExperimentPanel* m_panel;
    QTabWidget* m_tabs;
    LiveView* m_live;
    ReportView* m_report;
    HistoryView* m_history;
    CompareView* m_compare;
    QDockWidget* m_dock;
    QLabel* m_runStatus;
    QLabel* m_deviceStatus;
    QAction* m_startAction = nullptr;
    QAction* m_stopAction = nullptr;
};

}  // namespace hearth::ui
