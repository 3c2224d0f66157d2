// The workbench end to end: a real (small) Fashion-MNIST run started from the window, watched
// live, reported and listed in the history; a failing run shows its message and leaves the
// window usable.
#include "StoreTestEvents.h"
#include "UiTestSupport.h"

#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "ui/MainWindow.h"
#include "ui/compare/CompareView.h"
#include "ui/experiment/ExperimentForm.h"
#include "ui/experiment/ExperimentPanel.h"
#include "ui/history/HistoryModel.h"
#include "ui/history/HistoryView.h"
#include "ui/live/BreakdownChart.h"
#include "ui/live/DeviceMonitorPanel.h"
#include "ui/live/FailureBanner.h"
#include "ui/live/LivePlots.h"
#include "ui/live/LiveView.h"
#include "ui/live/LogPane.h"
#include "ui/live/MemoryGauge.h"
#include "ui/live/ProgressPanel.h"
#include "ui/report/ReportView.h"
#include "ui/report/SampleBrowser.h"
#include "ui/session/TrainingSession.h"
#include "ui/widgets/ProfileBars.h"
#include "ui/widgets/StackedBars.h"

#include <QAction>
#include <QPushButton>
#include <QSettings>
#include <QTableWidget>
#include <QFileInfo>
#include <QLabel>
#include <QStatusBar>
#include <QTimer>
#include <QTest>

using namespace hearth::ui;

class TestMainWindowRun : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_db;

    MainWindowOptions options() const { return {m_db, QString(), {}}; }

private Q_SLOTS:
    void initTestCase()
    {
        hearth::test::isolateSettings(m_dir);
        m_db = m_dir.filePath(QStringLiteral("runs.sqlite"));
    }

    void startsWithTheDefaultExperimentAndTitle()
    {
        MainWindow window(options());
        QCOMPARE(window.windowTitle(), QStringLiteral("Hearth"));
        QCOMPARE(hearth::configToJson(window.experimentPanel()->config()), hearth::configToJson(hearth::ExperimentConfig{}));
        QVERIFY(window.startAction()->isEnabled());
        QVERIFY(!window.stopAction()->isEnabled());
        QCOMPARE(window.startAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_R));
        QCOMPARE(window.stopAction()->shortcut(), QKeySequence(Qt::Key_Escape));
    }

    void smallRunIsWatchedReportedAndListed()
    {
        MainWindow window(options());
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        // The driver (a fake NVML) reports two GPUs: a CPU run shows them beside the process.
        qputenv("HEARTH_NVML_LIBRARY", FAKE_NVML_PATH);
        auto config = hearth::test::tinyExperiment("window-run");
        config.model.name = "cnn";
        config.model.channels = {4, 8};
        config.trainer.profile_every_n_steps = 1;
        window.experimentPanel()->setConfig(config);
        QVERIFY(window.experimentPanel()->isValid());
        QTest::mouseClick(window.experimentPanel()->startButton(), Qt::LeftButton);
        QVERIFY(window.session()->isRunning());   // from the click on, while the row is created
        QVERIFY(window.stopAction()->isEnabled());
        QVERIFY(!window.experimentPanel()->startButton()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->currentRunId() > 0, 30000);
        QCOMPARE(window.currentTab(), MainWindow::Tab::Live);
        const qint64 runId = window.session()->currentRunId();

        QTRY_VERIFY_WITH_TIMEOUT(!window.session()->isRunning(), 240000);
        LivePlots* plots = window.liveView()->plots();
        QVERIFY(plots->pointCount(LivePlots::Plot::Loss) >= 5);   // log_every_n_steps=1, 10 batches
        QCOMPARE(plots->pointCount(LivePlots::Plot::Epochs), 1);
        QVERIFY(plots->pointCount(LivePlots::Plot::LearningRate) >= 5);
        QVERIFY(plots->pointCount(LivePlots::Plot::Throughput) >= 5);
        QCOMPARE(window.liveView()->progress()->percent(), 100);
        QVERIFY(window.liveView()->progress()->stateText().startsWith(QStringLiteral("Completed")));
        // The model FLOPs achieved per device over the fit: a number on a CPU (no MFU without a peak).
        const auto* compute = window.liveView()->progress()->findChild<QLabel*>(QStringLiteral("computeValue"));
        QVERIFY(compute);
        bool number = false;
        compute->text().toDouble(&number);
        QVERIFY2(number, qPrintable(compute->text()));
        // The epoch's batches, told apart from the plots' global optimizer steps.
        const auto* batch = window.liveView()->progress()->findChild<QLabel*>(QStringLiteral("batchValue"));
        QVERIFY(batch);
        QCOMPARE(batch->text(), QStringLiteral("10/10"));
        QVERIFY2(batch->toolTip().contains(QStringLiteral("optimizer step 10 since the start")), qPrintable(batch->toolTip()));
        QVERIFY(!window.liveView()->log()->text().isEmpty());
        QVERIFY(window.liveView()->devices()->gauge(-1)->allocated() > 0);   // process RAM
        MemoryGauge* gpu1 = window.liveView()->devices()->gauge(1);
        QVERIFY(gpu1);
        QCOMPARE(gpu1->allocated(), qint64(3) << 30);      // the driver's used memory
        QCOMPARE(gpu1->total(), qint64(80) << 30);
        QCOMPARE(gpu1->utilization(), 0.5);
        QVERIFY2(gpu1->details().contains(QStringLiteral("56 °C")) && gpu1->details().contains(QStringLiteral("151 W of 700 W")),
                 qPrintable(gpu1->details()));
        // At the window's size every gauge shows all its figures: its text wraps, nothing elided.
        window.showTab(MainWindow::Tab::Live);
        for (MemoryGauge* gauge : window.liveView()->devices()->findChildren<MemoryGauge*>()) {
            const QStringList lines = gauge->lines();
            QVERIFY2(lines.size() >= 2 && !lines.join(QString()).contains(QChar(0x2026)), qPrintable(lines.join('|')));
            QVERIFY2(lines.join(QStringLiteral(" · ")).contains(gauge->summary()), qPrintable(lines.join('|')));
            for (const QString& line : lines)
                QVERIFY2(gauge->fontMetrics().horizontalAdvance(line) <= gauge->width(), qPrintable(line));
            QTRY_VERIFY2(gauge->height() >= gauge->heightForWidth(gauge->width()),   // once laid out again
                         qPrintable(QString("%1: %2 px high, %3 needed").arg(gauge->objectName()).arg(gauge->height())
                                        .arg(gauge->heightForWidth(gauge->width()))));
        }
        QVERIFY(window.liveView()->breakdown()->pointCount() >= 5);   // one per logged step
        QVERIFY(window.liveView()->breakdown()->stackedValue(7, 0) > 0.0);
        QVERIFY(window.experimentPanel()->startButton()->isEnabled());

        ReportView* report = window.reportView();
        QTRY_COMPARE(report->runId(), runId);   // read off the GUI thread after the run's end
        QTableWidget* table = report->classificationTable();
        QCOMPARE(table->rowCount(), 10 + 3);   // Fashion-MNIST classes + accuracy, macro, weighted
        QCOMPARE(table->item(10, 0)->text(), QStringLiteral("accuracy"));
        QCOMPARE(table->item(12, 0)->text(), QStringLiteral("weighted avg"));
        hearth::RunStore store(m_db.toStdString());
        const auto run = store.run(runId);
        QVERIFY(run);
        QCOMPARE(run->status, std::string("completed"));
        QCOMPARE(table->item(10, 3)->text(), QString::number(*run->test_accuracy, 'f', 4));
        QVERIFY(report->sampleBrowser()->visibleCount() > 0);   // a 1-epoch tiny cnn makes mistakes
        // Time & Memory: the run's and the epoch's breakdown, and the memory at the peak.
        QCOMPARE(report->profile()->timeBars()->rowCount(), 2);
        QCOMPARE(report->profile()->memoryBars()->rowCount(), 1);
        const auto memory = store.memoryBreakdown(runId);
        QVERIFY(memory);
        QCOMPARE(report->profile()->memoryBars()->value(0, 0) * 1048576.0, double(memory->parameters_bytes));
        QCOMPARE(memory->optimizer_state_bytes, 2 * memory->parameters_bytes);   // adam
        // The driver's samples reached the store too.
        int gpuSamples = 0;
        for (const auto& d : store.deviceSamples(runId))
            gpuSamples += d.device == 1 && d.temperature_c == 56.0;
        QVERIFY(gpuSamples >= 1);

        HistoryModel* history = window.historyView()->model();
        QTRY_COMPARE(history->rowCount(), 1);
        QCOMPARE(history->data(history->index(0, HistoryModel::Name), Qt::DisplayRole).toString(),
                 QStringLiteral("window-run"));
        QTRY_COMPARE(history->data(history->index(0, HistoryModel::Status), Qt::DisplayRole).toString(),
                     QStringLiteral("completed"));
        const QString json = m_dir.filePath(QStringLiteral("report.json"));
        QVERIFY(exportReport(report->report(), json));
    }

    void stopKeepsTheRunAsStopped()
    {
        MainWindow window(options());
        auto config = hearth::test::tinyExperiment("stopped-run");
        config.data.limit = 5000;
        config.trainer.max_epochs = 20;
        window.experimentPanel()->setConfig(config);
        QVERIFY(window.startRun());
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->currentRunId() > 0, 30000);
        const qint64 runId = window.session()->currentRunId();
        QTRY_VERIFY_WITH_TIMEOUT(window.liveView()->plots()->pointCount(LivePlots::Plot::Loss) > 0, 120000);
        window.stopAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!window.session()->isRunning(), 60000);
        QCOMPARE(hearth::RunStore(m_db.toStdString()).run(runId)->status, std::string("stopped"));
        QVERIFY(window.liveView()->progress()->stateText().startsWith(QStringLiteral("Stopped")));
    }

    // The window goes away while a run trains: its job's process is stopped after its current
    // step (the run kept as stopped) and none is left behind.
    void closingTheWindowMidRunLeavesNoProcess()
    {
        qint64 pid = 0;
        qint64 runId = 0;
        {
            MainWindow window(options());
            auto config = hearth::test::tinyExperiment("closed-mid-run");
            config.data.limit = 5000;
            config.trainer.max_epochs = 20;
            window.experimentPanel()->setConfig(config);
            QVERIFY(window.startRun());
            pid = window.session()->jobProcessId();
            QVERIFY(pid > 0 && pid != QCoreApplication::applicationPid());
            QTRY_VERIFY_WITH_TIMEOUT(window.session()->currentRunId() > 0, 30000);
            runId = window.session()->currentRunId();
            QTRY_VERIFY_WITH_TIMEOUT(window.liveView()->plots()->pointCount(LivePlots::Plot::Loss) > 0, 120000);
        }
        QVERIFY2(!QFileInfo::exists(QStringLiteral("/proc/%1").arg(pid)), qPrintable(QString::number(pid)));
        QCOMPARE(hearth::RunStore(m_db.toStdString()).run(runId)->status, std::string("stopped"));
    }

    // History → Resume on a stopped run: hearth-cli resume continues the same run; the Live tab
    // shows the steps it kept, then the new ones; it completes with every step stored once.
    void resumeFromHistoryContinuesAStoppedRun()
    {
#ifndef HEARTH_CLI_PATH
        QSKIP("this build has no hearth-cli");
#else
        qputenv("HEARTH_CLI", HEARTH_CLI_PATH);
        MainWindow window(options());
        auto config = hearth::test::tinyExperiment("resumed-run");
        // Long enough that the stop lands in training. The stop follows the first plotted step,
        // but the child trains on while the window draws: 3 epochs of the tiny mlp (375 steps)
        // take 0.15 s and could end before the stop on a loaded machine, and a completed run is
        // not resumable. Wider layers make each step slower without more events to draw.
        config.data.limit = 4000;
        config.model.hidden = {1024, 1024};
        config.trainer.max_epochs = 3;
        window.experimentPanel()->setConfig(config);
        QVERIFY(window.startRun());
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->currentRunId() > 0, 30000);
        const qint64 runId = window.session()->currentRunId();
        QTRY_VERIFY_WITH_TIMEOUT(window.liveView()->plots()->pointCount(LivePlots::Plot::Loss) > 0, 120000);
        window.stopAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!window.session()->isRunning(), 60000);
        const hearth::RunStore stopped(m_db.toStdString());
        QCOMPARE(stopped.run(runId)->status, std::string("stopped"));   // not completed before the stop came
        const auto kept = stopped.steps(runId);
        QVERIFY(!kept.empty());

        HistoryView* history = window.historyView();
        auto* resume = history->findChild<QPushButton*>(QStringLiteral("historyResume"));
        QVERIFY(resume);
        history->selectRuns({runId});
        QTRY_VERIFY_WITH_TIMEOUT(history->selectedRunIds() == QList<qint64>{runId} && resume->isEnabled(), 30000);
        // Once the resumed run has started, "Resuming run N…" leaves the status bar.
        QString messageOnceStarted = QStringLiteral("(not started)");
        connect(window.session(), &TrainingSession::runStarted, this, [&] {
            QTimer::singleShot(0, this, [&] { messageOnceStarted = window.statusBar()->currentMessage(); });
        });
        resume->click();
        QVERIFY2(window.statusBar()->currentMessage().startsWith(QStringLiteral("Resuming run")),
                 qPrintable(window.statusBar()->currentMessage()));
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->isRunning(), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(!window.session()->isRunning(), 180000);
        QVERIFY2(messageOnceStarted.isEmpty(), qPrintable(messageOnceStarted));
        const hearth::RunStore store(m_db.toStdString());
        QCOMPARE(store.run(runId)->status, std::string("completed"));
        const auto steps = store.steps(runId);
        QVERIFY(steps.size() > kept.size());
        for (size_t i = 0; i < steps.size(); ++i)
            QCOMPARE(steps[i].global_step, static_cast<int64_t>(i + 1));
        // The live loss curve: the kept steps drawn first, then every new one.
        QCOMPARE(window.liveView()->plots()->pointCount(LivePlots::Plot::Loss), static_cast<int>(steps.size()));
        QTRY_VERIFY_WITH_TIMEOUT(!resume->isEnabled(), 10000);   // completed: nothing to resume
#endif
    }

    // Data that is there but cannot be read (a folder without IDX files) fails the run as it
    // loads: the banner names the problem, the run is stored as failed, the window takes another.
    void failedRunShowsMessageAndWindowStaysUsable()
    {
        MainWindow window(options());
        window.show();
        auto config = hearth::test::tinyExperiment("unreadable-data");
        const QString folder = m_dir.filePath(QStringLiteral("no-idx-files"));
        QVERIFY(QDir().mkpath(folder));
        config.data.path = folder.toStdString();
        window.experimentPanel()->setConfig(config);
        QVERIFY(window.startRun());
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->currentRunId() > 0, 30000);
        const qint64 runId = window.session()->currentRunId();
        QTRY_VERIFY_WITH_TIMEOUT(!window.session()->isRunning(), 60000);
        FailureBanner* banner = window.liveView()->banner();
        QVERIFY(banner->isVisible());
        QVERIFY2(banner->message().contains(QStringLiteral("no-idx-files")), qPrintable(banner->message()));
        QVERIFY(window.experimentPanel()->startButton()->isEnabled());
        QVERIFY(window.startAction()->isEnabled());
        QCOMPARE(hearth::RunStore(m_db.toStdString()).run(runId)->status, std::string("failed"));
    }

    // A path that is not there is marked at its field before anything runs: Start is off, nothing
    // is stored; once the path exists the form takes it.
    void missingDataIsMarkedInTheFormAndNothingRuns()
    {
        MainWindow window(options());
        window.show();
        const auto before = hearth::RunStore(m_db.toStdString()).listRuns().size();
        auto config = hearth::test::tinyExperiment("missing-data");
        config.data.path = m_dir.filePath(QStringLiteral("no-such-folder")).toStdString();
        window.experimentPanel()->setConfig(config);
        ExperimentPanel* panel = window.experimentPanel();
        const QString message = panel->form()->fieldMessage("data.path");
        QVERIFY2(message.contains(QStringLiteral("no such file or folder")) &&
                     message.contains(QStringLiteral("no-such-folder")),
                 qPrintable(message));
        QVERIFY(!panel->startButton()->isEnabled());
        QVERIFY(!window.startAction()->isEnabled());
        QVERIFY(!window.startRun());
        QTest::qWait(200);
        QVERIFY(!window.session()->isRunning());
        QCOMPARE(hearth::RunStore(m_db.toStdString()).listRuns().size(), before);

        config.data.path = hearth::kDefaultFashionMnistPath;
        panel->setConfig(config);
        QVERIFY2(panel->form()->fieldMessage("data.path").isEmpty(), qPrintable(panel->form()->fieldMessage("data.path")));
        QVERIFY(panel->startButton()->isEnabled());

        // A CSV whose header lacks the label column: the Label column field says so, with the
        // column likely meant, and nothing can start.
        const QString csv = m_dir.filePath(QStringLiteral("capital-label.csv"));
        {
            QFile f(csv);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("a,b,Label\n1,2,x\n3,4,y\n");
        }
        config.data.kind = "csv";
        config.model.name = "mlp";
        config.data.path = csv.toStdString();
        panel->setConfig(config);
        const QString column = panel->form()->fieldMessage("data.label_column");
        QVERIFY2(column.contains(QStringLiteral("no label column 'label' (did you mean 'Label'?)")), qPrintable(column));
        QVERIFY(!panel->startButton()->isEnabled());
        config.data.label_column = "Label";
        panel->setConfig(config);
        QVERIFY2(panel->form()->fieldMessage("data.label_column").isEmpty(),
                 qPrintable(panel->form()->fieldMessage("data.label_column")));
        QVERIFY(panel->startButton()->isEnabled());
    }

    void layoutAndConfigSurviveARestart()
    {
        {
            MainWindow window(options());
            window.resize(1100, 700);
            auto config = hearth::test::tinyExperiment("remember-me");
            window.experimentPanel()->setConfig(config);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            window.close();
        }
        MainWindow again(options());
        QCOMPARE(again.experimentPanel()->config().name, std::string("remember-me"));
        QCOMPARE(again.size(), QSize(1100, 700));
    }

    // Its own database with two finished runs: independent of what the other tests stored.
    void historySelectionOpensReportAndCompare()
    {
        const QString db = m_dir.filePath(QStringLiteral("history.sqlite"));
        std::vector<int64_t> ids;
        {
            auto writer = std::make_shared<hearth::RunWriter>(db.toStdString());
            for (const char* name : {"first", "second"}) {
                const int64_t id = writer->createRun(name, "{}");
                hearth::RunRecorder recorder(writer, id);
                recorder.onEvent(hearth::testing::startedEvent(name));
                for (int64_t i = 1; i <= 20; ++i) recorder.onEvent(hearth::testing::stepEvent(i, 10));
                recorder.onEvent(hearth::testing::epochEvent(0, 0.8));
                recorder.onEvent(hearth::RunFinished{});
                ids.push_back(id);
            }
            writer->flush();
        }
        MainWindow window(MainWindowOptions{db, QString(), {}});
        window.openReport(ids[0]);
        QCOMPARE(window.currentTab(), MainWindow::Tab::Report);
        QTRY_COMPARE(window.reportView()->runId(), ids[0]);
        window.compareRuns({ids[0], ids[1]});
        QCOMPARE(window.currentTab(), MainWindow::Tab::Compare);
        QTRY_COMPARE(window.compareView()->runIds().size(), 2);
        // Selected in History too, also when History's rows arrive after the request.
        QTRY_COMPARE(window.historyView()->selectedRunIds(), (QList<qint64>{ids[0], ids[1]}));
    }

    // hearth --config F --set k=v (what `scripts/run --set ...` passes): the overrides apply to the
    // experiment the window opens with, the file's or the last one; one that cannot apply is
    // shown, and the experiment stays as it was.
    void commandLineOverridesApplyToTheOpenedExperiment()
    {
        const QString file = m_dir.filePath(QStringLiteral("from-file.json"));
        hearth::saveConfigFile(hearth::test::tinyExperiment("from-file"), file.toStdString());
        MainWindowOptions withFile{m_db, file, {QStringLiteral("trainer.max_epochs=7"), QStringLiteral("data.limit=123")}};
        MainWindow window(withFile);
        hearth::ExperimentConfig config = window.experimentPanel()->config();
        QCOMPARE(config.name, std::string("from-file"));
        QCOMPARE(config.trainer.max_epochs, int64_t(7));
        QVERIFY(config.data.limit.has_value());
        QCOMPARE(*config.data.limit, int64_t(123));

        MainWindow lastOne(MainWindowOptions{m_db, QString(), {QStringLiteral("optimizer.lr=0.01")}});
        QCOMPARE(lastOne.experimentPanel()->config().optimizer.lr, 0.01);

        MainWindow bad(MainWindowOptions{m_db, file, {QStringLiteral("trainer.max_epochs=2"), QStringLiteral("trainer.nope=1")}});
        QCOMPARE(bad.experimentPanel()->config().trainer.max_epochs, hearth::test::tinyExperiment("x").trainer.max_epochs);
        const QString shown = bad.liveView()->banner()->message();
        QVERIFY2(shown.contains(QStringLiteral("trainer.nope")), qPrintable(shown));

        // A file that cannot be read is shown once, with the key that is wrong and the file's name
        // once; the window opens on the last experiment.
        const QString broken = m_dir.filePath(QStringLiteral("broken.json"));
        QFile out(broken);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(R"({"trainer": {"lr": 0.1}})");
        out.close();
        MainWindow unreadable(MainWindowOptions{m_db, broken, {}});
        const QString problem = unreadable.liveView()->banner()->message();
        QVERIFY2(problem.contains(QStringLiteral("trainer.lr: unknown key (did you mean 'optimizer.lr'?)")) &&
                     problem.count(QStringLiteral("broken.json")) == 1,
                 qPrintable(problem));
    }
};

QTEST_MAIN(TestMainWindowRun)
#include "test_main_window_run.moc"
