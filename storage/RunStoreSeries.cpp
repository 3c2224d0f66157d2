// RunStore: the per-run series (steps, epochs, device samples, reports, predictions, logs,
// artifacts) and the stored RunStarted.
#include "storage/RunStore.h"

#include "engine/events/RunJson.h"
#include "engine/train/StateFiles.h"
#include "storage/FieldSql.h"
#include "storage/RunStoreImpl.h"
#include "storage/StepBlock.h"

#include <cstdint>
#include <filesystem>
#include <sys/mman.h>

namespace hearth {
namespace {

// A 1,000,000-step curve is a 104 MB vector; with 4 KiB pages the kernel spends more time
// faulting it in than SQLite spends reading it (~100 ms vs ~20 ms here). Transparent huge
// pages for the reserved, untouched capacity cut that ~3x (THP mode "madvise" is the default).
void preferHugePages(std::vector<StepMetrics>& out) {
#ifdef MADV_HUGEPAGE
    constexpr uintptr_t kHuge = uintptr_t{2} << 20;
    const auto begin = reinterpret_cast<uintptr_t>(out.data());
    const uintptr_t end = begin + out.capacity() * sizeof(StepMetrics);
    const uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
    const uintptr_t last = end & ~(kHuge - 1);
    // The address arithmetic is the point here (rounding to huge-page boundaries for madvise).
    if (out.empty() && last > first)
        madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // NOLINT(performance-no-int-to-ptr)
#else
    (void)out;
#endif
}

// The rows of `sql_table` for one run, in `order`, read through the event's field table.
template <typename E>
std::vector<E> series(std::mutex& mutex, sqlite::Connection& db, int64_t run_id,
                      const std::vector<fields::Field<E>>& table, const char* sql_table, const char* order) {
    std::lock_guard lock(mutex);
    sqlite::StatementUse q(db.cached("SELECT " + fieldsql::columns(table) + " FROM " + sql_table +
                                     " WHERE run_id = ?1 ORDER BY " + order));
    q->bind(1, run_id);
    std::vector<E> out;
    while (q->step()) fieldsql::readFields(*q, 0, table, out.emplace_back());
    return out;
}

}  // namespace

std::vector<StepMetrics> RunStore::steps(int64_t run_id) const {
    std::lock_guard lock(impl_->mutex);
    std::vector<StepMetrics> out;
    {
        sqlite::StatementUse count(impl_->db->cached("SELECT total(row_count) FROM step_metrics WHERE run_id = ?1"));
        count->bind(1, run_id);
        if (count->step()) out.reserve(static_cast<size_t>(count->real(0)));
    }
    preferHugePages(out);
    sqlite::StatementUse q(impl_->db->cached(
        "SELECT field_count, data FROM step_metrics WHERE run_id = ?1 ORDER BY block"));
    q->bind(1, run_id);
    while (q->step()) {
        const auto fields = static_cast<size_t>(q->int64(0));
        const void* data = q->blob(1);
        stepblock::unpackAppend(data, static_cast<size_t>(q->blobBytes(1)), fields, out);
    }
    return out;
}

std::vector<StepMetrics> RunStore::stepsAfter(int64_t run_id, int64_t global_step) const {
    std::lock_guard lock(impl_->mutex);
    // Whole blocks are skipped on last_step, which precedes the blob in the row: their data
    // pages are never read.
    sqlite::StatementUse q(impl_->db->cached(
        "SELECT field_count, data FROM step_metrics WHERE run_id = ?1 AND last_step > ?2 ORDER BY block"));
    q->bind(1, run_id).bind(2, global_step);
    std::vector<StepMetrics> block, out;
    while (q->step()) {
        block.clear();
        stepblock::unpackAppend(q->blob(1), static_cast<size_t>(q->blobBytes(1)), static_cast<size_t>(q->int64(0)), block);
        for (const auto& s : block)
            if (s.global_step > global_step) out.push_back(s);
    }
    return out;
}

std::vector<EpochMetrics> RunStore::epochs(int64_t run_id) const {
    return series<EpochMetrics>(impl_->mutex, *impl_->db, run_id, fields::epochFields(), "epoch_metrics", "epoch");
}

std::vector<DeviceSample> RunStore::deviceSamples(int64_t run_id) const {
    return series<DeviceSample>(impl_->mutex, *impl_->db, run_id, fields::deviceFields(), "device_samples", "id");
}

std::optional<MemoryBreakdown> RunStore::memoryBreakdown(int64_t run_id) const {
    auto rows = series<MemoryBreakdown>(impl_->mutex, *impl_->db, run_id, fields::memoryFields(), "run_memory", "run_id");
    if (rows.empty()) return std::nullopt;
    return std::move(rows.front());
}

std::optional<std::pair<int64_t, double>> RunStore::latestCompletedRun(const std::vector<std::string>& names) const {
    std::lock_guard lock(impl_->mutex);
    std::optional<std::pair<int64_t, double>> latest;
    for (const auto& name : names) {
        sqlite::StatementUse q(impl_->db->cached(
            "SELECT id, total_time_s FROM runs WHERE name = ?1 AND status = 'completed' AND total_time_s IS NOT NULL "
            "ORDER BY id DESC LIMIT 1"));
        q->bind(1, name);
        if (q->step() && (!latest || q->int64(0) > latest->first)) latest = std::make_pair(q->int64(0), q->real(1));
    }
    return latest;
}

std::optional<SweepRecord> RunStore::sweep(int64_t sweep_id) const {
    std::lock_guard lock(impl_->mutex);
    sqlite::StatementUse q(impl_->db->cached("SELECT name, kind, plan_json, created_at FROM sweeps WHERE id = ?1"));
    q->bind(1, sweep_id);
    if (!q->step()) return std::nullopt;
    SweepRecord s;
    s.id = sweep_id;
    s.name = q->text(0);
    s.kind = q->text(1);
    s.plan_json = q->text(2);
    s.created_at = q->real(3);
    sqlite::StatementUse runs(impl_->db->cached(
        "SELECT r.id, coalesce(w.step, -1), coalesce(w.repeat, -1) FROM runs r "
        "LEFT JOIN sweep_runs w ON w.run_id = r.id AND w.sweep_id = r.sweep_id WHERE r.sweep_id = ?1 ORDER BY r.id"));
    runs->bind(1, sweep_id);
    while (runs->step()) s.runs.push_back({runs->int64(0), runs->int64(1), runs->int64(2)});
    return s;
}

std::vector<RankSummary> RunStore::ranks(int64_t run_id) const {
    return series<RankSummary>(impl_->mutex, *impl_->db, run_id, fields::rankFields(), "run_ranks", "rank");
}

std::optional<EvalReport> RunStore::report(int64_t run_id, const std::string& split) const {
    std::lock_guard lock(impl_->mutex);
    sqlite::StatementUse q(impl_->db->cached(
        "SELECT loss, report_json FROM reports WHERE run_id = ?1 AND split = ?2"));
    q->bind(1, run_id).bind(2, split);
    if (!q->step()) return std::nullopt;
    EvalReport r;
    r.split = split;
    r.loss = q->real(0);
    try {
        r.report = ClassificationReport::fromJson(q->text(1));
    } catch (const std::exception& e) {
        throw StoreError("The " + split + " report of run #" + std::to_string(run_id) + " in '" + impl_->path +
                         "' cannot be read: " + e.what());
    }
    return r;
}

std::vector<Prediction> RunStore::predictions(int64_t run_id, const std::string& split,
                                              bool misclassified_only) const {
    std::lock_guard lock(impl_->mutex);
    sqlite::StatementUse q(impl_->db->cached(R"sql(
SELECT idx, true_label, predicted, confidence FROM predictions
WHERE run_id = ?1 AND split = ?2 AND (?3 = 0 OR true_label <> predicted) ORDER BY idx)sql"));
    q->bind(1, run_id).bind(2, split).bind(3, int64_t{misclassified_only ? 1 : 0});
    std::vector<Prediction> out;
    while (q->step()) out.push_back({q->int64(0), q->int64(1), q->int64(2), q->real(3)});
    return out;
}

std::vector<LogLine> RunStore::logEntries(int64_t run_id) const {
    std::lock_guard lock(impl_->mutex);
    sqlite::StatementUse q(impl_->db->cached("SELECT level, text FROM log_lines WHERE run_id = ?1 ORDER BY id"));
    q->bind(1, run_id);
    std::vector<LogLine> out;
    while (q->step()) out.push_back({runjson::levelFromName(q->text(0)), q->text(1)});
    return out;
}

std::vector<std::string> RunStore::logLines(int64_t run_id) const {
    std::vector<std::string> out;
    for (auto& line : logEntries(run_id)) out.push_back(std::move(line.text));
    return out;
}

std::string RunStore::bestCheckpoint(int64_t run_id) const {
    std::string checkpoint;
    for (const auto& artifact : artifacts(run_id))
        if (artifact.kind == "checkpoint") checkpoint = artifact.path;
    return checkpoint;
}

std::string RunStore::checkpointProblem(int64_t run_id) const {
    const std::string checkpoint = bestCheckpoint(run_id);
    const std::string run = "run #" + std::to_string(run_id);
    if (checkpoint.empty()) return run + " saved no checkpoint (it stopped before its first validation)";
    std::error_code ec;
    if (!std::filesystem::exists(checkpoint, ec))
        return run + "'s checkpoint " + checkpoint + " is gone (its artifacts were deleted or moved)";
    return {};
}

std::vector<Artifact> RunStore::artifacts(int64_t run_id) const {
    std::lock_guard lock(impl_->mutex);
    sqlite::StatementUse q(impl_->db->cached(R"sql(
SELECT id, kind, path, bytes, sha256, epoch, monitor, value, created_at
FROM artifacts WHERE run_id = ?1 ORDER BY id)sql"));
    q->bind(1, run_id);
    std::vector<Artifact> out;
    while (q->step()) {
        Artifact a;
        a.id = q->int64(0);
        a.kind = q->text(1);
        a.path = q->text(2);
        a.bytes = q->int64(3);
        a.sha256 = q->text(4);
        a.epoch = q->int64(5);
        a.monitor = q->text(6);
        a.value = q->real(7);
        a.created_at = q->real(8);
        out.push_back(std::move(a));
    }
    return out;
}

RunStore::KeptHistory RunStore::historyKeptAt(int64_t run_id, const std::string& state_path) const {
    KeptHistory kept;
    const int64_t state_step = trainingStateStep(state_path);
    for (auto& step : steps(run_id))
        if (step.global_step <= state_step) kept.steps.push_back(step);
    int64_t epoch = kept.steps.empty() ? 0 : kept.steps.back().epoch;
    const auto name = std::filesystem::path(state_path).filename();
    for (const auto& a : artifacts(run_id))
        if (a.kind == "state" && a.epoch >= 0 && std::filesystem::path(a.path).filename() == name) epoch = a.epoch;
    for (auto& e : epochs(run_id))
        if (e.epoch < epoch) kept.epochs.push_back(e);
    return kept;
}

std::optional<RunStarted> RunStore::runStarted(int64_t run_id) const {
    std::lock_guard lock(impl_->mutex);
    sqlite::StatementUse q(impl_->db->cached(R"sql(
SELECT name, config_json, effective_json, environment_json, device, setup_json, started_at
FROM runs WHERE id = ?1)sql"));
    q->bind(1, run_id);
    if (!q->step()) return std::nullopt;
    RunStarted s;
    s.run_name = q->text(0);
    s.config_json = q->text(1);
    s.effective = runjson::effectiveFromJson(q->text(2));
    s.environment = runjson::environmentFromJson(q->text(3));
    s.device = q->text(4);
    runjson::setupFromJson(q->text(5), s);
    if (s.wall_time_s == 0.0) s.wall_time_s = q->real(6);
    return s;
}

}  // namespace hearth
