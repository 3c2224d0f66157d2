// Every job the workbench starts runs in a child hearth-cli, never in the window's process: a run,
// a resume, a ladder step and both finders. Each is seen as a child process while it works; each
// run names its id from the child and its stored row carries the child's pid; and the window's
// process begins no training job at all (trainingJobsInThisProcess).
#include "UiTestSupport.h"

#include "engine/run/RunController.h"
#include "storage/RunStore.h"
#include "ui/session/DeviceProbe.h"
#include "ui/session/LadderRunner.h"
#include "ui/session/TrainingSession.h"
#include "ui/tune/FinderRunner.h"

#include <QCoreApplication>
#include <QSignalSpy>
#include <QTest>

using namespace hearth;

class TestJobsInChildren : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString db() const { return m_dir.filePath(QStringLiteral("jobs.sqlite")); }
    static qint64 self() { return QCoreApplication::applicationPid(); }

    // The job's process while it runs: a child, not this process.
    static bool runsInAChild(qint64 pid) { return pid > 0 && pid != self(); }

private Q_SLOTS:
    void initTestCase()
    {
        test::isolateSettings(m_dir);
        // Ladders are planned for the probed devices.
        QTRY_VERIFY_WITH_TIMEOUT(ui::DeviceProbe::instance().isReady(), 30000);
    }

    void aRunAndItsResumeRunInChildren() {
        ui::TrainingSession session(db());
        QSignalSpy started(&session, &ui::TrainingSession::runStarted);
        QSignalSpy ended(&session, &ui::TrainingSession::runEnded);
        QSignalSpy startFailed(&session, &ui::TrainingSession::startFailed);
        bool stepSeen = false;
        connect(&session, &ui::TrainingSession::eventsReady, this, [&](const ui::EventBatch& batch) {
            for (const auto& e : batch) stepSeen = stepSeen || std::holds_alternative<StepMetrics>(e);
        });
        auto config = test::tinyExperiment("in-a-child");
        config.data.limit = 4000;
        config.trainer.max_epochs = 3;
        // The stop below lands wherever the child is by then (a step, a validation pass): it saves a
        // training state there either way (no timed one is due in so short a run).
        QString error;
        QVERIFY2(session.start(config, &error), qPrintable(error));
        const qint64 runPid = session.jobProcessId();
        QVERIFY(runsInAChild(runPid));
        QTRY_COMPARE_WITH_TIMEOUT(started.count(), 1, 30000);
        const qint64 runId = session.currentRunId();
        QVERIFY(runId > 0);
        QTRY_VERIFY_WITH_TIMEOUT(stepSeen, 60000);
        session.stop();
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 60000);
        QCOMPARE(ended.at(0).at(1).value<RunStatus>(), RunStatus::Stopped);
        QCOMPARE(RunStore(db().toStdString()).run(runId)->pid, static_cast<int64_t>(runPid));

        QVERIFY2(session.resume(runId, QStringLiteral("in-a-child"), &error), qPrintable(error));
        const qint64 resumePid = session.jobProcessId();
        QVERIFY(runsInAChild(resumePid));
        QVERIFY(resumePid != runPid);
        // The child reports the run once it has read the store and the saved state: on a machine
        // busy with other tests' trainings that can take a while. A resume that failed says why.
        QTRY_VERIFY_WITH_TIMEOUT(started.count() == 2 || ended.count() == 2 || !startFailed.isEmpty(), 120000);
        if (!startFailed.isEmpty())
            QFAIL(qPrintable(QStringLiteral("the resume did not start: ") + startFailed.at(0).at(0).toString()));
        if (started.count() < 2)
            QFAIL(qPrintable(QStringLiteral("the resume ended before it started: ") + ended.at(1).at(2).toString()));
        QCOMPARE(started.at(1).at(0).toLongLong(), runId);   // the child named the run it reopened
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 2, 180000);
        QCOMPARE(ended.at(1).at(1).value<RunStatus>(), RunStatus::Completed);
        const auto row = RunStore(db().toStdString()).run(runId);
        QCOMPARE(row->status, std::string("completed"));
        QCOMPARE(row->pid, static_cast<int64_t>(resumePid));
        QCOMPARE(trainingJobsInThisProcess(), int64_t{0});
    }

    void eachLadderStepRunsInItsOwnChild() {
        ui::TrainingSession session(db());
        ui::LadderRunner ladder(&session);
        QSignalSpy finished(&ladder, &ui::LadderRunner::finished);
        QList<qint64> pids;
        connect(&ladder, &ui::LadderRunner::stepStarted, this,
                [&](int, int, const QString&) { pids << session.jobProcessId(); });
        QString error;
        QVERIFY2(ladder.start(test::tinyExperiment("ladder-children"), std::nullopt, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QVERIFY(finished.at(0).at(1).toBool());
        const auto runIds = finished.at(0).at(0).value<QList<qint64>>();
        QCOMPARE(pids.size(), runIds.size());
        RunStore store(db().toStdString());
        for (int i = 0; i < runIds.size(); ++i) {
            QVERIFY(runsInAChild(pids[i]));
            QCOMPARE(store.run(runIds[i])->pid, static_cast<int64_t>(pids[i]));   // the step's own process
            if (i > 0) QVERIFY(pids[i] != pids[i - 1]);
        }
        QCOMPARE(trainingJobsInThisProcess(), int64_t{0});
    }

    void bothFindersRunInChildren() {
        ui::FinderRunner runner;
        QSignalSpy finished(&runner, &ui::FinderRunner::finished);
        QSignalSpy trials(&runner, &ui::FinderRunner::trialsChanged);
        LrFinderOptions lr;
        lr.steps = 20;
        QVERIFY(runner.startLearningRate(test::tinyExperiment("lr-child"), lr));
        QVERIFY(runsInAChild(runner.processId()));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
        QVERIFY2(runner.errorMessage().isEmpty(), qPrintable(runner.errorMessage()));
        QVERIFY(runner.lrResult().has_value());
        QCOMPARE(runner.lrResult()->points.size(), size_t{20});
        QVERIFY(runner.lrResult()->suggestion.has_value());

        BatchSizeFinderOptions batch;
        batch.memory_limit_bytes = int64_t{8} << 30;
        batch.max_batch = 64;
        batch.steps_per_trial = 1;
        QVERIFY(runner.startBatchSize(test::tinyExperiment("batch-child"), batch));
        QVERIFY(runsInAChild(runner.processId()));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 120000);
        QVERIFY2(runner.errorMessage().isEmpty(), qPrintable(runner.errorMessage()));
        QVERIFY(runner.batchSizeResult().has_value());
        QCOMPARE(runner.batchSizeResult()->batch_size, int64_t{64});   // bounded by max_batch: 2, 4, ..., 64
        QVERIFY(trials.count() >= 6);
        QCOMPARE(runner.trials().size(), runner.batchSizeResult()->trials.size());
        QCOMPARE(trainingJobsInThisProcess(), int64_t{0});
    }

    // A finder whose child fails says why, in the child's words.
    void aFinderThatCannotRunSaysWhy() {
        ui::FinderRunner runner;
        QSignalSpy finished(&runner, &ui::FinderRunner::finished);
        auto config = test::tinyExperiment("no-data");
        config.data.path = m_dir.filePath(QStringLiteral("missing")).toStdString();
        QVERIFY(runner.startLearningRate(config, LrFinderOptions{}));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QVERIFY2(runner.errorMessage().contains(QStringLiteral("missing")), qPrintable(runner.errorMessage()));
        QVERIFY(!runner.lrResult().has_value());
    }
};

QTEST_MAIN(TestJobsInChildren)
#include "test_jobs_in_children.moc"
