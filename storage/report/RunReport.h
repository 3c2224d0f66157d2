#pragma once
// Readable renderings of stored runs (terminal text, Markdown, Lightning-style CSV, JSON),
// shared by hearth-cli (`runs`, `show`, `compare`, `export`, the end of `run`) and the workbench.

#include "engine/config/ByteSize.h"   // formatBytes: one rendering of a byte count everywhere
#include "engine/metrics/RunProfile.h"
#include "storage/RunStore.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hearth::report {

// Everything a report shows about one run, read once.
struct StoredRun {
    RunSummary summary;
    RunStarted started;
    std::vector<EpochMetrics> epochs;
    std::optional<EvalReport> val, test;
    std::vector<Artifact> artifacts;
    std::vector<RankSummary> ranks;  // data-parallel runs: one per process
    std::optional<MemoryBreakdown> memory;
    std::vector<DeviceSummary> devices;  // per rank and device, over the run's samples
};
StoredRun loadRun(const RunStore& store, int64_t run_id);   // StoreError if there is no such run

std::string formatDuration(double seconds);     // "12.5 s", "3 min 05 s", "1 h 02 min"
std::string formatTime(double unix_seconds);    // local time "2024-05-01 12:00:03"; "-" for 0
std::string formatNumber(double value);         // shortest text that reads back exactly
std::string formatFixed(double value, int digits);   // printf "%.*f"
std::string formatPercent(double share, int digits = 1);   // 0.123 -> "12.3 %"
std::string runLabel(const RunSummary& run);          // "#12 fashion-cnn"
// Achieved model FLOPs per device and MFU: "412.3 TFLOP/s (MFU 41.7%)", "0.21 TFLOP/s" without a
// peak (a CPU), "-" without a FLOP count. Negative values are unknown, as events carry them.
// Without the unit ("412.3 (MFU 41.7%)") where a caption names it.
std::string formatCompute(std::optional<double> tflops, std::optional<double> mfu, bool with_unit = true);
// A run's peak memory over its `processes`: "433.3 MiB (the largest of 2 processes)" for a
// data-parallel run (its peak is its largest process's), "368.2 MiB" on one, `none` unknown.
std::string formatPeakMemory(std::optional<int64_t> peak, size_t processes, const std::string& none = "-");
// What a rank held (RankSummary's gradients and optimizer state): `none` for -1, not measured.
std::string formatHeldBytes(int64_t bytes, const std::string& none = "-");

// "a.b.c" -> value text for every leaf of a JSON object (arrays and scalars are leaves).
std::map<std::string, std::string> flattenJson(const std::string& json_text);

// `hearth-cli runs`: id, name, status, started, epochs, best val acc, test acc, train time,
// samples/s; newest first as given.
std::string runsTable(const std::vector<RunSummary>& runs);

// `hearth-cli show`: timings, the step-time and memory breakdowns, devices, config (the keys set
// away from their defaults; `all_config`: every key), effective settings, environment, epochs,
// classification report and confusion matrix.
std::string runText(const StoredRun& run, bool all_config = false);

// Where the time and memory went: the step-time breakdown (the run's mean and, for up to six
// epochs, each epoch's), the memory breakdown, and each device's statistics.
std::string breakdownText(const std::vector<EpochMetrics>& epochs);
std::string memoryText(const MemoryBreakdown& memory);
std::string devicesText(const std::vector<DeviceSummary>& devices);

// `hearth-cli compare`: the config keys that differ, a metric table, and each run's training
// speedup against the first run.
std::string comparisonText(const std::vector<StoredRun>& runs);

// Lightning CSVLogger's metrics.csv layout: epoch,step,train_loss,train_acc,lr,val_loss,val_acc,
// ...; one row per logged step, one row per epoch with the validation metrics. `step` is the
// 0-based optimizer step (global_step - 1), as Lightning writes it.
std::string metricsCsv(const RunStore& store, int64_t run_id);
std::string runJson(const RunStore& store, int64_t run_id);   // everything stored about the run
// The history for spreadsheets and pandas: one row per run (RFC 4180 quoting), its summary columns
// then its requested config flattened ("config.trainer.batch_size"; lists as JSON, null empty).
// A key that only some runs' configs have (older or newer Hearth) is an empty cell in the others.
std::string historyCsv(const std::vector<RunSummary>& runs);
std::string runMarkdown(const StoredRun& run);
// The HTML report (charts, samples, notes on what a partial run lacks): storage/report/RunPage.h.

}  // namespace hearth::report
