#include "storage/BatchWriter.h"

#include "engine/events/EventJson.h"
#include "engine/events/Overloaded.h"
#include "engine/events/RunJson.h"
#include "storage/FieldSql.h"
#include "storage/Sha256.h"
#include "storage/StepBlock.h"

#include <chrono>
#include <filesystem>
#include <type_traits>

namespace hearth {

double unixNow() {
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::vector<BatchWriter::FileDigest> BatchWriter::digestCheckpoints(const std::vector<QueuedEvent>& batch) {
    std::vector<FileDigest> digests(batch.size());
    for (size_t i = 0; i < batch.size(); ++i)
        if (const auto* c = std::get_if<CheckpointSaved>(&batch[i].event); c && !c->path.empty())
            digests[i].sha256 = Sha256::ofFile(c->path, &digests[i].bytes);
        else if (const auto* r = std::get_if<RankSummary>(&batch[i].event); r && r->final && !r->log_path.empty())
            digests[i].sha256 = Sha256::ofFile(r->log_path, &digests[i].bytes);
    return digests;
}

std::string BatchWriter::write(const std::vector<QueuedEvent>& batch, const std::vector<FileDigest>& digests) {
    if (batch.empty()) return {};
    std::set<int64_t> touched;
    try {
        sqlite::Transaction tx(db_);
        for (size_t i = 0; i < batch.size(); ++i) {
            const auto& item = batch[i];
            if (runs_[item.run_id].broken) continue;
            touched.insert(item.run_id);
            apply(item.run_id, item.event, digests[i]);
        }
        finishSteps();
        tx.commit();
        return {};
    } catch (const std::exception& e) {  // SQLite's errors and any other (e.g. JSON encoding)
        std::string ids;
        for (int64_t id : touched) ids += (ids.empty() ? "#" : ", #") + std::to_string(id);
        std::string message = std::string(e.what()) + " Later events of run " + ids + " were not stored.";
        for (int64_t id : touched) runs_[id].broken = true;
        markFailed(touched, message);
        return message;
    }
}

void BatchWriter::apply(int64_t run_id, const Event& event, const FileDigest& digest) {
    std::visit(Overloaded{
                   [&](const RunStarted& e) { onStarted(run_id, e); },
                   [&](const StepMetrics& e) { applyStep(run_id, e); },
                   [&](const EpochMetrics& e) { onEpoch(run_id, e); },
                   [&](const EvalReport& e) { onReport(run_id, e); },
                   [&](const PredictionsReady& e) { onPredictions(run_id, e); },
                   [&](const CheckpointSaved& e) { onCheckpoint(run_id, e, digest); },
                   [&](const DeviceSample& e) { onDeviceSample(run_id, e); },
                   [&](const RankSummary& e) { onRankSummary(run_id, e, digest); },
                   [&](const LogLine& e) { onLog(run_id, e); },
                   [&](const RunFinished& e) { onFinished(run_id, e); },
                   [&](const RunFailed& e) { onFailed(run_id, e); },
               },
               event);
}

void BatchWriter::applyStep(int64_t run_id, const StepMetrics& step) {
    RunState& state = runs_[run_id];
    if (state.block < 0) {
        // Continue after blocks another writer may have stored for this run.
        sqlite::StatementUse q(db_.cached("SELECT COALESCE(MAX(block) + 1, 0) FROM step_metrics WHERE run_id = ?1"));
        q->bind(1, run_id);
        state.block = q->step() ? q->int64(0) : 0;
    }
    state.open.push_back(step);
    state.dirty = true;
    if (state.open.size() == stepblock::kRows) {
        writeOpenBlock(run_id, state);
        ++state.block;
        state.open.clear();
    }
}

void BatchWriter::writeOpenBlock(int64_t run_id, RunState& state) {
    if (state.open.empty()) return;
    const std::string data = stepblock::pack(state.open.data(), state.open.size());
    // REPLACE: the open block is rewritten at every commit until it is full.
    db_.cached(R"sql(
INSERT OR REPLACE INTO step_metrics (run_id, block, first_step, last_step, row_count, field_count, data)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7))sql")
        .bind(1, run_id)
        .bind(2, state.block)
        .bind(3, state.open.front().global_step)
        .bind(4, state.open.back().global_step)
        .bind(5, static_cast<int64_t>(state.open.size()))
        .bind(6, static_cast<int64_t>(stepblock::fieldCount()))
        .bindBlob(7, data.data(), data.size())
        .run();
    db_.cached("UPDATE runs SET global_steps = max(global_steps, ?2) WHERE id = ?1")
        .bind(1, run_id)
        .bind(2, state.open.back().global_step)
        .run();
    state.dirty = false;
}

void BatchWriter::finishSteps() {
    for (auto& [run_id, state] : runs_)
        if (state.dirty && !state.broken) writeOpenBlock(run_id, state);
}

void BatchWriter::markFailed(const std::set<int64_t>& run_ids, const std::string& message) {
    // Best effort: an UPDATE in place usually still fits when the disk is full.
    try {
        sqlite::Transaction tx(db_);
        auto& update = db_.cached(R"sql(
UPDATE runs SET status = 'failed', finished_at = ?2, failure_kind = 'storage', failure_message = ?3
WHERE id = ?1 AND status = 'running')sql");
        for (int64_t id : run_ids) update.bind(1, id).bind(2, unixNow()).bind(3, message).run();
        tx.commit();
    } catch (const StoreError&) {
    }
}

void BatchWriter::onStarted(int64_t run_id, const RunStarted& e) {
    db_.cached(R"sql(
UPDATE runs SET config_json = CASE WHEN ?2 = '' THEN config_json ELSE ?2 END, effective_json = ?3,
                environment_json = ?4, device = ?5, setup_json = ?6
WHERE id = ?1)sql")
        .bind(1, run_id)
        .bind(2, e.config_json)
        .bind(3, runjson::effectiveToJson(e.effective))
        .bind(4, runjson::environmentToJson(e.environment))
        .bind(5, e.device)
        .bind(6, runjson::setupToJson(e))
        .run();
}

void BatchWriter::onEpoch(int64_t run_id, const EpochMetrics& e) {
    static const std::string sql = fieldsql::insert("INSERT OR REPLACE", "epoch_metrics", {"run_id"}, fields::epochFields());
    auto& insert = db_.cached(sql).bind(1, run_id);
    fieldsql::bindFields(insert, 2, fields::epochFields(), e);
    insert.run();
    // Live summary while the run goes on; RunFinished sets the final values.
    db_.cached(R"sql(
UPDATE runs SET epochs_completed = max(epochs_completed, ?2), global_steps = max(global_steps, ?3),
    best_val_acc = CASE WHEN best_val_acc IS NULL OR ?4 > best_val_acc THEN ?4 ELSE best_val_acc END
WHERE id = ?1)sql")
        .bind(1, run_id).bind(2, e.epoch + 1).bind(3, e.global_step).bind(4, e.val_accuracy)
        .run();
}

void BatchWriter::onReport(int64_t run_id, const EvalReport& e) {
    db_.cached("INSERT OR REPLACE INTO reports (run_id, split, loss, report_json) VALUES (?1, ?2, ?3, ?4)")
        .bind(1, run_id).bind(2, e.split).bind(3, e.loss).bind(4, e.report.toJson())
        .run();
    if (e.split == "test") {
        db_.cached("UPDATE runs SET test_acc = ?2, test_loss = ?3 WHERE id = ?1")
            .bind(1, run_id).bind(2, e.report.accuracy).bind(3, e.loss)
            .run();
    }
}

void BatchWriter::onPredictions(int64_t run_id, const PredictionsReady& e) {
    db_.cached("DELETE FROM predictions WHERE run_id = ?1 AND split = ?2").bind(1, run_id).bind(2, e.split).run();
    auto& insert = db_.cached(R"sql(
INSERT OR REPLACE INTO predictions (run_id, split, idx, true_label, predicted, confidence)
VALUES (?1, ?2, ?3, ?4, ?5, ?6))sql");
    for (const auto& p : e.predictions)
        insert.bind(1, run_id).bind(2, e.split).bind(3, p.index).bind(4, p.true_label).bind(5, p.predicted)
            .bind(6, p.confidence).run();
}

namespace {

std::string absolutePath(const std::string& path) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    return ec ? path : absolute.lexically_normal().string();
}

}  // namespace

void BatchWriter::onCheckpoint(int64_t run_id, const CheckpointSaved& e, const FileDigest& digest) {
    for (const auto& removed : e.removed)
        db_.cached("DELETE FROM artifacts WHERE run_id = ?1 AND path = ?2").bind(1, run_id).bind(2, absolutePath(removed))
            .run();
    if (e.path.empty()) return;   // only a record of deleted files
    // The size as hashed; the event's size when the file could not be read.
    const int64_t bytes = digest.bytes >= 0 ? digest.bytes : e.bytes;
    const std::string path = absolutePath(e.path);
    const std::string kind = e.kind == "state" ? "state" : "checkpoint";
    db_.cached(R"sql(
INSERT INTO artifacts (run_id, kind, path, bytes, sha256, epoch, monitor, value, created_at)
VALUES (?1, ?9, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
ON CONFLICT (run_id, path) DO UPDATE SET bytes = excluded.bytes, sha256 = excluded.sha256,
    epoch = excluded.epoch, monitor = excluded.monitor, value = excluded.value, created_at = excluded.created_at)sql")
        .bind(1, run_id).bind(2, path).bind(3, bytes).bind(4, digest.sha256).bind(5, e.epoch)
        .bind(6, e.monitor).bind(7, e.value).bind(8, unixNow()).bind(9, kind)
        .run();
}

void BatchWriter::onDeviceSample(int64_t run_id, const DeviceSample& e) {
    if (e.relayed) return;  // a live copy: the rank's history arrives when fit ends
    static const std::string sql = fieldsql::insert("INSERT", "device_samples", {"run_id"}, fields::deviceFields());
    auto& insert = db_.cached(sql).bind(1, run_id);
    fieldsql::bindFields(insert, 2, fields::deviceFields(), e);
    insert.run();
}

void BatchWriter::onRankSummary(int64_t run_id, const RankSummary& e, const FileDigest& digest) {
    if (!e.final) return;  // a live update: the record comes when fit ends
    static const std::string sql = fieldsql::insert("INSERT OR REPLACE", "run_ranks", {"run_id"}, fields::rankFields());
    auto& insert = db_.cached(sql).bind(1, run_id);
    fieldsql::bindFields(insert, 2, fields::rankFields(), e);
    insert.run();
    if (e.log_path.empty() || digest.bytes < 0) return;  // no log file (or it could not be read)
    db_.cached(R"sql(
INSERT INTO artifacts (run_id, kind, path, bytes, sha256, created_at) VALUES (?1, 'log', ?2, ?3, ?4, ?5)
ON CONFLICT (run_id, path) DO UPDATE SET bytes = excluded.bytes, sha256 = excluded.sha256)sql")
        .bind(1, run_id).bind(2, e.log_path).bind(3, digest.bytes).bind(4, digest.sha256).bind(5, unixNow())
        .run();
}

void BatchWriter::onLog(int64_t run_id, const LogLine& e) {
    db_.cached("INSERT INTO log_lines (run_id, level, text) VALUES (?1, ?2, ?3)")
        .bind(1, run_id).bind(2, runjson::levelName(e.level)).bind(3, e.text)
        .run();
}

void BatchWriter::onFinished(int64_t run_id, const RunFinished& e) {
    const std::string status = e.status == "stopped" ? "stopped" : "completed";
    // A run stopped before testing has no test accuracy (the event carries 0): store NULL.
    const bool tested = status == "completed" || e.test_accuracy > 0.0;
    db_.cached(R"sql(
UPDATE runs SET status = ?2, finished_at = ?3, train_time_s = ?4, total_time_s = ?5, best_val_acc = ?6,
    test_acc = CASE WHEN ?11 THEN ?7 ELSE test_acc END, test_loss = CASE WHEN ?11 THEN ?8 ELSE test_loss END,
    samples_per_sec = ?9, peak_memory_bytes = ?10, epochs_completed = ?12, global_steps = max(global_steps, ?13),
    stop_reason = ?14, tflops = CASE WHEN ?15 >= 0 THEN ?15 END, mfu = CASE WHEN ?16 >= 0 THEN ?16 END
WHERE id = ?1)sql")
        .bind(1, run_id).bind(2, status).bind(3, unixNow()).bind(4, e.train_time_s).bind(5, e.total_time_s)
        .bind(6, e.best_val_accuracy).bind(7, e.test_accuracy).bind(8, e.test_loss).bind(9, e.samples_per_sec)
        .bind(10, e.peak_memory_bytes).bind(11, int64_t{tested ? 1 : 0}).bind(12, e.epochs_completed)
        .bind(13, e.global_steps).bind(14, e.stop_reason).bind(15, e.tflops).bind(16, e.mfu)
        .run();
    if (e.memory.device.empty()) return;  // not measured (a stop before the first optimizer step)
    static const std::string sql = fieldsql::insert("INSERT OR REPLACE", "run_memory", {"run_id"}, fields::memoryFields());
    auto& insert = db_.cached(sql).bind(1, run_id);
    fieldsql::bindFields(insert, 2, fields::memoryFields(), e.memory);
    insert.run();
}

void BatchWriter::onFailed(int64_t run_id, const RunFailed& e) {
    const std::string message = e.suggestion.empty() ? e.message : e.message + "\nSuggestion: " + e.suggestion;
    db_.cached(R"sql(
UPDATE runs SET status = 'failed', finished_at = ?2, failure_kind = ?3, failure_message = ?4 WHERE id = ?1)sql")
        .bind(1, run_id).bind(2, unixNow()).bind(3, eventjson::failureKindName(e.kind)).bind(4, message)
        .run();
}

}  // namespace hearth
