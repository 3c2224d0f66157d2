#include "engine/train/RankReport.h"

#include "engine/dist/Rendezvous.h"

#include <algorithm>

#include <unistd.h>

namespace hearth {
namespace {

enum SummaryColumn : int64_t {
    kPid, kSamples, kTrainTime, kWait, kPeak, kCuda, kIndex, kSteps, kCommSteps, kComm, kOverlap, kGradients,
    kOptimizerState, kSummaryColumns
};
enum SampleColumn : int64_t { kElapsed, kDevice, kAllocated, kReserved, kPeakBytes, kTotal, kUtil, kSampleColumns };

torch::Tensor summaryRow(const Strategy& strategy, const RankTotals& t) {
    const auto device = strategy.device();
    const auto comm = strategy.commStats();
    return torch::tensor({static_cast<double>(getpid()), static_cast<double>(t.samples), t.train_time_s,
                          t.data_wait_s, static_cast<double>(t.peak_memory_bytes), device.is_cuda() ? 1.0 : 0.0,
                          static_cast<double>(device.has_index() ? device.index() : 0), static_cast<double>(t.steps),
                          static_cast<double>(comm.steps), comm.comm_ms, comm.overlap_ms,
                          static_cast<double>(t.gradients_bytes), static_cast<double>(t.optimizer_state_bytes)},
                         torch::kFloat64)
        .reshape({1, kSummaryColumns});
}

void appendSample(std::vector<double>& v, const DeviceSample& s) {
    v.insert(v.end(), {s.elapsed_s, static_cast<double>(s.device), static_cast<double>(s.allocated_bytes),
                       static_cast<double>(s.reserved_bytes), static_cast<double>(s.peak_bytes),
                       static_cast<double>(s.total_bytes), s.utilization});
}

torch::Tensor sampleRows(const std::vector<DeviceSample>& samples) {
    std::vector<double> v;
    v.reserve(samples.size() * kSampleColumns);
    for (const auto& s : samples) appendSample(v, s);
    return torch::tensor(v, torch::kFloat64).reshape({-1, kSampleColumns});
}

// What every RankSummary of rank `rank` says about the world it ran in.
RankSummary summaryOf(const Strategy& strategy, int64_t rank) {
    RankSummary s;
    s.rank = rank;
    s.world_size = strategy.worldSize();
    s.backend = strategy.backend();
    return s;
}

DeviceSample sampleOf(int64_t rank, const double* d) {
    DeviceSample ds;
    ds.rank = rank;
    ds.elapsed_s = d[kElapsed];
    ds.device = static_cast<int64_t>(d[kDevice]);
    ds.name = ds.device < 0 ? "host" : "cuda:" + std::to_string(ds.device);
    ds.allocated_bytes = static_cast<int64_t>(d[kAllocated]);
    ds.reserved_bytes = static_cast<int64_t>(d[kReserved]);
    ds.peak_bytes = static_cast<int64_t>(d[kPeakBytes]);
    ds.total_bytes = static_cast<int64_t>(d[kTotal]);
    ds.utilization = d[kUtil];
    return ds;
}

}  // namespace

void shareLiveRanks(const Strategy& strategy, const DeviceMonitor& monitor, double samples_per_sec,
                    EventSink& sink) {
    if (strategy.worldSize() < 2) {
        return;
    }
    // One row per rank: samples/s, then up to two samples (host, GPU); a missing one has device -2.
    constexpr size_t kSlots = 2;
    std::vector<double> row{samples_per_sec};
    const auto& latest = monitor.latest();
    for (size_t i = 0; i < kSlots; ++i) {
        DeviceSample missing;
        missing.device = -2;
        appendSample(row, i < latest.size() ? latest[i] : missing);
    }
    const auto rows = strategy.gatherRows(torch::tensor(row, torch::kFloat64).reshape({1, -1}));
    if (!strategy.isGlobalZero()) {
        return;
    }
    for (int64_t r = 0; r < static_cast<int64_t>(rows.size()); ++r) {
        const auto values = rows[static_cast<size_t>(r)].contiguous();
        const auto* v = values.data_ptr<double>();
        RankSummary live = summaryOf(strategy, r);
        live.samples_per_sec = v[0];
        live.final = false;
        sink.onEvent(live);
        for (size_t i = 0; i < kSlots && r > 0; ++i) {  // rank 0's own samples went out live
            const double* d = v + 1 + static_cast<int64_t>(i) * kSampleColumns;
            if (d[kDevice] <= -2.0) continue;
            DeviceSample relayed = sampleOf(r, d);
            relayed.relayed = true;
            sink.onEvent(relayed);
        }
    }
}

int64_t reportRanks(const Strategy& strategy, const DeviceMonitor& monitor, const RankTotals& local,
                    EventSink& sink) {
    int64_t peak = local.peak_memory_bytes;
    if (strategy.worldSize() < 2) {
        return peak;
    }
    const auto summaries = strategy.gatherRows(summaryRow(strategy, local));
    const auto samples = strategy.gatherRows(sampleRows(monitor.history()));
    if (!strategy.isGlobalZero()) {
        return peak;  // rank 0 records the run
    }
    for (int64_t r = 0; r < static_cast<int64_t>(summaries.size()); ++r) {
        const auto row = summaries[static_cast<size_t>(r)].contiguous();
        const auto* v = row.data_ptr<double>();
        RankSummary s = summaryOf(strategy, r);
        s.device = v[kCuda] > 0.0 ? "cuda:" + std::to_string(static_cast<int64_t>(v[kIndex])) : "cpu";
        s.pid = static_cast<int64_t>(v[kPid]);
        s.samples = static_cast<int64_t>(v[kSamples]);
        s.train_time_s = v[kTrainTime];
        s.samples_per_sec = v[kTrainTime] > 0.0 ? v[kSamples] / v[kTrainTime] : 0.0;
        s.data_wait_s = v[kWait];
        s.peak_memory_bytes = static_cast<int64_t>(v[kPeak]);
        s.log_path = r == 0 ? "" : dist::rankLogPath(r);
        s.steps = static_cast<int64_t>(v[kSteps]);
        s.comm_steps = static_cast<int64_t>(v[kCommSteps]);
        s.comm_ms = v[kComm];
        s.overlap_ms = v[kOverlap];
        s.gradients_bytes = static_cast<int64_t>(v[kGradients]);
        s.optimizer_state_bytes = static_cast<int64_t>(v[kOptimizerState]);
        peak = std::max(peak, s.peak_memory_bytes);
        sink.onEvent(s);
        if (r == 0) continue;  // rank 0's samples went to the sink live
        const auto rows = samples[static_cast<size_t>(r)].contiguous();
        const auto* d = rows.data_ptr<double>();
        for (int64_t i = 0; i < rows.size(0); ++i, d += kSampleColumns) sink.onEvent(sampleOf(r, d));
    }
    return peak;
}

}  // namespace hearth
