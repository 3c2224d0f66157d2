// RunStore: the per-run series (steps, epochs, device samples, reports, predictions, logs,
// artifacts) and the stored RunStarted.
#include "storage/RunStore.h"

#include "engine/events/RunJson.h"
#include "storage/RunStoreImpl.h"
#include "storage/StepBlock.h"

#include <cstdint>
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
    std::lock_guard lock(impl_->mutex);
    sqlite::StatementUse q(impl_->db->cached(R"sql(
SELECT epoch, global_step, train_loss, train_acc, val_loss, val_acc, lr, epoch_time_s, samples_per_sec,
       data_wait_share, skipped_steps, is_best, bd_data_wait_ms, bd_host_to_device_ms, bd_forward_ms,
       bd_backward_ms, bd_comm_wait_ms, bd_optimizer_ms, bd_sync_ms, bd_step_ms, bd_profiled
FROM epoch_metrics WHERE run_id = ?1 ORDER BY epoch)sql"));
    q->bind(1, run_id);
    std::vector<EpochMetrics> out;
    while (q->step()) {
        EpochMetrics e;
        e.epoch = q->int64(0);
        e.global_step = q->int64(1);
        e.train_loss = q->real(2);
        e.train_accuracy = q->real(3);
        e.val_loss = q->real(4);
        e.val_accuracy = q->real(5);
        e.lr = q->real(6);
        e.epoch_time_s = q->real(7);
        e.samples_per_sec = q->real(8);
        e.data_wait_share = q->real(9);
        e.skipped_steps = q->int64(10);
        e.is_best = q->int64(11) != 0;
        e.breakdown.data_wait_ms = q->real(12);
        e.breakdown.host_to_device_ms = q->real(13);
        e.breakdown.forward_ms = q->real(14);
        e.breakdown.backward_ms = q->real(15);
        e.breakdown.comm_wait_ms = q->real(16);
        e.breakdown.optimizer_ms = q->real(17);
        e.breakdown.sync_ms = q->real(18);
        e.breakdown.step_ms = q->real(19);
        e.breakdown.profiled = q->int64(20);
        out.push_back(e);
    }
    return out;
}

std::vector<DeviceSample> RunStore::deviceSamples(int64_t run_id) const {
    std::lock_guard lock(impl_->mutex);
    sqlite::StatementUse q(impl_->db->cached(R"sql(
SELECT elapsed_s, device, name, allocated_bytes, reserved_bytes, peak_bytes, total_bytes, utilization, rank,
       driver_used_bytes, temperature_c, power_w, power_limit_w, sm_clock_mhz
FROM device_samples WHERE run_id = ?1 ORDER BY id)sql"));
    q->bind(1, run_id);
    std::vector<DeviceSample> out;
    while (q->step()) {
        DeviceSample d;
        d.elapsed_s = q->real(0);
        d.device = q->int64(1);
        d.name = q->text(2);
        d.allocated_bytes = q->int64(3);
        d.reserved_bytes = q->int64(4);
        d.peak_bytes = q->int64(5);
        d.total_bytes = q->int64(6);
        d.utilization = q->real(7);
        d.rank = q->int64(8);
        d.driver_used_bytes = q->int64(9);
        d.temperature_c = q->real(10);
        d.power_w = q->real(11);
        d.power_limit_w = q->real(12);
        d.sm_clock_mhz = q->real(13);
        out.push_back(std::move(d));
    }
    return out;
}

std::optional<MemoryBreakdown> RunStore::memoryBreakdown(int64_t run_id) const {
    std::lock_guard lock(impl_->mutex);
    sqlite::StatementUse q(impl_->db->cached(R"sql(
SELECT device, parameters_bytes, gradients_bytes, optimizer_state_bytes, activations_bytes, reserved_unused_bytes,
       other_bytes, peak_bytes
FROM run_memory WHERE run_id = ?1)sql"));
    q->bind(1, run_id);
    if (!q->step()) return std::nullopt;
    MemoryBreakdown m;
    m.device = q->text(0);
    m.parameters_bytes = q->int64(1);
    m.gradients_bytes = q->int64(2);
    m.optimizer_state_bytes = q->int64(3);
    m.activations_bytes = q->int64(4);
    m.reserved_unused_bytes = q->int64(5);
    m.other_bytes = q->int64(6);
    m.peak_bytes = q->int64(7);
    return m;
}

std::vector<RankSummary> RunStore::ranks(int64_t run_id) const {
    std::lock_guard lock(impl_->mutex);
    sqlite::StatementUse q(impl_->db->cached(R"sql(
SELECT rank, world_size, backend, device, pid, samples, train_time_s, samples_per_sec, data_wait_s,
    peak_memory_bytes, log_path, steps, comm_steps, comm_ms, overlap_ms
FROM run_ranks WHERE run_id = ?1 ORDER BY rank)sql"));
    q->bind(1, run_id);
    std::vector<RankSummary> out;
    while (q->step()) {
        RankSummary r;
        r.rank = q->int64(0);
        r.world_size = q->int64(1);
        r.backend = q->text(2);
        r.device = q->text(3);
        r.pid = q->int64(4);
        r.samples = q->int64(5);
        r.train_time_s = q->real(6);
        r.samples_per_sec = q->real(7);
        r.data_wait_s = q->real(8);
        r.peak_memory_bytes = q->int64(9);
        r.log_path = q->text(10);
        r.steps = q->int64(11);
        r.comm_steps = q->int64(12);
        r.comm_ms = q->real(13);
        r.overlap_ms = q->real(14);
        out.push_back(std::move(r));
    }
    return out;
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
