// The database file itself: pragmas, migrations, and clear refusals (newer schema, foreign
// file, read-only folder, full disk) that never damage what is already stored.
#include "RawDb.h"
#include "StoreTestEvents.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "storage/Schema.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace hearth;
using namespace hearth::testing;

namespace {

std::string readBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

// The StoreError message of `open`, or "" when it succeeds.
template <typename F>
std::string errorOf(F&& open) {
    try {
        open();
    } catch (const StoreError& e) {
        return e.what();
    }
    return {};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class StoreSchemaTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    std::string path(const char* name) { return dir_.filePath(name).toStdString(); }

private Q_SLOTS:
    void newDatabaseUsesWalAndLatestSchema();
    void migrationsAreNumberedInOrder();
    void v1DatabaseIsUpgradedKeepingRuns();
    void ranksStoredBeforeV10ReadAsNotMeasured();
    void newerSchemaIsRefusedAndFileUntouched();
    void foreignFileIsRefusedNamingPath();
    void readOnlyFolderGivesClearError();
    void fullDiskFailsRunAndKeepsStoredRows();
};

void StoreSchemaTest::newDatabaseUsesWalAndLatestSchema() {
    const std::string db = path("nested/folder/new.sqlite");   // folders are created
    { RunStore store(db); }
    RawDb raw(db);
    QCOMPARE(raw.text("PRAGMA journal_mode"), std::string("wal"));
    QCOMPARE(raw.integer("PRAGMA user_version"), static_cast<long long>(RunStore::schemaVersion()));
    QCOMPARE(RunStore::schemaVersion(), 10);
    // Reading one run's curve goes through the (run_id, block) key, not a table scan.
    const std::string detail = raw.plan("SELECT data FROM step_metrics WHERE run_id = 1 ORDER BY block");
    QVERIFY2(contains(detail, "USING INDEX") || contains(detail, "PRIMARY KEY"), detail.c_str());
}

void StoreSchemaTest::migrationsAreNumberedInOrder() {
    const auto& list = schema::migrations();
    QVERIFY(list.size() >= 2);
    for (size_t i = 0; i < list.size(); ++i) QCOMPARE(list[i].version, static_cast<int>(i + 1));
    QCOMPARE(schema::latestVersion(), RunStore::schemaVersion());
}

void StoreSchemaTest::v1DatabaseIsUpgradedKeepingRuns() {
    const std::string db = path("v1.sqlite");
    {
        // What Hearth's first release wrote: the v1 DDL, kept verbatim in the migration list.
        RawDb raw(db);
        raw.exec("PRAGMA journal_mode = WAL");
        raw.exec(std::string("BEGIN;") + schema::migrations()[0].sql + "PRAGMA user_version = 1; COMMIT;");
        raw.exec("INSERT INTO runs (id, name, status, started_at, finished_at, best_val_acc) "
                 "VALUES (1, 'old-run', 'completed', 1600000000, 1600000100, 0.9)");
        raw.exec("INSERT INTO tags VALUES (1, 'legacy')");
        raw.exec("INSERT INTO epoch_metrics VALUES (1, 0, 10, 1, 0.5, 0.9, 0.8, 0.001, 5, 100, 0.1, 0, 1)");
        QVERIFY(raw.text("SELECT name FROM sqlite_master WHERE name = 'sweeps'").empty());
    }
    RunStore store(db);
    const auto run = store.run(1);
    QVERIFY(run.has_value());
    QCOMPARE(run->name, std::string("old-run"));
    QCOMPARE(run->tags, std::vector<std::string>{"legacy"});
    QVERIFY(!run->sweep_id.has_value());
    QCOMPARE(store.epochs(1).size(), size_t{1});
    // A v1 epoch has no breakdown: it reads as "not profiled", not as zero-time parts.
    QCOMPARE(store.epochs(1)[0].breakdown.profiled, int64_t{0});
    QCOMPARE(store.epochs(1)[0].val_accuracy, 0.8);
    QVERIFY(!store.memoryBreakdown(1).has_value());
    QCOMPARE(run->stop_reason, std::string());   // v5: no stop reason for an old run
    QVERIFY(!run->tflops && !run->mfu);            // v6: an old run's FLOPs are unknown
    {
        RawDb raw(db);
        QCOMPARE(raw.integer("PRAGMA user_version"), static_cast<long long>(RunStore::schemaVersion()));
        // v7, v8: run_memory has the CUDA graph and offloaded-optimizer columns (0 for every older row).
        QCOMPARE(raw.integer("SELECT count(*) FROM pragma_table_info('run_memory') WHERE name = 'cuda_graph_bytes'"), 1LL);
        QCOMPARE(raw.integer("SELECT count(*) FROM pragma_table_info('run_memory') WHERE name = 'offloaded_bytes'"), 1LL);
        QCOMPARE(raw.text("SELECT name FROM sqlite_master WHERE name = 'sweeps'"), std::string("sweeps"));
        QCOMPARE(raw.text("SELECT name FROM sqlite_master WHERE name = 'run_ranks'"), std::string("run_ranks"));
        QCOMPARE(raw.text("SELECT name FROM sqlite_master WHERE name = 'run_memory'"), std::string("run_memory"));
        QCOMPARE(raw.text("PRAGMA integrity_check"), std::string("ok"));
    }
    // The v2 features work on the upgraded file.
    RunWriter writer(db);
    const int64_t sweep = writer.createSweep("lr-grid", "grid");
    const int64_t id = writer.createRun("in-sweep", "{}", sweep);
    writer.flush();
    const auto swept = store.run(id);
    QCOMPARE(*swept->sweep_id, sweep);
    QCOMPARE(swept->sweep_name, std::string("lr-grid"));
    // v9: a sweep's plan, and each run's step and repeat in it (-1 where none was recorded).
    const int64_t ladder = writer.createSweep("ladder", "ladder", R"({"repeats":2})");
    const int64_t a = writer.createRun("a", "{}", ladder);
    const int64_t b = writer.createRun("b", "{}", ladder);
    const int64_t c = writer.createRun("c", "{}", ladder);
    writer.addSweepRun(ladder, a, 0, 0);
    writer.addSweepRun(ladder, b, 1, 0);
    writer.flush();
    const auto record = store.sweep(ladder);
    QVERIFY(record.has_value());
    QCOMPARE(record->plan_json, std::string(R"({"repeats":2})"));
    QCOMPARE(record->kind, std::string("ladder"));
    QCOMPARE(record->runs.size(), size_t{3});
    QCOMPARE(record->runs[1].run_id, b);
    QCOMPARE(record->runs[1].step, int64_t{1});
    QCOMPARE(record->runs[2].run_id, c);
    QCOMPARE(record->runs[2].step, int64_t{-1});
    QCOMPARE(store.sweep(sweep)->plan_json, std::string());   // a sweep made before v9's plans
    QVERIFY(!store.sweep(12345).has_value());
    // Deleting a run takes its place in the sweep with it.
    store.deleteRun(a);
    QCOMPARE(store.sweep(ladder)->runs.size(), size_t{2});
    {
        RawDb raw(db);
        QCOMPARE(raw.integer("SELECT count(*) FROM sweep_runs"), 1LL);
    }
}

// A rank row as Hearth wrote it at v9 (no gradients or optimizer state per rank): -1 after the
// upgrade, which the report shows as "-" rather than as a rank that held nothing.
void StoreSchemaTest::ranksStoredBeforeV10ReadAsNotMeasured() {
    const std::string db = path("v9.sqlite");
    {
        RawDb raw(db);
        raw.exec("PRAGMA journal_mode = WAL");
        std::string sql = "BEGIN;";
        for (const auto& m : schema::migrations())
            if (m.version <= 9) sql += m.sql;
        raw.exec(sql + "PRAGMA user_version = 9; COMMIT;");
        raw.exec("INSERT INTO runs (id, name, status, started_at) VALUES (1, 'ddp-run', 'completed', 1600000000)");
        raw.exec("INSERT INTO run_ranks VALUES (1, 1, 2, 'gloo', 'cpu', 42, 1500, 3.0, 500.0, 0.5, 2097152, '', 10, 10, "
                 "1.5, 0.5)");
    }
    RunStore store(db);
    const auto ranks = store.ranks(1);
    QCOMPARE(ranks.size(), size_t{1});
    QCOMPARE(ranks[0].peak_memory_bytes, int64_t{2097152});
    QCOMPARE(ranks[0].gradients_bytes, int64_t{-1});
    QCOMPARE(ranks[0].optimizer_state_bytes, int64_t{-1});
}

void StoreSchemaTest::newerSchemaIsRefusedAndFileUntouched() {
    const std::string db = path("newer.sqlite");
    {
        RunWriter writer(db);
        writer.createRun("from-the-future", "{}");
    }
    {
        // As a future release might leave it: rollback journal, so that enabling WAL (or any
        // write) before the version check would change the header bytes compared below.
        RawDb raw(db);
        raw.exec("PRAGMA journal_mode = DELETE");
        raw.exec("PRAGMA user_version = " + std::to_string(RunStore::schemaVersion() + 1));
    }
    QVERIFY(!std::filesystem::exists(db + "-wal"));   // the last close checkpointed everything
    const std::string before = readBytes(db);
    QVERIFY(before.size() > 1000);

    const std::string store_error = errorOf([&] { RunStore store(db); });
    const std::string newer = std::to_string(RunStore::schemaVersion() + 1);
    QVERIFY2(contains(store_error, "was written by a newer Hearth (schema " + newer + "; this build reads up to " +
                                       std::to_string(RunStore::schemaVersion()) + ")"),
             store_error.c_str());
    QVERIFY2(contains(store_error, db), store_error.c_str());
    const std::string writer_error = errorOf([&] { RunWriter writer(db); });
    QVERIFY2(contains(writer_error, "newer Hearth"), writer_error.c_str());

    QVERIFY(readBytes(db) == before);
    RawDb raw(db);
    QCOMPARE(raw.integer("PRAGMA user_version"), static_cast<long long>(RunStore::schemaVersion() + 1));
    QCOMPARE(raw.integer("SELECT count(*) FROM runs"), 1LL);
}

void StoreSchemaTest::foreignFileIsRefusedNamingPath() {
    const std::string db = path("notes.txt");
    std::string content;
    for (int i = 0; i < 200; ++i) content += "These are my notes, not a database.\n";
    std::ofstream(db, std::ios::binary) << content;
    const std::string error = errorOf([&] { RunStore store(db); });
    QVERIFY2(contains(error, db), error.c_str());
    QVERIFY2(contains(error, "not a SQLite database"), error.c_str());
    QVERIFY(readBytes(db) == content);

    const std::string folder = path("a-folder.sqlite");
    std::filesystem::create_directories(folder);
    QVERIFY2(contains(errorOf([&] { RunWriter writer(folder); }), "is a folder"), "a folder is refused");
}

void StoreSchemaTest::readOnlyFolderGivesClearError() {
    // Root ignores permission bits, so the attempt runs in a child that drops to 'nobody'.
    const std::filesystem::path base = path("ro");
    const std::filesystem::path locked = base / "locked";
    std::filesystem::create_directories(locked);
    std::filesystem::permissions(dir_.path().toStdString(), std::filesystem::perms::owner_all |
                                 std::filesystem::perms::group_read | std::filesystem::perms::group_exec |
                                 std::filesystem::perms::others_read | std::filesystem::perms::others_exec);
    std::filesystem::permissions(base, std::filesystem::perms(0755));
    std::filesystem::permissions(locked, std::filesystem::perms(0555));
    const std::string db = (locked / "runs.sqlite").string();

    int fds[2];
    QCOMPARE(pipe(fds), 0);
    const pid_t child = fork();
    QVERIFY(child >= 0);
    if (child == 0) {
        close(fds[0]);
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
        const std::string message = errorOf([&] { RunStore store(db); });
        const auto written = write(fds[1], message.data(), message.size());
        _exit(written == static_cast<ssize_t>(message.size()) ? 0 : 4);
    }
    close(fds[1]);
    std::string message;
    char buffer[512];
    for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    QVERIFY2(contains(message, "read-only"), message.c_str());
    QVERIFY2(contains(message, locked.string()), message.c_str());
    QVERIFY(!std::filesystem::exists(db));
}

void StoreSchemaTest::fullDiskFailsRunAndKeepsStoredRows() {
    const std::string db = path("full.sqlite");
    RunWriter writer(db);
    const int64_t kept = writer.createRun("kept", "{}");
    for (int64_t i = 0; i < 3000; ++i) writer.enqueue(kept, stepEvent(i));
    writer.enqueue(kept, finishedEvent());
    const int64_t id = writer.createRun("overflowing", "{}");
    for (int64_t i = 0; i < 500; ++i) writer.enqueue(id, stepEvent(i));
    writer.enqueue(id, epochEvent(0, 0.5));   // forces a commit: these 500 steps are stored
    writer.flush();
    QVERIFY(writer.lastError().empty());

    const long long pages = RawDb(db).integer("PRAGMA page_count");
    writer.limitDatabasePages(pages + 4);
    writer.enqueue(id, predictionsEvent("test", 60000));   // needs far more than 4 pages
    for (int64_t i = 500; i < 600; ++i) writer.enqueue(id, stepEvent(i));
    writer.flush();
    const std::string error = writer.lastError();
    QVERIFY2(contains(error, "is full"), error.c_str());
    QVERIFY2(contains(error, db), error.c_str());

    // Later events of the failed run are dropped without new errors or damage.
    writer.enqueue(id, LogLine{LogLine::Level::Info, "after the failure"});
    writer.flush();

    RunStore store(db);
    const auto run = store.run(id);
    QCOMPARE(run->status, std::string("failed"));
    QCOMPARE(run->failure_kind, std::string("storage"));
    QVERIFY2(contains(run->failure_message, "is full"), run->failure_message.c_str());
    QCOMPARE(store.steps(id).size(), size_t{500});
    QVERIFY(store.predictions(id, "test").empty());
    QVERIFY(store.logLines(id).empty());
    QCOMPARE(store.steps(kept).size(), size_t{3000});
    QCOMPARE(store.run(kept)->status, std::string("completed"));
    QCOMPARE(RawDb(db).text("PRAGMA integrity_check"), std::string("ok"));
}

QTEST_GUILESS_MAIN(StoreSchemaTest)
#include "test_store_schema.moc"
