// The finders in the workbench: Run → Find Learning Rate… runs the sweep off the GUI thread, draws
// the curve on a log axis with the suggestion marked, and Apply sets optimizer.lr in the form;
// the batch-size dialog lists every trial and Apply hands over the batch found.
#include "UiTestSupport.h"

#include "ui/MainWindow.h"
#include "ui/experiment/ExperimentPanel.h"
#include "ui/tune/BatchSizeFinderDialog.h"
#include "ui/tune/FinderRunner.h"
#include "ui/tune/LrFinderDialog.h"

#include <QAction>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

using namespace hearth::ui;

class TestFinderDialogs : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase() { hearth::test::isolateSettings(m_dir); }

    void lrFinderApplySetsOptimizerLr()
    {
        MainWindow window({m_dir.filePath(QStringLiteral("runs.sqlite")), QString(), {}});
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto config = hearth::test::tinyExperiment("lr-finder");
        config.optimizer.lr = 0.5;
        window.experimentPanel()->setConfig(config);
        auto* action = window.findChild<QAction*>(QStringLiteral("findLearningRateAction"));
        QVERIFY(action && action->isEnabled());
        action->trigger();
        auto* dialog = window.findChild<LrFinderDialog*>();
        QVERIFY(dialog && dialog->isVisible());
        QVERIFY(dialog->plot()->xAxis->scaleType() == QCPAxis::stLogarithmic);
        dialog->stepsField()->setValue(40);
        QVERIFY(!dialog->applyButton()->isEnabled());
        // The curve grows while the sweep runs, one point per step, over the sweep's whole range.
        // Each entry: the points received so far, when the plot drew every finite one of them.
        std::vector<int> drawnWhileRunning;
        connect(dialog->runner(), &FinderRunner::lrPointsChanged, this, [&] {
            const auto& points = dialog->runner()->lrPoints();
            const auto finite = std::count_if(points.begin(), points.end(),
                                              [](const hearth::LrPoint& p) { return std::isfinite(p.smoothed_loss); });
            const QCPRange x = dialog->plot()->xAxis->range();
            if (dialog->runner()->isRunning() && qFuzzyCompare(x.lower, 1e-7) && qFuzzyCompare(x.upper, 1.0) &&
                dialog->plot()->graph(1)->dataCount() == finite)
                drawnWhileRunning.push_back(int(points.size()));
        });

        hearth::test::EventLoopProbe probe;
        QTest::mouseClick(dialog->startButton(), Qt::LeftButton);
        QVERIFY(dialog->runner()->isRunning());
        QVERIFY(!dialog->stepsField()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->runner()->isRunning(), 180000);
        QVERIFY2(dialog->runner()->errorMessage().isEmpty(), qPrintable(dialog->runner()->errorMessage()));
        QVERIFY2(probe.longestGapMs() < 2000, qPrintable(QString::number(probe.longestGapMs())));  // never blocked
        QVERIFY(dialog->applyButton()->isEnabled());
        QVERIFY(dialog->suggestion());
        const double suggestion = *dialog->suggestion();
        QVERIFY(suggestion >= 1e-7 && suggestion <= 1.0);
        QVERIFY(dialog->plot()->graph(1)->dataCount() >= 20);  // the smoothed curve
        QCOMPARE(drawnWhileRunning.size(), dialog->runner()->lrResult()->points.size());
        for (size_t i = 0; i < drawnWhileRunning.size(); ++i)
            QCOMPARE(drawnWhileRunning[i], int(i) + 1);
        QCOMPARE(dialog->plot()->graph(2)->dataCount(), 1);     // the suggestion's mark
        QVERIFY(dialog->statusLabel()->text().contains(QStringLiteral("Suggested learning rate")));

        QTest::mouseClick(dialog->applyButton(), Qt::LeftButton);
        const double applied = window.experimentPanel()->config().optimizer.lr;
        QCOMPARE(applied, QString::number(suggestion, 'g', 3).toDouble());
        QVERIFY(applied != 0.5);
        QCOMPARE(window.experimentPanel()->config().trainer.batch_size, config.trainer.batch_size);  // nothing else
        QTRY_VERIFY(window.findChild<LrFinderDialog*>() == nullptr);  // closed and deleted
    }

    void lrDialogRejectsABadRange()
    {
        LrFinderDialog dialog(hearth::test::tinyExperiment());
        // Before a sweep, the empty plot spans the range the fields give; a bad range leaves it.
        QCOMPARE(dialog.plot()->xAxis->range().lower, 1e-7);
        QCOMPARE(dialog.plot()->xAxis->range().upper, 1.0);
        dialog.minLrField()->setText(QStringLiteral("1e-5"));
        QCOMPARE(dialog.plot()->xAxis->range().lower, 1e-5);
        dialog.minLrField()->setText(QStringLiteral("1"));
        dialog.maxLrField()->setText(QStringLiteral("0.01"));
        dialog.start();
        QVERIFY(!dialog.runner()->isRunning());
        QVERIFY(dialog.statusLabel()->text().contains(QStringLiteral("smallest < largest")));
    }

    void batchSizeDialogListsTrialsAndApplies()
    {
        // A config for two devices is tuned on both, one process each (the finder's child hearth-cli
        // launches the ranks, as hearth-cli tune does), and the dialog says so.
        auto config = hearth::test::tinyExperiment("batch-finder");
        config.trainer.devices = 2;
        config.trainer.strategy = "ddp";
        BatchSizeFinderDialog dialog(config, /*cuda=*/false);
        const auto labels = dialog.findChildren<QLabel*>();
        QVERIFY(std::any_of(labels.begin(), labels.end(),
                            [](const QLabel* l) { return l->text().contains(QStringLiteral("all of the experiment's devices")); }));
        QSignalSpy applied(&dialog, &BatchSizeFinderDialog::batchSizeApplied);
        dialog.memoryLimitField()->setText(QStringLiteral("lots"));
        dialog.start();
        QVERIFY(!dialog.runner()->isRunning());
        QVERIFY(dialog.statusLabel()->text().contains(QStringLiteral("not a memory size")));

        dialog.memoryLimitField()->setText(QStringLiteral("64GiB"));
        dialog.maxBatchField()->setValue(48);
        // The bisection's settings start at the engine's defaults and travel to hearth-cli.
        QCOMPARE(dialog.multipleField()->value(), 8);
        QCOMPARE(dialog.toleranceField()->value(), 5);
        dialog.multipleField()->setValue(16);
        dialog.toleranceField()->setValue(10);
        dialog.stepsField()->setValue(1);
        dialog.start();
        QVERIFY(dialog.runner()->isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.runner()->isRunning(), 180000);
        QVERIFY2(dialog.runner()->errorMessage().isEmpty(), qPrintable(dialog.runner()->errorMessage()));
        QCOMPARE(dialog.found(), int64_t{48});
        // 2, 4, ..., 32, then the bound 48: one row per trial, each fitting.
        QCOMPARE(dialog.trialsTable()->rowCount(), 6);
        QCOMPARE(dialog.trialsTable()->item(5, 0)->text(), QStringLiteral("48"));
        QCOMPARE(dialog.trialsTable()->item(5, 1)->text(), QStringLiteral("fits"));
        QVERIFY(dialog.statusLabel()->text().contains(QStringLiteral("Largest batch that fits: 48")));
        // The search ran with the dialog's settings, as hearth-cli reports them back.
        QVERIFY2(dialog.statusLabel()->text().contains(
                     QStringLiteral("bisecting in multiples of 16 to within 10% (at least 16)")),
                 qPrintable(dialog.statusLabel()->text()));
        QVERIFY(dialog.applyButton()->isEnabled());
        QTest::mouseClick(dialog.applyButton(), Qt::LeftButton);
        QCOMPARE(applied.count(), 1);
        QCOMPARE(applied.first().first().toLongLong(), qint64{48});
    }

    // Closing while the sweep runs does not wait on it: the dialog stops the finder and closes
    // once the current step is done.
    void closingWhileRunningStopsThenCloses()
    {
        LrFinderDialog dialog(hearth::test::tinyExperiment("lr-close"));
        dialog.show();
        dialog.stepsField()->setValue(100000);
        QSignalSpy progressed(dialog.runner(), &FinderRunner::progress);
        dialog.start();
        QTRY_VERIFY_WITH_TIMEOUT(!progressed.isEmpty(), 60000);
        dialog.reject();
        QVERIFY(dialog.isVisible());  // still stopping
        QVERIFY(dialog.statusLabel()->text().contains(QStringLiteral("Stopping")));
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.isVisible(), 30000);
        QVERIFY(!dialog.runner()->isRunning());
        QVERIFY(dialog.runner()->lrResult() && dialog.runner()->lrResult()->stopped);
        QVERIFY(dialog.runner()->lrResult()->points.size() < 100000);
    }

    void cpuBatchSearchNeedsALimit()
    {
        BatchSizeFinderDialog dialog(hearth::test::tinyExperiment(), /*cuda=*/false);
        dialog.memoryLimitField()->clear();
        dialog.start();
        QVERIFY(!dialog.runner()->isRunning());
        QVERIFY(dialog.statusLabel()->text().contains(QStringLiteral("needs a memory limit")));
    }
};

QTEST_MAIN(TestFinderDialogs)
#include "test_finder_dialogs.moc"
