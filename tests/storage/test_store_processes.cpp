// Several processes on one database: concurrent writers never see "database is locked", and a
// writer killed mid-run leaves a sound database with its committed steps and an interrupted run.
#include "RawDb.h"
#include "storage/RunStore.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace hearth;
using namespace hearth::testing;

class StoreProcessesTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;

private Q_SLOTS:
    void twoProcessesWriteAtOnceWithoutLocking();
    void killedWriterKeepsCommittedStepsAndIsInterrupted();
};

void StoreProcessesTest::twoProcessesWriteAtOnceWithoutLocking() {
    const std::string db = dir_.filePath("shared.sqlite").toStdString();
    // Both start on a database that does not exist yet: creation and migration race too.
    // Both open the store, then wait for one go signal, so that their writes overlap even when a
    // loaded machine starts the second process late.
    const QString go = dir_.filePath("go");
    QProcess first, second;
    const QStringList args{"write", QString::fromStdString(db), "3", "2000", go};
    first.start(HEARTH_STORE_CHILD_PATH, args);
    second.start(HEARTH_STORE_CHILD_PATH, args);
    for (QProcess* p : {&first, &second}) {
        QVERIFY(p->waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(p->canReadLine() || p->state() == QProcess::NotRunning, 60000);
        QCOMPARE(p->readLine().trimmed(), QByteArray("ready"));
    }
    QFile(go).open(QIODevice::WriteOnly);
    QVERIFY(first.waitForFinished(120000));
    QVERIFY(second.waitForFinished(120000));
    const QByteArray errors = first.readAllStandardError() + second.readAllStandardError();
    QVERIFY2(!errors.contains("locked"), errors.constData());
    QCOMPARE(first.exitCode(), 0);
    QCOMPARE(second.exitCode(), 0);

    RunStore store(db);
    const auto runs = store.listRuns();
    QCOMPARE(runs.size(), size_t{6});
    for (const auto& run : runs) {
        QCOMPARE(run.status, std::string("completed"));
        QCOMPARE(store.steps(run.id).size(), size_t{2000});
        QCOMPARE(store.epochs(run.id).size(), size_t{4});
    }
    QCOMPARE(RawDb(db).text("PRAGMA integrity_check"), std::string("ok"));

    // The two writers really overlapped: some run of one was open while a run of the other was.
    bool overlapped = false;
    for (const auto& a : runs)
        for (const auto& b : runs)
            overlapped = overlapped || (a.pid != b.pid && a.started_at < b.finished_at && b.started_at < a.finished_at);
    QVERIFY(overlapped);
}

void StoreProcessesTest::killedWriterKeepsCommittedStepsAndIsInterrupted() {
    const std::string db = dir_.filePath("killed.sqlite").toStdString();
    QProcess child;
    child.start(HEARTH_STORE_CHILD_PATH, {"stream", QString::fromStdString(db)});
    QVERIFY(child.waitForStarted());

    int64_t run_id = 0;
    int64_t enqueued = 0;
    QElapsedTimer since_mark;
    int64_t mark = 0;   // steps enqueued more than a second before the kill
    QElapsedTimer timeout;
    timeout.start();
    while (timeout.elapsed() < 60000) {
        if (!child.canReadLine() && !child.waitForReadyRead(1000)) continue;
        while (child.canReadLine()) {
            const QByteArray line = child.readLine().trimmed();
            if (line.startsWith("run ")) run_id = line.mid(4).toLongLong();
            if (line.startsWith("enqueued ")) enqueued = line.mid(9).toLongLong();
        }
        if (mark == 0 && enqueued >= 300) {
            mark = enqueued;
            since_mark.start();
        }
        // The writer promises a commit at least once a second: 1.3 s after `mark` was
        // enqueued, those steps are on disk whatever happens next.
        if (mark > 0 && since_mark.elapsed() >= 1300) break;
    }
    QVERIFY(run_id > 0);
    QVERIFY(mark > 0);
    child.kill();   // SIGKILL: no destructor, no final commit
    QVERIFY(child.waitForFinished());
    QCOMPARE(child.exitStatus(), QProcess::CrashExit);

    QCOMPARE(RawDb(db).text("PRAGMA integrity_check"), std::string("ok"));
    RunStore store(db);
    const auto run = store.run(run_id);
    QVERIFY(run.has_value());
    QCOMPARE(run->status, std::string("interrupted"));
    const auto steps = store.steps(run_id);
    QVERIFY2(static_cast<int64_t>(steps.size()) >= mark,
             qPrintable(QString("%1 steps stored, %2 enqueued > 1 s before the kill").arg(steps.size()).arg(mark)));
    for (size_t i = 0; i < steps.size(); ++i) QCOMPARE(steps[i].global_step, static_cast<int64_t>(i + 1));
}

QTEST_GUILESS_MAIN(StoreProcessesTest)
#include "test_store_processes.moc"
