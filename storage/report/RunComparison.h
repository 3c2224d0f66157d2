#pragma once
// What comparing runs means, once, for every view of it: the settings that differ (in the
// config schema's order), the training speedup against a baseline run, a run's share of step
// time spent waiting for data, and the decimation that keeps hundreds of long curves cheap.
// Used by the comparison report, the workbench's Compare view and `hearth-cli compare`. No Qt.

#include "storage/RunStore.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hearth::report {

struct SettingDifference {
    std::string key;                   // "trainer.precision"
    std::vector<std::string> values;   // one per run, "" when a run's config lacks the key
};

// A config's leaves as dotted keys and text ("0.001", "true", "[32,64]", strings unquoted,
// "null"), after reading it as this build's ExperimentConfig (so that a key a config leaves out
// shows its default); a config this build cannot read is flattened as it is.
std::map<std::string, std::string> flattenConfig(const std::string& config_json);

// The keys whose values are not all equal: config schema order, then unknown keys sorted.
// `name` is left out unless asked for (runs differ by name).
std::vector<SettingDifference> differingSettings(const std::vector<std::string>& config_jsons,
                                                 bool include_name = false);
// The same over effective settings ("what ran"), keys sorted. A setting that did nothing in each
// run ("n/a…", for whatever reason, or not recorded by an older run) does not differ.
std::vector<SettingDifference> differingEffective(const std::vector<std::map<std::string, std::string>>& effective);

// How much faster `run` trained than `baseline` (2.0: twice as fast): the ratio of their training
// throughputs (samples/s over each fit's training time, validation aside). For runs that trained
// the same samples that is the ratio of their training times; unlike that ratio it still holds
// when they did not (other epochs or data limit, an early stop, a stopped run). Where either has
// no throughput, the ratio of training times; none when that is missing too.
std::optional<double> speedup(const RunSummary& baseline, const RunSummary& run);

// The share of training step time spent waiting for the loader: the step-time breakdown's
// (warm-up epoch left out) when profiled, else the epochs' own shares weighted by their time.
std::optional<double> dataWaitShare(const std::vector<EpochMetrics>& epochs);

// The most points a compared run's curve keeps: 2,000 up to 200 runs, fewer beyond (400 at
// 1,000 runs), so that a comparison never holds or draws more than ~400,000 points per metric.
int curvePointCap(int64_t run_count);

// Indices of the points to keep of `count` values: the first and the last, and the minimum and
// the maximum of each of (cap - 2) / 2 equal buckets in between, in order (spikes survive). All
// of them when count <= cap. NaNs are never a bucket's extreme unless all of it is NaN.
std::vector<int64_t> decimatedIndices(int64_t count, int cap, const std::function<double(int64_t)>& value);

}  // namespace hearth::report
