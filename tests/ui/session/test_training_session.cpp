// TrainingSession never waits on the database: while another connection holds the store's write
// lock, starting a run and ending one leave the GUI thread's event loop running, and the run's
// row (or its final commit) follows once the lock is released. A store that refuses the run
// says so through startFailed; a run whose store fails mid-way ends as the row says: failed.
#include "RawDb.h"
#include "UiTestSupport.h"

#include "storage/RunStore.h"
#include "ui/session/TrainingSession.h"

#include <QSignalSpy>
#include <QTest>

using namespace hearth;

class TestTrainingSession : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    int m_count = 0;
    QString freshDb() { return m_dir.filePath(QStringLiteral("session%1.sqlite").arg(++m_count)); }

private Q_SLOTS:
    void initTestCase() { test::isolateSettings(m_dir); }

    void startDoesNotWaitForALockedStore()
    {
        const QString db = freshDb();
        ui::TrainingSession session(db);
        QSignalSpy started(&session, &ui::TrainingSession::runStarted);
        QSignalSpy ended(&session, &ui::TrainingSession::runEnded);
        testing::RawDb other(db.toStdString());
        other.exec("BEGIN IMMEDIATE");   // another process holds the write lock

        QElapsedTimer clock;
        clock.start();
        QString error;
        QVERIFY2(session.start(test::tinyExperiment("patient"), &error), qPrintable(error));
        QVERIFY2(clock.elapsed() < 500, qPrintable(QString("start() took %1 ms").arg(clock.elapsed())));
        QVERIFY(session.isRunning());

        test::EventLoopProbe probe;
        QTest::qWait(1500);
        QVERIFY2(probe.ticks() >= 20, qPrintable(QString("%1 timer ticks in 1.5 s").arg(probe.ticks())));
        QVERIFY2(probe.longestGapMs() < 500, qPrintable(QString("event loop stalled %1 ms").arg(probe.longestGapMs())));
        QCOMPARE(started.count(), 0);   // the row cannot exist yet
        QCOMPARE(session.currentRunId(), qint64(0));

        other.exec("COMMIT");
        QTRY_COMPARE_WITH_TIMEOUT(started.count(), 1, 20000);
        QVERIFY(session.currentRunId() > 0);
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 120000);
        QCOMPARE(ended.at(0).at(1).value<hearth::RunStatus>(), hearth::RunStatus::Completed);
        QCOMPARE(RunStore(db.toStdString()).run(session.currentRunId())->status, std::string("completed"));
    }

    // The engine has finished, but the store cannot commit its last events yet: runEnded waits
    // for the commit, the window does not.
    void runEndDoesNotWaitForALockedStore()
    {
        const QString db = freshDb();
        ui::TrainingSession session(db);
        QSignalSpy started(&session, &ui::TrainingSession::runStarted);
        QSignalSpy ended(&session, &ui::TrainingSession::runEnded);
        bool finishedSeen = false;
        connect(&session, &ui::TrainingSession::eventsReady, this, [&](const ui::EventBatch& batch) {
            for (const auto& e : batch)
                finishedSeen = finishedSeen || std::holds_alternative<hearth::RunFinished>(e);
        });
        QVERIFY(session.start(test::tinyExperiment("ends-under-lock")));
        QTRY_COMPARE_WITH_TIMEOUT(started.count(), 1, 20000);
        const qint64 runId = session.currentRunId();
        testing::RawDb other(db.toStdString());
        other.exec("BEGIN IMMEDIATE");

        QTRY_VERIFY_WITH_TIMEOUT(finishedSeen, 120000);   // the engine is done
        test::EventLoopProbe probe;
        QTest::qWait(1000);
        QVERIFY2(probe.longestGapMs() < 500, qPrintable(QString("event loop stalled %1 ms").arg(probe.longestGapMs())));
        QCOMPARE(ended.count(), 0);          // not before the store has the whole run
        QVERIFY(session.isRunning());
        QCOMPARE(RunStore(db.toStdString()).run(runId)->status, std::string("running"));

        other.exec("COMMIT");
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 20000);
        QVERIFY(!session.isRunning());
        QCOMPARE(RunStore(db.toStdString()).run(runId)->status, std::string("completed"));
    }

    // The child trains on, but the store refuses its epochs: the window shows the run as failed
    // with the store's message, as the row says, never "completed".
    void aRunWhoseWriterFailsEndsShownAsFailedWithTheMessage()
    {
        const QString db = freshDb();
        ui::TrainingSession session(db);
        testing::RawDb(db.toStdString())
            .exec("CREATE TRIGGER full_disk BEFORE INSERT ON epoch_metrics BEGIN "
                  "SELECT RAISE(ABORT, 'database or disk is full (test)'); END");
        QSignalSpy ended(&session, &ui::TrainingSession::runEnded);
        QSignalSpy started(&session, &ui::TrainingSession::runStarted);
        QVERIFY(session.start(test::tinyExperiment("writer-fails")));
        QTRY_COMPARE_WITH_TIMEOUT(started.count(), 1, 30000);
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 120000);
        QCOMPARE(ended.at(0).at(1).value<hearth::RunStatus>(), hearth::RunStatus::Failed);
        const QString message = ended.at(0).at(2).toString();
        QVERIFY2(message.contains(QStringLiteral("database or disk is full (test)")), qPrintable(message));
        const auto row = RunStore(db.toStdString()).run(session.currentRunId());
        QCOMPARE(row->status, std::string("failed"));
        QCOMPARE(QString::fromStdString(row->failure_message), message);
    }

    void aStoreThatRefusesTheRunSaysWhy()
    {
        const QString db = freshDb();
        ui::TrainingSession session(db);
        testing::RawDb(db.toStdString())
            .exec("CREATE TRIGGER refuse BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'no new runs today'); END");
        QSignalSpy failed(&session, &ui::TrainingSession::startFailed);
        QSignalSpy running(&session, &ui::TrainingSession::runningChanged);
        QSignalSpy started(&session, &ui::TrainingSession::runStarted);
        QVERIFY(session.start(test::tinyExperiment("refused")));
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        const QString message = failed.at(0).at(0).toString();
        QVERIFY2(message.contains(QStringLiteral("no new runs today")), qPrintable(message));
        QVERIFY2(message.contains(db), qPrintable(message));
        QCOMPARE(started.count(), 0);
        QVERIFY(!session.isRunning());
        QCOMPARE(running.count(), 2);   // true at start(), false with the failure
        QVERIFY(!running.at(1).at(0).toBool());
        QVERIFY(session.start(test::tinyExperiment("again")));   // nothing is left half-started
    }
};

QTEST_MAIN(TestTrainingSession)
#include "test_training_session.moc"
