#include "ui/MainWindow.h"

#include "engine/config/ExperimentConfig.h"

#include "ui/compare/CompareView.h"
#include "ui/experiment/ExperimentPanel.h"
#include "ui/experiment/LadderPlanDialog.h"
#include "ui/history/HistoryView.h"
#include "ui/live/LiveView.h"
#include "ui/report/ReportView.h"
#include "ui/session/DeviceProbe.h"
#include "ui/session/LadderRunner.h"
#include "ui/session/MetaTypes.h"
#include "ui/session/TrainingSession.h"
#include "ui/tune/BatchSizeFinderDialog.h"
#include "ui/tune/LrFinderDialog.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

namespace hearth::ui {

namespace {
const char* kGeometry = "window/geometry";
const char* kState = "window/state";
const char* kLiveSplit = "window/liveSplitters";
const char* kCompareSplit = "window/compareSplitters";
// "window/historyHeader" held the widths of a table sized before its runs were loaded (as wide as
// the headers): a new key, so that those states give way to columns fitted to the runs.
const char* kHistoryHeader = "window/historyColumns";
const char* kTab = "window/tab";

bool isDataSource(const QFileInfo& info)
{
    return info.isDir() || info.suffix().compare(QLatin1String("csv"), Qt::CaseInsensitive) == 0;
}

// A finder's dialog is window-modal (no run starts meanwhile: both would set the process's seeds
// and threads) but never blocks the event loop: open(), not exec().
void openFinderDialog(QDialog* dialog)
{
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    dialog->open();
}
}  // namespace

MainWindow::MainWindow(const MainWindowOptions& options, QWidget* parent)
    : QMainWindow(parent), m_dbPath(options.dbPath), m_session(new TrainingSession(options.dbPath, this)),
      m_panel(new ExperimentPanel), m_tabs(new QTabWidget), m_live(new LiveView), m_report(new ReportView(m_dbPath)),
      m_history(new HistoryView(m_dbPath)), m_compare(new CompareView(m_dbPath)), m_dock(new QDockWidget(tr("Experiment"), this)),
      m_runStatus(new QLabel), m_deviceStatus(new QLabel)
{
    registerMetaTypes();
    setWindowTitle(QStringLiteral("Hearth"));
    setAcceptDrops(true);
    m_dock->setObjectName(QStringLiteral("experimentDock"));
    m_dock->setWidget(m_panel);
    m_panel->setMinimumWidth(330);   // labels and fields side by side without truncation
    m_dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable
                        | QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::LeftDockWidgetArea, m_dock);
    m_tabs->setObjectName(QStringLiteral("mainTabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_live, tr("Live"));
    m_tabs->addTab(m_report, tr("Report"));
    m_tabs->addTab(m_history, tr("History"));
    m_tabs->addTab(m_compare, tr("Compare"));
    setCentralWidget(m_tabs);

    m_ladder = new LadderRunner(m_session, this);
    m_controller = new WorkbenchController(m_session, m_ladder, {m_panel, m_live, m_report, m_history, m_compare}, this);
    connect(m_controller, &WorkbenchController::tabRequested, this, &MainWindow::showTab);
    buildActions();
    buildMenus();
    buildStatusBar();
    loadInitialConfig(options.configPath, options.overrides);
    restoreLayout();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildActions()
{
    m_startAction = new QAction(tr("&Start"), this);
    m_startAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_startAction->setStatusTip(tr("Train the experiment set up on the left."));
    connect(m_startAction, &QAction::triggered, this, &MainWindow::startRun);
    m_stopAction = new QAction(tr("S&top"), this);
    m_stopAction->setShortcut(QKeySequence(Qt::Key_Escape));
    m_stopAction->setStatusTip(tr("Stop after the current step; the run is kept as 'stopped'."));
    m_stopAction->setEnabled(false);
    connect(m_stopAction, &QAction::triggered, this, &MainWindow::stopRun);
    addAction(m_startAction);
    addAction(m_stopAction);
    m_startAction->setEnabled(m_controller->canStart());
    connect(m_controller, &WorkbenchController::canStartChanged, m_startAction, &QAction::setEnabled);
    connect(m_controller, &WorkbenchController::busyChanged, m_stopAction, &QAction::setEnabled);
    connect(m_panel, &ExperimentPanel::startRequested, this, &MainWindow::startRun);
    connect(m_panel, &ExperimentPanel::stopRequested, this, &MainWindow::stopRun);
    connect(m_panel, &ExperimentPanel::ladderRequested, this, &MainWindow::startLadder);
    connect(m_panel, &ExperimentPanel::fileChanged, this, [this](const QString& path) {
        setWindowFilePath(path);
        statusBar()->showMessage(tr("Experiment %1").arg(QDir::toNativeSeparators(path)), 4000);
    });
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open Experiment…"), QKeySequence::Open, m_panel, &ExperimentPanel::openInteractively);
    file->addMenu(m_panel->recentMenu());
    file->addAction(tr("&Save Experiment"), QKeySequence::Save, m_panel, &ExperimentPanel::saveInteractively);
    file->addAction(tr("Save Experiment &As…"), QKeySequence::SaveAs, m_panel, &ExperimentPanel::saveAsInteractively);
    file->addSeparator();
    file->addAction(tr("&Export Report…"), m_report, &ReportView::exportInteractively);
    file->addAction(tr("Export for &TensorBoard…"), m_report, &ReportView::exportTensorBoardInteractively)
        ->setStatusTip(tr("The shown run's scalars, hyperparameters and report as TensorBoard event files."));
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(m_startAction);
    QAction* ladder = run->addAction(tr("Technique &Ladder…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), this,
                                     &MainWindow::startLadder);
    ladder->setStatusTip(tr("Speed study: plan the rungs and repeats, then baseline, mixed precision, loader workers, … compared."));
    QAction* memoryLadder = run->addAction(tr("&Memory Ladder"), this, [this] { m_controller->startMemoryLadder(); });
    memoryLadder->setObjectName(QStringLiteral("memoryLadderAction"));
    memoryLadder->setStatusTip(tr("Memory study: gradients zeroed, then set to none, in-place ReLU, activation "
                                  "checkpointing; peak memory compared."));
    QAction* findBatch = run->addAction(tr("Find &Batch Size…"), this, [this] {
        const hearth::ExperimentConfig config = m_panel->config();
        const bool cuda = config.trainer.accelerator != "cpu" && DeviceProbe::instance().capabilities().cuda_available;
        auto* dialog = new BatchSizeFinderDialog(config, cuda, this);
        connect(dialog, &BatchSizeFinderDialog::batchSizeApplied, this, [this](qint64 batchSize) {
            hearth::ExperimentConfig c = m_panel->config();
            c.trainer.batch_size = batchSize;
            m_panel->setConfig(c);
        });
        openFinderDialog(dialog);
    });
    findBatch->setObjectName(QStringLiteral("findBatchSizeAction"));
    findBatch->setStatusTip(tr("The largest batch that fits in memory at this precision: a few real steps per trial."));
    QAction* findLr = run->addAction(tr("Find Learning &Rate…"), this, [this] {
        auto* dialog = new LrFinderDialog(m_panel->config(), this);
        connect(dialog, &LrFinderDialog::learningRateApplied, this, [this](double lr) {
            hearth::ExperimentConfig c = m_panel->config();
            c.optimizer.lr = lr;
            m_panel->setConfig(c);
        });
        openFinderDialog(dialog);
    });
    findLr->setObjectName(QStringLiteral("findLearningRateAction"));
    findLr->setStatusTip(tr("An exponential learning-rate sweep and the rate where the loss falls fastest."));
    for (QAction* finder : {ladder, memoryLadder, findBatch, findLr}) {
        finder->setEnabled(m_controller->canStart());
        connect(m_controller, &WorkbenchController::canStartChanged, finder, &QAction::setEnabled);
    }
    run->addAction(m_stopAction);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_dock->toggleViewAction());
    view->addSeparator();
    const Tab tabs[] = {Tab::Live, Tab::Report, Tab::History, Tab::Compare};
    for (int i = 0; i < 4; ++i) {
        QAction* a = view->addAction(m_tabs->tabText(i), this, [this, t = tabs[i]] { showTab(t); });
        a->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    }
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Hearth"), this, [this] {
        QMessageBox::about(this, tr("About Hearth"),
                           tr("<h3>Hearth %1</h3><p>A desktop workbench for training LibTorch models.</p>"
                              "<p>Runs are stored in<br><tt>%2</tt></p>")
                               .arg(QApplication::applicationVersion(), QDir::toNativeSeparators(m_dbPath).toHtmlEscaped()));
    });
}

void MainWindow::buildStatusBar()
{
    // The devices come from the process's probe, off the GUI thread.
    m_deviceStatus->setObjectName(QStringLiteral("deviceStatus"));
    DeviceProbe& probe = DeviceProbe::instance();
    const auto showDevices = [this, &probe] {
        const hearth::DeviceCapabilities& caps = probe.capabilities();
        m_deviceStatus->setText(!probe.isReady() ? tr("Probing devices…")
                                : caps.cuda_available && caps.cuda_device_count > 0
                                    ? tr("%n CUDA device(s)", nullptr, static_cast<int>(caps.cuda_device_count))
                                    : tr("CPU only"));
    };
    showDevices();
    connect(&probe, &DeviceProbe::ready, m_deviceStatus, showDevices);
    m_runStatus->setText(tr("Idle"));
    connect(m_controller, &WorkbenchController::runStatusChanged, m_runStatus, &QLabel::setText);
    connect(m_controller, &WorkbenchController::statusMessage, statusBar(), &QStatusBar::showMessage);
    m_runStatus->setObjectName(QStringLiteral("runStatus"));
    auto* db = new QLabel(QFileInfo(m_dbPath).fileName());
    db->setToolTip(tr("Run store: %1").arg(QDir::toNativeSeparators(m_dbPath)));
    statusBar()->addPermanentWidget(m_runStatus);
    statusBar()->addPermanentWidget(m_deviceStatus);
    statusBar()->addPermanentWidget(db);
}

bool MainWindow::startRun()
{
    return m_controller->startRun();
}

bool MainWindow::startLadder()
{
    if (!m_controller->canStart())
        return false;
    if (!DeviceProbe::instance().isReady()) {
        statusBar()->showMessage(tr("The devices are still being probed; open the ladder again in a moment."), 5000);
        return false;
    }
    LadderPlanDialog dialog(m_panel->config(), DeviceProbe::instance().capabilities(), m_dbPath, this);
    if (dialog.exec() != QDialog::Accepted)
        return false;
    return m_controller->startLadder(dialog.plan());
}

void MainWindow::stopRun()
{
    m_controller->stopRun();
}

void MainWindow::openReport(qint64 runId)
{
    m_controller->openReport(runId);
}

void MainWindow::compareRuns(const QList<qint64>& runIds)
{
    m_controller->compareRuns(runIds);
}

void MainWindow::showTab(Tab tab)
{
    m_tabs->setCurrentIndex(static_cast<int>(tab));
}

MainWindow::Tab MainWindow::currentTab() const
{
    return static_cast<Tab>(m_tabs->currentIndex());
}

void MainWindow::loadInitialConfig(const QString& configPath, const QStringList& overrides)
{
    QString error;
    if (configPath.isEmpty() || !m_panel->openFile(configPath, &error)) {
        if (!configPath.isEmpty())
            m_live->showProblem(tr("Could not open the experiment"), error);   // names the file
        if (!m_panel->restoreLastConfig())
            m_panel->setConfig(hearth::ExperimentConfig{});   // Fashion-MNIST cnn
    }
    if (overrides.isEmpty())
        return;
    hearth::ExperimentConfig config = m_panel->config();
    try {
        for (const QString& assignment : overrides)
            hearth::applyOverride(config, assignment.toStdString());
    } catch (const std::exception& e) {
        // The command line's overrides were checked before the window opened; none is applied.
        m_live->showProblem(tr("Could not apply --set"), QString::fromStdString(e.what()));
        return;
    }
    m_panel->setConfig(config);
}

void MainWindow::restoreLayout()
{
    QSettings settings;
    if (!restoreGeometry(settings.value(kGeometry).toByteArray()))
        resize(1280, 800);
    restoreState(settings.value(kState).toByteArray());
    m_live->restoreSplitterState(settings.value(kLiveSplit).toByteArray());
    m_compare->restoreSplitterState(settings.value(kCompareSplit).toByteArray());
    m_history->restoreHeaderState(settings.value(kHistoryHeader).toByteArray());
    const int tab = settings.value(kTab, 0).toInt();
    // Report and Compare start empty; reopen Live or History only.
    showTab(tab == static_cast<int>(Tab::History) ? Tab::History : Tab::Live);
}

void MainWindow::saveLayout() const
{
    QSettings settings;
    settings.setValue(kGeometry, saveGeometry());
    settings.setValue(kState, saveState());
    settings.setValue(kLiveSplit, m_live->saveSplitterState());
    settings.setValue(kCompareSplit, m_compare->saveSplitterState());
    settings.setValue(kHistoryHeader, m_history->saveHeaderState());
    settings.setValue(kTab, m_tabs->currentIndex());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (m_controller->isBusy()) {
        const auto answer = QMessageBox::question(this, tr("Quit Hearth"),
            tr("A run is in progress. Stop it and quit? The run is kept as 'stopped'."),
            QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
        if (answer != QMessageBox::Yes) {
            event->ignore();
            return;
        }
    }
    saveLayout();
    m_panel->rememberConfig();
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    const auto urls = event->mimeData()->urls();
    if (urls.size() == 1 && urls.first().isLocalFile()) {
        const QFileInfo info(urls.first().toLocalFile());
        if (isDataSource(info) || info.suffix().compare(QLatin1String("json"), Qt::CaseInsensitive) == 0)
            event->acceptProposedAction();
    }
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QFileInfo info(event->mimeData()->urls().value(0).toLocalFile());
    if (info.suffix().compare(QLatin1String("json"), Qt::CaseInsensitive) == 0) {
        QString error;
        if (!m_panel->openFile(info.absoluteFilePath(), &error))
            QMessageBox::warning(this, tr("Cannot Open Experiment"), error);
    } else if (isDataSource(info)) {
        m_panel->setDataSource(info.absoluteFilePath());
        m_dock->show();
        statusBar()->showMessage(tr("Data source set to %1").arg(QDir::toNativeSeparators(info.absoluteFilePath())), 5000);
    }
    event->acceptProposedAction();
}

}  // namespace hearth::ui
