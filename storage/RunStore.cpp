#include "storage/RunStore.h"

#include "storage/ProcessIdentity.h"
#include "storage/RunEdits.h"
#include "storage/RunStoreImpl.h"
#include "storage/Schema.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace hearth {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSelectRun = R"sql(
SELECT r.id, r.name, r.status, r.started_at, r.finished_at, r.config_json, r.effective_json,
       r.environment_json, r.device, r.best_val_acc, r.test_acc, r.train_time_s, r.samples_per_sec,
       r.peak_memory_bytes, r.epochs_completed, r.global_steps, r.notes, r.failure_message,
       r.sweep_id, s.name, r.pid, r.hostname, r.process_start, r.test_loss, r.total_time_s,
       r.failure_kind, r.stop_reason,
       (SELECT group_concat(t.tag, char(31)) FROM tags t WHERE t.run_id = r.id), s.kind, r.tflops, r.mfu
FROM runs r LEFT JOIN sweeps s ON s.id = r.sweep_id
)sql";

std::vector<std::string> splitTags(const std::string& joined) {
    std::vector<std::string> tags;
    size_t start = 0;
    while (!joined.empty() && start <= joined.size()) {
        const size_t end = std::min(joined.find('\x1f', start), joined.size());
        tags.push_back(joined.substr(start, end - start));
        start = end + 1;
    }
    std::sort(tags.begin(), tags.end());
    return tags;
}

RunSummary readSummary(const sqlite::Statement& q) {
    RunSummary r;
    r.id = q.int64(0);
    r.name = q.text(1);
    r.status = q.text(2);
    r.started_at = q.real(3);
    r.finished_at = q.isNull(4) ? 0.0 : q.real(4);
    r.config_json = q.text(5);
    r.effective_json = q.text(6);
    r.environment_json = q.text(7);
    r.device = q.text(8);
    r.best_val_accuracy = q.optReal(9);
    r.test_accuracy = q.optReal(10);
    r.train_time_s = q.optReal(11);
    r.samples_per_sec = q.optReal(12);
    r.peak_memory_bytes = q.optInt64(13);
    r.epochs_completed = q.int64(14);
    r.global_steps = q.int64(15);
    r.notes = q.text(16);
    r.failure_message = q.text(17);
    r.sweep_id = q.optInt64(18);
    r.sweep_name = q.text(19);
    r.pid = q.int64(20);
    r.hostname = q.text(21);
    const int64_t process_start = q.int64(22);
    r.test_loss = q.optReal(23);
    r.total_time_s = q.optReal(24);
    r.failure_kind = q.text(25);
    r.stop_reason = q.text(26);
    r.tags = splitTags(q.text(27));
    r.sweep_kind = q.text(28);
    r.tflops = q.optReal(29);
    r.mfu = q.optReal(30);
    // A `running` row whose writer died on this host is reported, not rewritten: the writer
    // of another host may still own it, and a reader should not need the write lock.
    if (r.status == "running" && process::isGone({r.pid, r.hostname, process_start})) r.status = "interrupted";
    return r;
}

bool isDigits(const std::string& s) {
    return !s.empty() && s.size() < 18 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string artifactsRootFor(const std::string& db_path) {
    // Absolute: recorded artifact paths must stay valid whatever the reader's working folder.
    std::error_code ec;
    const fs::path absolute = fs::absolute(db_path, ec);
    return (ec ? fs::path(db_path) : absolute.lexically_normal()).string() + ".artifacts";
}

RunStore::RunStore(const std::string& path) : impl_(std::make_unique<Impl>()) {
    impl_->path = path;
    impl_->db = schema::openStore(path);
}

RunStore::~RunStore() = default;

// getenv is not thread-safe against setenv; Hearth never sets its environment, and this runs
// when a database is opened, not in a loop.
// NOLINTBEGIN(concurrency-mt-unsafe)
std::string RunStore::defaultPath() {
    if (const char* db = std::getenv("HEARTH_DB"); db && *db) return db;
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return std::string(xdg) + "/hearth/runs.sqlite";
    const char* home = std::getenv("HOME");
    return std::string(home && *home ? home : ".") + "/.local/share/hearth/runs.sqlite";
}
// NOLINTEND(concurrency-mt-unsafe)

int RunStore::schemaVersion() { return schema::latestVersion(); }

const std::string& RunStore::path() const { return impl_->path; }

std::vector<RunSummary> RunStore::listRuns(const RunFilter& filter) const {
    std::lock_guard lock(impl_->mutex);
    // `interrupted` is derived from `running` rows at read time, so both filter in C++.
    const bool liveness_filter = filter.status == "running" || filter.status == "interrupted";
    sqlite::StatementUse q(impl_->db->cached(std::string(kSelectRun) + R"sql(
WHERE (?1 = '' OR r.status = ?1)
  AND (?2 = '' OR EXISTS (SELECT 1 FROM tags t WHERE t.run_id = r.id AND t.tag = ?2))
  AND (?3 = '' OR instr(lower(r.name), lower(?3)) > 0 OR instr(lower(r.notes), lower(?3)) > 0
       OR EXISTS (SELECT 1 FROM tags t WHERE t.run_id = r.id AND instr(lower(t.tag), lower(?3)) > 0))
ORDER BY r.started_at DESC, r.id DESC
LIMIT ?4)sql"));
    q->bind(1, liveness_filter ? std::string("running") : filter.status)
        .bind(2, filter.tag)
        .bind(3, filter.text)
        .bind(4, liveness_filter || filter.limit <= 0 ? int64_t{-1} : filter.limit);
    std::vector<RunSummary> runs;
    while (q->step()) {
        RunSummary r = readSummary(*q);
        if (liveness_filter && r.status != filter.status) continue;
        runs.push_back(std::move(r));
        if (filter.limit > 0 && static_cast<int64_t>(runs.size()) >= filter.limit) break;
    }
    return runs;
}

std::optional<RunSummary> RunStore::run(int64_t id) const {
    std::lock_guard lock(impl_->mutex);
    sqlite::StatementUse q(impl_->db->cached(std::string(kSelectRun) + "WHERE r.id = ?1"));
    q->bind(1, id);
    if (!q->step()) return std::nullopt;
    return readSummary(*q);
}

int64_t RunStore::resolveRun(const std::string& id_or_prefix) const {
    std::lock_guard lock(impl_->mutex);
    if (isDigits(id_or_prefix)) {
        sqlite::StatementUse q(impl_->db->cached("SELECT id FROM runs WHERE id = ?1"));
        q->bind(1, static_cast<int64_t>(std::stoll(id_or_prefix)));
        if (q->step()) return q->int64(0);
    }
    // substr() rather than LIKE: names may contain '%' and '_'.
    sqlite::StatementUse q(impl_->db->cached(
        "SELECT id, name, started_at FROM runs WHERE substr(name, 1, length(?1)) = ?1 ORDER BY id"));
    q->bind(1, id_or_prefix);
    std::vector<std::pair<int64_t, std::string>> matches;
    while (q->step()) matches.emplace_back(q->int64(0), q->text(1));
    if (matches.size() == 1) return matches.front().first;
    if (id_or_prefix.empty() || matches.empty())
        throw StoreError("No run with the id or name prefix '" + id_or_prefix + "' in '" + impl_->path + "'.");
    std::string list;
    for (size_t i = 0; i < matches.size() && i < 10; ++i)
        list += (i ? ", " : "") + std::string("#") + std::to_string(matches[i].first) + " " + matches[i].second;
    if (matches.size() > 10) list += ", ... (" + std::to_string(matches.size() - 10) + " more)";
    throw StoreError("'" + id_or_prefix + "' matches " + std::to_string(matches.size()) +
                     " runs; use an id or a longer prefix: " + list + ".");
}

void RunStore::rename(int64_t run_id, const std::string& name) {
    std::lock_guard lock(impl_->mutex);
    runedits::rename(*impl_->db, run_id, name);
    ++impl_->own_writes;
}

void RunStore::setTags(int64_t run_id, const std::vector<std::string>& tags) {
    std::lock_guard lock(impl_->mutex);
    runedits::setTags(*impl_->db, run_id, tags);
    ++impl_->own_writes;
}

void RunStore::setNotes(int64_t run_id, const std::string& notes) {
    std::lock_guard lock(impl_->mutex);
    runedits::setNotes(*impl_->db, run_id, notes);
    ++impl_->own_writes;
}

void RunStore::deleteRun(int64_t run_id) {
    std::lock_guard lock(impl_->mutex);
    runedits::deleteRun(*impl_->db, run_id);
    ++impl_->own_writes;
}

int64_t RunStore::changeCounter() const {
    std::lock_guard lock(impl_->mutex);
    const int64_t version = impl_->db->queryInt("PRAGMA data_version");
    if (version != impl_->seen_data_version) {
        if (impl_->seen_data_version >= 0) ++impl_->external_changes;
        impl_->seen_data_version = version;
    }
    return impl_->external_changes + impl_->own_writes;
}

std::string RunStore::artifactsDir(int64_t run_id) const {
    return (fs::path(artifactsRootFor(impl_->path)) / std::to_string(run_id)).string() + "/";
}

}  // namespace hearth
