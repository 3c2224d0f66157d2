#include "storage/RunEdits.h"

#include "engine/config/RunName.h"
#include "storage/BatchWriter.h"
#include "storage/ProcessIdentity.h"
#include "storage/RunStoreImpl.h"
#include "storage/Sqlite.h"
#include "storage/StepBlock.h"

#include <filesystem>

namespace hearth::runedits {
namespace {

[[noreturn]] void noSuchRun(const sqlite::Connection& db, int64_t run_id) {
    throw StoreError("No run #" + std::to_string(run_id) + " in '" + db.path() + "'.");
}

}  // namespace

int64_t createRun(sqlite::Connection& db, const std::string& name, const std::string& config_json,
                  std::optional<int64_t> sweep_id) {
    const process::Identity self = process::self();
    sqlite::Transaction tx(db);
    db.cached(R"sql(
INSERT INTO runs (name, status, started_at, pid, hostname, process_start, config_json, sweep_id)
VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7))sql")
        .bind(1, name)
        .bind(2, unixNow())
        .bind(3, self.pid)
        .bind(4, self.hostname)
        .bind(5, self.start_ticks)
        .bind(6, config_json.empty() ? std::string("{}") : config_json)
        .bind(7, sweep_id)
        .run();
    const int64_t id = sqlite3_last_insert_rowid(db.handle());
    tx.commit();
    return id;
}

std::optional<StoredStatus> storedStatus(sqlite::Connection& db, int64_t run_id) {
    sqlite::StatementUse select(db.cached("SELECT status, COALESCE(failure_message, '') FROM runs WHERE id = ?1"));
    select->bind(1, run_id);
    if (!select->step()) return std::nullopt;
    return StoredStatus{select->text(0), select->text(1)};
}

int64_t createSweep(sqlite::Connection& db, const std::string& name, const std::string& kind,
                    const std::string& plan_json) {
    sqlite::Transaction tx(db);
    db.cached("INSERT INTO sweeps (name, kind, created_at, plan_json) VALUES (?1, ?2, ?3, ?4)")
        .bind(1, name).bind(2, kind).bind(3, unixNow()).bind(4, plan_json)
        .run();
    const int64_t id = sqlite3_last_insert_rowid(db.handle());
    tx.commit();
    return id;
}

void setSweepPlan(sqlite::Connection& db, int64_t sweep_id, const std::string& plan_json) {
    sqlite::Transaction tx(db);
    db.cached("UPDATE sweeps SET plan_json = ?2 WHERE id = ?1").bind(1, sweep_id).bind(2, plan_json).run();
    tx.commit();
}

void addSweepRun(sqlite::Connection& db, int64_t sweep_id, int64_t run_id, int64_t step, int64_t repeat) {
    sqlite::Transaction tx(db);
    db.cached("INSERT OR REPLACE INTO sweep_runs (sweep_id, run_id, step, repeat) VALUES (?1, ?2, ?3, ?4)")
        .bind(1, sweep_id).bind(2, run_id).bind(3, step).bind(4, repeat)
        .run();
    tx.commit();
}

void rename(sqlite::Connection& db, int64_t run_id, const std::string& name) {
    const std::string line = oneLine(name);
    if (line.empty()) throw StoreError("A run's name cannot be blank (run #" + std::to_string(run_id) + " keeps its name).");
    sqlite::Transaction tx(db);
    db.cached("UPDATE runs SET name = ?2 WHERE id = ?1").bind(1, run_id).bind(2, line).run();
    if (sqlite3_changes(db.handle()) == 0) noSuchRun(db, run_id);
    tx.commit();
}

void setTags(sqlite::Connection& db, int64_t run_id, const std::vector<std::string>& tags) {
    sqlite::Transaction tx(db);
    {
        sqlite::StatementUse exists(db.cached("SELECT 1 FROM runs WHERE id = ?1"));
        exists->bind(1, run_id);
        if (!exists->step()) noSuchRun(db, run_id);
    }
    db.cached("DELETE FROM tags WHERE run_id = ?1").bind(1, run_id).run();
    auto& insert = db.cached("INSERT OR IGNORE INTO tags (run_id, tag) VALUES (?1, ?2)");
    for (const auto& tag : tagsFromWords(tags)) insert.bind(1, run_id).bind(2, tag).run();
    tx.commit();
}

void setNotes(sqlite::Connection& db, int64_t run_id, const std::string& notes) {
    sqlite::Transaction tx(db);
    db.cached("UPDATE runs SET notes = ?2 WHERE id = ?1").bind(1, run_id).bind(2, notes).run();
    if (sqlite3_changes(db.handle()) == 0) noSuchRun(db, run_id);
    tx.commit();
}

namespace {

// Drops the logged steps after `global_step`: later blocks go, the block holding it is cut.
void truncateSteps(sqlite::Connection& db, int64_t run_id, int64_t global_step) {
    struct Cut {
        int64_t block;
        std::vector<StepMetrics> kept;
    };
    std::vector<Cut> cuts;
    {
        sqlite::StatementUse q(db.cached(
            "SELECT block, field_count, data FROM step_metrics WHERE run_id = ?1 AND first_step <= ?2 AND "
            "last_step > ?2"));
        q->bind(1, run_id).bind(2, global_step);
        while (q->step()) {
            std::vector<StepMetrics> rows;
            stepblock::unpackAppend(q->blob(2), static_cast<size_t>(q->blobBytes(2)), static_cast<size_t>(q->int64(1)),
                                    rows);
            Cut cut{q->int64(0), {}};
            for (const auto& row : rows)
                if (row.global_step <= global_step) cut.kept.push_back(row);
            cuts.push_back(std::move(cut));
        }
    }
    db.cached("DELETE FROM step_metrics WHERE run_id = ?1 AND first_step > ?2").bind(1, run_id).bind(2, global_step)
        .run();
    for (const auto& cut : cuts) {
        const std::string data = stepblock::pack(cut.kept.data(), cut.kept.size());
        db.cached(R"sql(
UPDATE step_metrics SET last_step = ?3, row_count = ?4, field_count = ?5, data = ?6 WHERE run_id = ?1 AND block = ?2)sql")
            .bind(1, run_id)
            .bind(2, cut.block)
            .bind(3, cut.kept.back().global_step)
            .bind(4, static_cast<int64_t>(cut.kept.size()))
            .bind(5, static_cast<int64_t>(stepblock::fieldCount()))
            .bindBlob(6, data.data(), data.size())
            .run();
    }
}

}  // namespace

void reopenRun(sqlite::Connection& db, int64_t run_id, int64_t global_step, int64_t epoch, double elapsed_s) {
    sqlite::Transaction tx(db);
    {
        sqlite::StatementUse q(db.cached("SELECT status, pid, hostname, process_start FROM runs WHERE id = ?1"));
        q->bind(1, run_id);
        if (!q->step()) noSuchRun(db, run_id);
        const std::string status = q->text(0);
        const process::Identity writer{q->int64(1), q->text(2), q->int64(3)};
        const std::string run = "Run #" + std::to_string(run_id);
        if (status == "completed") throw StoreError(run + " completed: there is nothing to resume.");
        if (status == "running" && !process::isGone(writer))
            throw StoreError(run + " is still running (pid " + std::to_string(writer.pid) + " on " + writer.hostname +
                             "): stop it first.");
    }
    const process::Identity self = process::self();
    db.cached(R"sql(
UPDATE runs SET status = 'running', finished_at = NULL, pid = ?2, hostname = ?3, process_start = ?4,
    failure_kind = '', failure_message = '', stop_reason = '', test_acc = NULL, test_loss = NULL,
    train_time_s = NULL, total_time_s = NULL, samples_per_sec = NULL, tflops = NULL, mfu = NULL,
    peak_memory_bytes = NULL,
    epochs_completed = ?5, global_steps = ?6,
    best_val_acc = (SELECT MAX(val_acc) FROM epoch_metrics WHERE run_id = ?1 AND epoch < ?5)
WHERE id = ?1)sql")
        .bind(1, run_id).bind(2, self.pid).bind(3, self.hostname).bind(4, self.start_ticks).bind(5, epoch)
        .bind(6, global_step)
        .run();
    truncateSteps(db, run_id, global_step);
    db.cached("DELETE FROM epoch_metrics WHERE run_id = ?1 AND epoch >= ?2").bind(1, run_id).bind(2, epoch).run();
    db.cached("DELETE FROM reports WHERE run_id = ?1 AND split = 'test'").bind(1, run_id).run();
    db.cached("DELETE FROM predictions WHERE run_id = ?1").bind(1, run_id).run();
    db.cached("DELETE FROM run_ranks WHERE run_id = ?1").bind(1, run_id).run();
    db.cached("DELETE FROM run_memory WHERE run_id = ?1").bind(1, run_id).run();
    db.cached("DELETE FROM device_samples WHERE run_id = ?1 AND elapsed_s > ?2").bind(1, run_id).bind(2, elapsed_s)
        .run();
    tx.commit();
}

void deleteRun(sqlite::Connection& db, int64_t run_id) {
    {
        sqlite::Transaction tx(db);
        // Child rows go with ON DELETE CASCADE (foreign_keys = ON on every connection).
        db.cached("DELETE FROM runs WHERE id = ?1").bind(1, run_id).run();
        if (sqlite3_changes(db.handle()) == 0) noSuchRun(db, run_id);
        tx.commit();
    }
    // Files only after the rows are gone: a failed commit must not leave rows without files.
    // Only our own folder is removed; artifacts recorded elsewhere belong to the user.
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(artifactsRootFor(db.path())) / std::to_string(run_id), ec);
}

}  // namespace hearth::runedits
