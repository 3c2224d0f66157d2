#include "storage/RunEdits.h"

#include "storage/BatchWriter.h"
#include "storage/ProcessIdentity.h"
#include "storage/RunStoreImpl.h"
#include "storage/Sqlite.h"

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

int64_t createSweep(sqlite::Connection& db, const std::string& name, const std::string& kind) {
    sqlite::Transaction tx(db);
    db.cached("INSERT INTO sweeps (name, kind, created_at) VALUES (?1, ?2, ?3)")
        .bind(1, name).bind(2, kind).bind(3, unixNow())
        .run();
    const int64_t id = sqlite3_last_insert_rowid(db.handle());
    tx.commit();
    return id;
}

void rename(sqlite::Connection& db, int64_t run_id, const std::string& name) {
    sqlite::Transaction tx(db);
    db.cached("UPDATE runs SET name = ?2 WHERE id = ?1").bind(1, run_id).bind(2, name).run();
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
    for (const auto& tag : tags)
        if (!tag.empty()) insert.bind(1, run_id).bind(2, tag).run();
    tx.commit();
}

void setNotes(sqlite::Connection& db, int64_t run_id, const std::string& notes) {
    sqlite::Transaction tx(db);
    db.cached("UPDATE runs SET notes = ?2 WHERE id = ?1").bind(1, run_id).bind(2, notes).run();
    if (sqlite3_changes(db.handle()) == 0) noSuchRun(db, run_id);
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
