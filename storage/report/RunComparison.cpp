#include "storage/report/RunComparison.h"

#include "engine/config/ExperimentConfig.h"
#include "engine/metrics/RunProfile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>
#include <set>

namespace hearth::report {
namespace {

using nlohmann::json;

// The text a value shows as: numbers with up to 10 significant digits (as the workbench shows
// them), arrays as compact JSON.
std::string leafText(const json& v) {
    if (v.is_null()) return "null";
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
    if (v.is_number_float()) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.10g", v.get<double>());
        return buffer;
    }
    return v.dump();
}

void flattenInto(const json& object, const std::string& prefix, std::map<std::string, std::string>& out) {
    for (const auto& [key, value] : object.items()) {
        std::string path = prefix;
        if (!path.empty()) path += '.';
        path += key;
        if (value.is_object()) flattenInto(value, path, out);
        else out[path] = leafText(value);
    }
}

bool allEqual(const std::vector<std::string>& values) {
    return std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == values.front(); });
}

}  // namespace

std::map<std::string, std::string> flattenConfig(const std::string& config_json) {
    std::string text = config_json;
    try {
        text = configToJson(configFromJson(config_json));
    } catch (const std::exception&) {
        // Another version's config (or none): compare what it holds.
    }
    std::map<std::string, std::string> out;
    const json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_object()) flattenInto(parsed, "", out);
    return out;
}

std::vector<SettingDifference> differingSettings(const std::vector<std::string>& config_jsons, bool include_name) {
    std::vector<std::map<std::string, std::string>> flat;
    std::set<std::string> seen;
    for (const auto& config : config_jsons) {
        flat.push_back(flattenConfig(config));
        for (const auto& [key, value] : flat.back()) seen.insert(key);
    }
    std::vector<std::string> keys;
    for (const std::string& key : configKeys()) {
        if (seen.erase(key) > 0) keys.push_back(key);
    }
    keys.insert(keys.end(), seen.begin(), seen.end());   // keys this build does not know, sorted
    std::vector<SettingDifference> out;
    for (const auto& key : keys) {
        if (!include_name && key == "name") continue;
        SettingDifference d{key, {}};
        for (const auto& f : flat) {
            const auto it = f.find(key);
            d.values.push_back(it == f.end() ? std::string() : it->second);
        }
        if (!allEqual(d.values)) out.push_back(std::move(d));
    }
    return out;
}

namespace {

// An effective value as runs compare it: the checkpoints' paths ("-> DB.artifacts/12/best.pt")
// name each run's own folder, which tells nothing apart. A setting that did nothing ("n/a: only
// zero3 gathers parameters by block (trainer.strategy is ddp)") compares as "n/a" whatever the
// reason (that is a difference of another setting, listed under it), and so does one a run does
// not record: a run from before the setting existed did not use it either.
std::string comparable(const std::string& value) {
    if (value.empty() || value.rfind("n/a", 0) == 0) return "n/a";
    static const std::regex own_folder("/[0-9]+/(best\\.pt|state-<step>\\.pt)");
    return std::regex_replace(value, own_folder, "/RUN/$1");
}

}  // namespace

std::vector<SettingDifference> differingEffective(const std::vector<std::map<std::string, std::string>>& effective) {
    std::set<std::string> keys;
    for (const auto& e : effective)
        for (const auto& [key, value] : e) keys.insert(key);
    std::vector<SettingDifference> out;
    for (const auto& key : keys) {
        SettingDifference d{key, {}};
        std::vector<std::string> compared;
        for (const auto& e : effective) {
            const auto it = e.find(key);
            d.values.push_back(it == e.end() ? std::string() : it->second);
            compared.push_back(comparable(d.values.back()));
        }
        if (!allEqual(compared)) out.push_back(std::move(d));
    }
    return out;
}

std::optional<double> speedup(const RunSummary& baseline, const RunSummary& run) {
    if (baseline.samples_per_sec && run.samples_per_sec && *baseline.samples_per_sec > 0.0 && *run.samples_per_sec > 0.0)
        return *run.samples_per_sec / *baseline.samples_per_sec;
    if (!baseline.train_time_s || !run.train_time_s || !(*run.train_time_s > 0.0) || !(*baseline.train_time_s > 0.0))
        return std::nullopt;
    return *baseline.train_time_s / *run.train_time_s;
}

std::optional<double> dataWaitShare(const std::vector<EpochMetrics>& epochs) {
    if (const auto mean = meanBreakdown(epochs); mean && mean->step_ms > 0.0)
        return std::clamp(mean->data_wait_ms / mean->step_ms, 0.0, 1.0);
    double weighted = 0.0, time = 0.0;
    for (const auto& e : epochs) {
        weighted += e.data_wait_share * e.epoch_time_s;
        time += e.epoch_time_s;
    }
    if (!(time > 0.0)) return std::nullopt;
    return weighted / time;
}

int curvePointCap(int64_t run_count) {
    const int64_t per_run = 400000 / std::max<int64_t>(1, run_count);
    return static_cast<int>(std::clamp<int64_t>(per_run, 400, 2000));
}

std::vector<int64_t> decimatedIndices(int64_t count, int cap, const std::function<double(int64_t)>& value) {
    std::vector<int64_t> keep;
    cap = std::max(cap, 4);
    if (count <= cap) {
        keep.reserve(static_cast<size_t>(std::max<int64_t>(count, 0)));
        for (int64_t i = 0; i < count; ++i) keep.push_back(i);
        return keep;
    }
    const int64_t buckets = (cap - 2) / 2;
    const int64_t inner = count - 2;   // the first and the last are kept as they are
    keep.reserve(static_cast<size_t>(2 * buckets + 2));
    keep.push_back(0);
    for (int64_t b = 0; b < buckets; ++b) {
        const int64_t begin = 1 + b * inner / buckets;
        const int64_t end = 1 + (b + 1) * inner / buckets;
        int64_t lo = -1, hi = -1;
        double lo_value = 0.0, hi_value = 0.0;
        for (int64_t i = begin; i < end; ++i) {
            const double v = value(i);
            if (std::isnan(v)) continue;
            if (lo < 0 || v < lo_value) {
                lo = i;
                lo_value = v;
            }
            if (hi < 0 || v > hi_value) {
                hi = i;
                hi_value = v;
            }
        }
        if (lo < 0) {
            if (begin < end) keep.push_back(begin);   // all NaN: one point shows the gap
            continue;
        }
        keep.push_back(std::min(lo, hi));
        if (hi != lo) keep.push_back(std::max(lo, hi));
    }
    keep.push_back(count - 1);
    return keep;
}

}  // namespace hearth::report
