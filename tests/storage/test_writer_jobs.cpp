// RunWriter jobs: database work run on the writer thread with its connection, after the events
// enqueued before it, whose value or error message always comes back without the caller waiting.
#include "RawDb.h"
#include "StoreTestEvents.h"
#include "storage/RunEdits.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "storage/Sqlite.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

using namespace hearth;
using namespace hearth::testing;
using namespace std::chrono_literals;

class WriterJobsTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    int counter_ = 0;
    std::string freshPath() { return dir_.filePath(QString("jobs%1.sqlite").arg(++counter_)).toStdString(); }

private Q_SLOTS:
    void jobRunsOnTheWriterThreadAfterEarlierEvents() {
        const std::string path = freshPath();
        RunWriter writer(path);
        const int64_t id = writer.createRun("steps", "{}");
        for (int64_t i = 0; i < 300; ++i) writer.enqueue(id, stepEvent(i));   // no commit forced yet
        auto steps = writer.submit([id](sqlite::Connection& db) {
            return std::make_pair(db.queryInt("SELECT global_steps FROM runs WHERE id = " + std::to_string(id)),
                                  std::this_thread::get_id());
        });
        QCOMPARE(steps.wait_for(5s), std::future_status::ready);
        const auto [stored, thread] = steps.get();
        QCOMPARE(stored, int64_t{300});   // the job saw every step enqueued before it
        QVERIFY(thread != std::this_thread::get_id());
    }

    void editsAsJobsReachTheStore() {
        const std::string path = freshPath();
        RunWriter writer(path);
        const int64_t sweep = writer.submit([](sqlite::Connection& db) { return runedits::createSweep(db, "s", "ladder"); }).get();
        const int64_t id = writer.submit([sweep](sqlite::Connection& db) {
            return runedits::createRun(db, "job-run", R"({"name":"job-run"})", sweep);
        }).get();
        writer.submit([id](sqlite::Connection& db) {
            runedits::rename(db, id, "renamed");
            runedits::setTags(db, id, {"b", "a", "b"});
            runedits::setNotes(db, id, "note");
        }).get();
        const auto run = RunStore(path).run(id);
        QVERIFY(run);
        QCOMPARE(run->name, std::string("renamed"));
        QCOMPARE(run->status, std::string("running"));
        QCOMPARE(run->tags, (std::vector<std::string>{"a", "b"}));
        QCOMPARE(run->notes, std::string("note"));
        QCOMPARE(*run->sweep_id, sweep);
        writer.submit([id](sqlite::Connection& db) { runedits::deleteRun(db, id); }).get();
        QVERIFY(!RunStore(path).run(id));
    }

    void jobErrorComesBackAsTheStoreMessage() {
        const std::string path = freshPath();
        RunWriter writer(path);
        std::promise<JobResult<void>> delivered;
        writer.submit([](sqlite::Connection& db) { runedits::rename(db, 4242, "nobody"); },
                      [&delivered](JobResult<void> result) { delivered.set_value(std::move(result)); });
        auto future = delivered.get_future();
        QCOMPARE(future.wait_for(5s), std::future_status::ready);
        const JobResult<void> result = future.get();
        QVERIFY(!result.ok());
        QVERIFY2(result.error.find("No run #4242") != std::string::npos, result.error.c_str());

        std::promise<JobResult<int64_t>> value;
        writer.submit([](sqlite::Connection&) -> int64_t { throw StoreError("Disk on fire."); },
                      [&value](JobResult<int64_t> r) { value.set_value(std::move(r)); });
        const auto failed = value.get_future().get();
        QVERIFY(!failed.value);
        QCOMPARE(failed.error, std::string("Disk on fire."));

        auto thrown = writer.submit([](sqlite::Connection& db) { runedits::setNotes(db, 4242, "x"); });
        QVERIFY_THROWS_EXCEPTION(StoreError, thrown.get());
    }

    // Another process holds the write lock: submitting returns at once, the job waits on the
    // writer thread, and its result arrives once the lock is released.
    void submitDoesNotWaitForALockedDatabase() {
        const std::string path = freshPath();
        RunWriter writer(path);
        RawDb other(path);
        other.exec("BEGIN IMMEDIATE");
        QElapsedTimer timer;
        timer.start();
        std::atomic<bool> done{false};
        std::promise<JobResult<int64_t>> delivered;
        writer.submit([](sqlite::Connection& db) { return runedits::createRun(db, "patient", "{}"); },
                      [&](JobResult<int64_t> r) {
                          done = true;
                          delivered.set_value(std::move(r));
                      });
        QVERIFY2(timer.elapsed() < 200, qPrintable(QString("submit took %1 ms").arg(timer.elapsed())));
        std::this_thread::sleep_for(800ms);
        QVERIFY(!done);   // still waiting for the lock
        other.exec("COMMIT");
        auto future = delivered.get_future();
        QCOMPARE(future.wait_for(15s), std::future_status::ready);
        const auto result = future.get();
        QVERIFY2(result.ok(), result.error.c_str());
        QVERIFY(*result.value > 0);
    }

    void jobsStillQueuedRunBeforeTheWriterCloses() {
        const std::string path = freshPath();
        std::mutex mutex;
        std::vector<int> order;
        {
            RunWriter writer(path);
            const int64_t id = writer.createRun("late", "{}");
            writer.enqueue(id, startedEvent("late"));
            for (int i = 0; i < 5; ++i)
                writer.submit([i](sqlite::Connection& db) { return runedits::createSweep(db, "s" + std::to_string(i), "x") > 0 ? i : -1; },
                              [&](JobResult<int> r) {
                                  std::lock_guard lock(mutex);
                                  order.push_back(r.value.value_or(-1));
                              });
        }
        QCOMPARE(order, (std::vector<int>{0, 1, 2, 3, 4}));
        QCOMPARE(RawDb(path).integer("SELECT count(*) FROM sweeps"), 5LL);
    }
};

QTEST_GUILESS_MAIN(WriterJobsTest)
#include "test_writer_jobs.moc"
