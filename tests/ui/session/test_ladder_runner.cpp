// The workbench's technique ladder: one run per step, grouped as one sweep, compared at the end.
#include "UiTestSupport.h"

#include "engine/config/ByteSize.h"
#include "storage/RunStore.h"
#include "storage/report/LadderSummary.h"
#include "ui/MainWindow.h"
#include "ui/compare/CompareView.h"
#include "ui/compare/LadderPanel.h"
#include "ui/experiment/ExperimentPanel.h"
#include "ui/experiment/LadderPlanDialog.h"
#include "ui/session/DeviceProbe.h"
#include "ui/session/LadderRunner.h"
#include "ui/session/TrainingSession.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QTabWidget>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

using namespace hearth;

class TestLadderRunner : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString db() const { return m_dir.filePath("runs.sqlite"); }

    // Compare on these runs: true when it opens on its Ladder tab, whose text `text` gets.
    bool comparedOnTheLadderTab(const QList<qint64>& runIds, QString* text) const {
        ui::CompareView compare(db());
        compare.setRuns(runIds);
        if (!QTest::qWaitFor([&compare] { return !compare.isLoading(); }, 30000)) return false;
        *text = compare.ladderPanel()->toPlainText();
        return compare.tables()->isTabVisible(compare.tables()->indexOf(compare.ladderPanel())) &&
               compare.tables()->currentWidget() == compare.ladderPanel();
    }

private Q_SLOTS:
    void initTestCase()
    {
        test::isolateSettings(m_dir);
        // Ladders are planned for the probed devices.
        QTRY_VERIFY_WITH_TIMEOUT(ui::DeviceProbe::instance().isReady(), 30000);
    }

    void ladderRunsEachStepAsOneSweep() {
        ui::TrainingSession session(db());
        ui::LadderRunner ladder(&session);
        QSignalSpy finished(&ladder, &ui::LadderRunner::finished);
        QSignalSpy steps(&ladder, &ui::LadderRunner::stepStarted);
        ExperimentConfig base = test::tinyExperiment("ladder");
        QString error;
        QVERIFY2(ladder.start(base, 64, &error), qPrintable(error));   // 64 = 2 x 32: adds accumulation
        QCOMPARE(ladder.steps().size(), size_t(4));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QCOMPARE(steps.count(), 4);
        const auto runIds = finished.at(0).at(0).value<QList<qint64>>();
        QVERIFY(finished.at(0).at(1).toBool());
        QCOMPARE(runIds.size(), 4);

        RunStore store(db().toStdString());
        std::optional<int64_t> sweep;
        QStringList precisions;
        for (qint64 id : runIds) {
            const auto run = store.run(id);
            QVERIFY(run.has_value());
            QCOMPARE(QString::fromStdString(run->status), QString("completed"));
            QVERIFY(run->sweep_id.has_value());
            if (!sweep) sweep = run->sweep_id;
            QCOMPARE(*run->sweep_id, *sweep);   // one group in the store
            precisions << QString::fromStdString(configFromJson(run->config_json).trainer.precision);
        }
        // Each step's speed came from its events; a bf16 step slower than the baseline on this CPU
        // is left out of the steps after it, and the runs ran the steps as rewritten.
        QCOMPARE(ladder.measures().size(), size_t(4));
        for (const auto& m : ladder.measures()) QVERIFY(m.fit_s > 0.0 && m.steady_samples_per_sec == 0.0);   // 1 epoch
        const bool bf16Kept = ladder.steps()[1].kept;
        QCOMPARE(bf16Kept, !ladderRungSlower(ladder.measures()[1], ladder.measures()[0]));
        const QString later = bf16Kept ? "bf16-mixed" : "32-true";
        QCOMPARE(precisions, (QStringList{"32-true", "bf16-mixed", later, later}));
        for (int i = 0; i < runIds.size(); ++i)
            QCOMPARE(QString::fromStdString(store.run(runIds[i])->name),
                     QString::fromStdString(ladder.steps()[static_cast<size_t>(i)].config.name));
        QCOMPARE(configFromJson(store.run(runIds[3])->config_json).trainer.accumulate_grad_batches, int64_t(2));
    }

    void badTargetBatchIsRefusedBeforeAnyRun() {
        ui::TrainingSession session(db());
        ui::LadderRunner ladder(&session);
        QString error;
        QVERIFY(!ladder.start(test::tinyExperiment("bad-ladder"), 50, &error));
        QVERIFY2(error.contains("multiple of trainer.batch_size"), qPrintable(error));
        QVERIFY(!session.isRunning());
    }

    void stopEndsTheLadderEarly() {
        ui::TrainingSession session(db());
        ui::LadderRunner ladder(&session);
        QSignalSpy finished(&ladder, &ui::LadderRunner::finished);
        QSignalSpy steps(&ladder, &ui::LadderRunner::stepStarted);
        ExperimentConfig base = test::tinyExperiment("stopped-ladder");
        base.data.limit = 3000;
        QVERIFY(ladder.start(base, std::nullopt));
        QTRY_COMPARE_WITH_TIMEOUT(steps.count(), 1, 30000);
        ladder.stop();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
        QCOMPARE(finished.at(0).at(0).value<QList<qint64>>().size(), 1);   // no later step started
        QVERIFY(!finished.at(0).at(1).toBool());
        QCOMPARE(RunStore(db().toStdString()).run(ladder.runIds().value(0))->status, std::string("stopped"));
    }

    // Stopped while its sweep is still being created: no step runs at all.
    void stopBeforeTheFirstStepStartsNothing() {
        ui::TrainingSession session(db());
        ui::LadderRunner ladder(&session);
        QSignalSpy finished(&ladder, &ui::LadderRunner::finished);
        QVERIFY(ladder.start(test::tinyExperiment("stopped-at-once"), std::nullopt));
        QVERIFY(ladder.isRunning());
        ladder.stop();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        QVERIFY(finished.at(0).at(0).value<QList<qint64>>().isEmpty());
        QVERIFY(!finished.at(0).at(1).toBool());
        QVERIFY(!session.isRunning());
    }

    // The planner lists every rung for this experiment on this machine: on the CPU mixed precision
    // and workers checked, checkpointing offered unchecked, the GPU rungs greyed out with their
    // reason; what is ticked is the plan, and the summary counts the runs it makes.
    void plannerDialogListsTheRungsAndCountsTheRuns() {
        const ExperimentConfig base = test::tinyExperiment("planned");
        ui::LadderPlanDialog dialog(base, DeviceCapabilities{}, db());
        QListWidget* list = dialog.rungList();
        QListWidgetItem* mixed = nullptr;
        QListWidgetItem* tf32 = nullptr;
        QListWidgetItem* checkpointing = nullptr;
        for (int i = 0; i < list->count(); ++i) {
            const QString id = list->item(i)->data(Qt::UserRole).toString();
            if (id == "mixed") mixed = list->item(i);
            if (id == "tf32") tf32 = list->item(i);
            if (id == "checkpointing") checkpointing = list->item(i);
        }
        QVERIFY(mixed && tf32 && checkpointing);
        QCOMPARE(mixed->checkState(), Qt::Checked);
        QCOMPARE(checkpointing->checkState(), Qt::Unchecked);
        QVERIFY(!(tf32->flags() & Qt::ItemIsEnabled));
        QVERIFY2(tf32->text().contains("trains on the CPU"), qPrintable(tf32->text()));
        QCOMPARE(dialog.stepLabels(), (QStringList{"baseline", "+ bf16-mixed", "+ workers"}));
        QVERIFY2(dialog.summaryText().contains("3 steps × 3 repeat(s) = 9 runs"), qPrintable(dialog.summaryText()));
        mixed->setCheckState(Qt::Unchecked);
        checkpointing->setCheckState(Qt::Checked);
        QCOMPARE(dialog.stepLabels(), (QStringList{"baseline", "+ workers", "+ activation checkpointing"}));
        auto* measure = dialog.findChild<QComboBox*>(QStringLiteral("ladderMeasure"));
        QVERIFY(measure);
        measure->setCurrentIndex(measure->findData(QStringLiteral("accuracy")));
        const LadderPlan plan = dialog.plan();
        QVERIFY(plan.goal == LadderGoal::Accuracy);
        QCOMPARE(plan.repeats, int64_t(3));
        QCOMPARE(*plan.rungs, (std::vector<std::string>{"workers", "checkpointing"}));
        QVERIFY(!plan.device_memory_bytes);   // the device's memory
        auto* memory = dialog.findChild<QDoubleSpinBox*>(QStringLiteral("ladderDeviceMemory"));
        QVERIFY(memory);
        memory->setValue(2.0);
        QCOMPARE(dialog.plan().device_memory_bytes, std::optional<int64_t>(int64_t{2} << 30));
        QVERIFY2(dialog.summaryText().contains("predicted first"), qPrintable(dialog.summaryText()));
    }

    // A plan for a device too small for the baseline: its probe predicts it does not fit, and the
    // ladder ends without a run, saying why.
    void aBaselinePredictedNotToFitRunsNothing() {
        ui::TrainingSession session(db());
        ui::LadderRunner ladder(&session);
        QSignalSpy finished(&ladder, &ui::LadderRunner::finished);
        QSignalSpy failed(&ladder, &ui::LadderRunner::failed);
        LadderPlan plan;
        plan.rungs = std::vector<std::string>{"mixed"};
        plan.device_memory_bytes = int64_t{1} << 20;
        QString error;
        QVERIFY2(ladder.start(test::tinyExperiment("too-small"), plan, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
        QVERIFY(!finished.at(0).at(1).toBool());
        QVERIFY(finished.at(0).at(0).value<QList<qint64>>().isEmpty());
        QCOMPARE(failed.count(), 1);
        const QString message = failed.at(0).at(0).toString();
        QVERIFY2(message.contains("predicted not to fit") && message.contains("the memory given (1.0 MiB)"),
                 qPrintable(message));
        QVERIFY(!session.isRunning());
    }

    // A planned ladder from the workbench: two rounds, each run recorded as its step and repeat
    // with the plan, each round with its own seed; Compare's Ladder tab judges the sweep.
    void plannedLadderRunsEveryRoundAndRecordsEachRun() {
        ui::TrainingSession session(db());
        ui::LadderRunner ladder(&session);
        QSignalSpy finished(&ladder, &ui::LadderRunner::finished);
        QSignalSpy rounds(&ladder, &ui::LadderRunner::roundStarted);
        QSignalSpy predicted(&ladder, &ui::LadderRunner::stepPredicted);
        LadderPlan plan;
        plan.rungs = std::vector<std::string>{"mixed"};
        plan.repeats = 2;
        plan.goal = LadderGoal::Accuracy;   // the rung trains to the baseline's best val accuracy
        plan.cap_epochs = 2;
        QString error;
        QVERIFY2(ladder.start(test::tinyExperiment("repeated-ladder"), plan, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QVERIFY(finished.at(0).at(1).toBool());
        const auto runIds = finished.at(0).at(0).value<QList<qint64>>();
        QCOMPARE(runIds.size(), 4);
        QCOMPARE(rounds.count(), 2);
        RunStore store(db().toStdString());
        const auto run = store.run(runIds[0]);
        QVERIFY(run && run->sweep_id);
        QTRY_VERIFY(store.sweep(*run->sweep_id)->runs.size() == 4 &&
                    store.sweep(*run->sweep_id)->runs[3].step == 1);   // written by writer jobs
        const auto sweep = store.sweep(*run->sweep_id);
        QVERIFY(!sweep->plan_json.empty());
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(sweep->runs[i].step, int64_t(i % 2));
            QCOMPARE(sweep->runs[i].repeat, int64_t(i / 2));
            QCOMPARE(configFromJson(store.run(runIds[i])->config_json).seed, uint64_t(42 + i / 2));
        }
        const auto rung = configFromJson(store.run(runIds[1])->config_json).trainer;
        QCOMPARE(rung.max_epochs, int64_t(2));
        QVERIFY(rung.early_stopping.stop_at.has_value());
        QCOMPARE(*rung.early_stopping.stop_at, *store.run(runIds[0])->best_val_accuracy);
        const LadderSummary summary = summarizeLadder(store, *run->sweep_id);
        QCOMPARE(QString::fromStdString(summary.goal), QString("accuracy"));
        QCOMPARE(summary.steps.size(), size_t(2));
        QCOMPARE(summary.steps[1].completed, int64_t(2));
        // Each step was probed once, before its first run (not again in the second round), and the
        // prediction is stored with the plan and set against that run.
        QCOMPARE(predicted.count(), 2);
        for (const auto& call : predicted) QVERIFY2(call.at(3).toBool(), qPrintable(call.at(2).toString()));
        for (const auto& step : summary.steps)
            QVERIFY2(step.prediction && step.check && step.check->peak_error, step.label.c_str());
        QString text;
        QVERIFY(comparedOnTheLadderTab(runIds, &text));
        QVERIFY2(text.contains("+ bf16-mixed") && text.contains("/2") && text.contains("time to accuracy") &&
                     text.contains("peak memory: predicted / measured") && text.contains("MiB / ") &&
                     (text.contains("Recommended") || text.contains("keep 'baseline'")),
                 qPrintable(text));
    }

    // The memory ladder from the workbench, then in Compare: its Ladder tab shows each step's peak,
    // its change against the step before, the activations and the time against the baseline (the
    // table `hearth-cli sweep --show` prints), not a speed verdict.
    void memoryLadderShowsItsTableInCompare() {
        ui::TrainingSession session(db());
        ui::LadderRunner ladder(&session);
        QSignalSpy finished(&ladder, &ui::LadderRunner::finished);
        LadderOptions options;
        options.kind = LadderKind::Memory;
        QString error;
        QVERIFY2(ladder.start(test::tinyExperiment("memory-ladder"), options, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QVERIFY(finished.at(0).at(1).toBool());
        const auto runIds = finished.at(0).at(0).value<QList<qint64>>();
        QVERIFY(runIds.size() >= 3);
        RunStore store(db().toStdString());
        const auto run = store.run(runIds[0]);
        QVERIFY(run && run->sweep_id);
        QTRY_VERIFY(store.sweep(*run->sweep_id)->runs.size() == size_t(runIds.size()));   // written by writer jobs
        const MemoryLadderTable table = memoryLadderTable(store, summarizeLadder(store, *run->sweep_id));
        QCOMPARE(table.rows.size(), size_t(runIds.size()));
        QVERIFY(!table.rows[0].peak_change && table.rows[1].peak_change);
        QCOMPARE(*table.rows[0].time_vs_baseline, 1.0);

        QString text;
        QVERIFY(comparedOnTheLadderTab(runIds, &text));
        QVERIFY2(text.contains("the memory ladder") && text.contains("peak memory") && text.contains("change") &&
                     text.contains("activations") && text.contains("1.00×") && !text.contains("speed-up"),
                 qPrintable(text));
        for (const auto& row : table.rows) {
            QVERIFY2(text.contains(QString::fromStdString(row.label)), row.label.c_str());
            QVERIFY2(text.contains(QString::fromStdString(formatBytes(row.peak_bytes))), row.label.c_str());
        }
        QVERIFY2(text.contains(QString::asprintf("%+.1f%%", 100.0 * *table.rows[1].peak_change)), qPrintable(text));
    }

    void windowShowsTheLadderInCompare() {
        ui::MainWindowOptions options;
        options.dbPath = db();
        ui::MainWindow window(options);
        window.experimentPanel()->setConfig(test::tinyExperiment("window-ladder"));
        QVERIFY(window.experimentPanel()->ladderButton()->isEnabled());
        QSignalSpy finished(window.ladderRunner(), &ui::LadderRunner::finished);
        QVERIFY(window.ladderRunner()->start(window.experimentPanel()->config(), std::nullopt));
        QVERIFY(!window.experimentPanel()->ladderButton()->isEnabled());   // one ladder at a time
        // Once a later step has started and the event loop has turned, the window shows that run
        // as running: the previous run's end was handled before the step started, not after.
        auto* status = window.findChild<QLabel*>(QStringLiteral("runStatus"));
        QVERIFY(status);
        QList<QPair<QString, QString>> seenAndExpected;
        connect(window.ladderRunner(), &ui::LadderRunner::stepStarted, this, [&](int index, int, const QString&) {
            if (index == 0) return;
            const QString expected = QString("Running run %1").arg(window.ladderRunner()->runIds().value(index));
            QTimer::singleShot(0, this, [&, expected] { seenAndExpected.append({status->text(), expected}); });
        });
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QCOMPARE(seenAndExpected.size(), 2);
        for (const auto& [seen, expected] : seenAndExpected) QCOMPARE(seen, expected);
        QCOMPARE(window.currentTab(), ui::MainWindow::Tab::Compare);
        QTRY_COMPARE(window.compareView()->runIds().size(), 3);
    }
};

QTEST_MAIN(TestLadderRunner)
#include "test_ladder_runner.moc"
