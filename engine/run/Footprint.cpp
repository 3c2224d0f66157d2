#include "engine/run/Footprint.h"

#include "engine/config/ByteSize.h"
#include "engine/events/FieldJson.h"
#include "engine/ladder/LadderVerdict.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace hearth {
namespace {

using nlohmann::json;

// The value at `x` on the line through (x0, y0) and (x1, y1), x0 < x1, for a quantity that does
// not shrink as the batch grows: beyond x1 never below y1 (a falling line is the probes' noise).
// With one point (x0 == x1), y1 scaled by x / x1.
double along(double x0, double y0, double x1, double y1, double x) {
    if (x1 == x0) return x1 > 0.0 ? y1 * x / x1 : y1;
    const double y = y0 + (y1 - y0) / (x1 - x0) * (x - x0);
    return x >= x1 ? std::max(y, y1) : y;
}

bool isGpu(const std::string& device) {
    return device.rfind("cuda", 0) == 0;
}

int64_t nonNegative(double bytes) {
    return bytes > 0.0 ? static_cast<int64_t>(std::llround(bytes)) : 0;
}

std::optional<double> relativeError(double predicted, double measured) {
    if (!(measured > 0.0)) return std::nullopt;
    return (predicted - measured) / measured;
}

}  // namespace

double microBatchShareMs(const std::vector<TimedStep>& steps) {
    std::vector<double> shares;
    shares.reserve(steps.size());
    for (const TimedStep& step : steps)
        if (step.micro_batches > 0) shares.push_back(step.ms / static_cast<double>(step.micro_batches));
    return spreadOf(std::move(shares)).median;
}

std::vector<int64_t> footprintProbeSizes(int64_t batch) {
    batch = std::max<int64_t>(batch, 1);
    if (batch == 1) return {1};
    const int64_t low = std::max<int64_t>(batch / 4, 1);
    const int64_t high = std::max<int64_t>(batch / 2, low + 1);
    return {low, std::min(high, batch)};
}

FootprintPrediction extrapolateFootprint(const FootprintBase& base, const std::vector<FootprintProbe>& probes,
                                         int64_t batch, int64_t accumulate) {
    if (probes.empty()) throw std::invalid_argument("a footprint needs at least one probe");
    std::vector<FootprintProbe> sorted = probes;
    std::sort(sorted.begin(), sorted.end(),
              [](const FootprintProbe& a, const FootprintProbe& b) { return a.batch_size < b.batch_size; });
    const FootprintProbe& hi = sorted.back();
    const FootprintProbe& lo = sorted.size() > 1 ? sorted[sorted.size() - 2] : hi;
    const auto x0 = static_cast<double>(lo.batch_size), x1 = static_cast<double>(hi.batch_size);
    const auto x = static_cast<double>(batch);

    FootprintPrediction p;
    p.device = base.device;
    p.batch_size = batch;
    p.accumulate = std::max<int64_t>(accumulate, 1);
    p.probes = sorted;
    MemoryBreakdown& m = p.memory;
    m.device = base.device;
    m.parameters_bytes = base.parameters_bytes;
    m.gradients_bytes = base.gradients_bytes;
    m.optimizer_state_bytes = base.optimizer_state_bytes;
    m.other_bytes = base.other_bytes;
    double activations = along(x0, static_cast<double>(lo.activations_bytes), x1,
                               static_cast<double>(hi.activations_bytes), x);
    if (hi.pass_bytes > 0) {
        double optimizer = 0.0;
        for (const auto& probe : sorted) optimizer = std::max(optimizer, static_cast<double>(probe.optimizer_bytes));
        activations = std::max(optimizer, along(x0, static_cast<double>(lo.pass_bytes), x1,
                                                static_cast<double>(hi.pass_bytes), x));
    }
    m.activations_bytes = nonNegative(activations);
    if (isGpu(base.device) && hi.kept_bytes > 0) {
        // The run's breakdown on a GPU: activations are what the forward keeps; the peak's other
        // temporaries are other. Same peak, split as the run splits it.
        const int64_t kept = std::min(m.activations_bytes, nonNegative(along(x0, static_cast<double>(lo.kept_bytes), x1,
                                                                              static_cast<double>(hi.kept_bytes), x)));
        p.temporaries_bytes = m.activations_bytes - kept;
        m.other_bytes += p.temporaries_bytes;
        m.activations_bytes = kept;
    }
    m.reserved_unused_bytes = nonNegative(along(x0, static_cast<double>(lo.workspace_bytes), x1,
                                                static_cast<double>(hi.workspace_bytes), x));
    m.peak_bytes = m.parameters_bytes + m.gradients_bytes + m.optimizer_state_bytes + m.activations_bytes +
                   m.other_bytes;
    // The host's peak RSS holds the workspace (the heap's slack, oneDNN's scratchpads) inside it;
    // a GPU's allocated peak does not (the reserve beyond it is the caching allocator's).
    if (!isGpu(base.device)) m.peak_bytes += m.reserved_unused_bytes;
    p.capacity_bytes = base.capacity_bytes;
    p.capacity = base.capacity;
    p.fits = base.capacity_bytes <= 0 || footprintNeededBytes(p) <= base.capacity_bytes;
    // A step takes no less at a larger batch: where the probes' times fall (noise), the larger
    // probe's time per sample.
    const bool falling = hi.step_ms <= lo.step_ms && x > x1;
    const double micro_ms = falling ? hi.step_ms * x / x1 : along(x0, lo.step_ms, x1, hi.step_ms, x);
    p.step_ms = std::max(micro_ms, 0.0) * static_cast<double>(p.accumulate);
    return p;
}

int64_t footprintNeededBytes(const FootprintPrediction& p) {
    return isGpu(p.device) ? p.memory.peak_bytes + p.memory.reserved_unused_bytes : p.memory.peak_bytes;
}

FootprintBase footprintBaseOf(const FootprintPrediction& p) {
    FootprintBase base;
    base.device = p.device;
    base.parameters_bytes = p.memory.parameters_bytes;
    base.gradients_bytes = p.memory.gradients_bytes;
    base.optimizer_state_bytes = p.memory.optimizer_state_bytes;
    base.other_bytes = p.memory.other_bytes - p.temporaries_bytes;
    base.capacity_bytes = p.capacity_bytes;
    base.capacity = p.capacity;
    return base;
}

bool footprintProbeRanOutOfMemory(const std::string& failure) {
    return failure.find(kFootprintOutOfMemory) != std::string::npos;
}

std::string footprintVerdict(const FootprintPrediction& p) {
    if (p.fits) return {};
    return "predicted peak " + formatBytes(footprintNeededBytes(p)) + " (activations " + formatBytes(p.memory.activations_bytes) +
           " at batch " + std::to_string(p.batch_size) + ") > " +
           (p.capacity.empty() ? formatBytes(p.capacity_bytes) : p.capacity);
}

FootprintCheck checkFootprint(const FootprintPrediction& p, const MemoryBreakdown& measured,
                              const std::vector<EpochMetrics>& epochs) {
    FootprintCheck c;
    c.measured_peak_bytes = measured.peak_bytes;
    if (!epochs.empty() && epochs.back().samples_per_sec > 0.0) {
        const double samples = static_cast<double>(std::max<int64_t>(p.batch_size, 1) * p.accumulate *
                                                   std::max<int64_t>(p.world_size, 1));
        c.measured_step_ms = 1000.0 * samples / epochs.back().samples_per_sec;
    }
    if (!measured.device.empty()) {
        c.peak_error = relativeError(static_cast<double>(p.memory.peak_bytes), static_cast<double>(measured.peak_bytes));
        c.activations_error = relativeError(static_cast<double>(p.memory.activations_bytes),
                                            static_cast<double>(measured.activations_bytes));
    }
    if (p.step_ms > 0.0) c.step_error = relativeError(p.step_ms, c.measured_step_ms);
    return c;
}

std::string footprintErrorText(const std::optional<double>& error) {
    if (!error) return "—";
    char text[32];
    std::snprintf(text, sizeof text, "%+.1f%%", 100.0 * *error);
    return text;
}

namespace {

// One description of each field the JSON form carries (fields::toJson/fromJson write and read them).
const std::vector<fields::Field<FootprintProbe>>& probeFields() {
    static const std::vector<fields::Field<FootprintProbe>> table = {
        fields::field<&FootprintProbe::batch_size>("batch_size"),
        fields::field<&FootprintProbe::peak_bytes>("peak_bytes"),
        fields::field<&FootprintProbe::activations_bytes>("activations_bytes"),
        fields::field<&FootprintProbe::workspace_bytes>("workspace_bytes"),
        fields::field<&FootprintProbe::pass_bytes>("pass_bytes"),
        fields::field<&FootprintProbe::optimizer_bytes>("optimizer_bytes"),
        fields::field<&FootprintProbe::kept_bytes>("kept_bytes"),
        fields::field<&FootprintProbe::step_ms>("step_ms"),
        fields::field<&FootprintProbe::timed_micro_batches>("timed_micro_batches"),
    };
    return table;
}

const std::vector<fields::Field<FootprintPrediction>>& predictionFields() {
    static const std::vector<fields::Field<FootprintPrediction>> table = {
        fields::field<&FootprintPrediction::device>("device"),
        fields::field<&FootprintPrediction::batch_size>("batch_size"),
        fields::field<&FootprintPrediction::accumulate>("accumulate"),
        fields::field<&FootprintPrediction::world_size>("world_size"),
        fields::field<&FootprintPrediction::capacity_bytes>("capacity_bytes"),
        fields::field<&FootprintPrediction::capacity>("capacity"),
        fields::field<&FootprintPrediction::fits>("fits"),
        fields::field<&FootprintPrediction::step_ms>("step_ms"),
        fields::field<&FootprintPrediction::temporaries_bytes>("temporaries_bytes"),
        fields::field<&FootprintPrediction::probe_s>("probe_s"),
    };
    return table;
}

}  // namespace

std::string footprintJson(const FootprintPrediction& p) {
    json j = fields::toJson(predictionFields(), p);
    j["memory"] = fields::toJson(fields::memoryFields(), p.memory);
    j["probes"] = json::array();
    for (const auto& probe : p.probes) j["probes"].push_back(fields::toJson(probeFields(), probe));
    return j.dump();
}

FootprintPrediction footprintFromJson(const std::string& text) {
    const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) throw std::invalid_argument("a footprint prediction is a JSON object");
    try {
        FootprintPrediction p;
        fields::fromJson(predictionFields(), j, p);
        if (j.contains("memory")) fields::fromJson(fields::memoryFields(), j.at("memory"), p.memory);
        for (const auto& probe : j.value("probes", json::array())) {
            FootprintProbe f;
            fields::fromJson(probeFields(), probe, f);
            p.probes.push_back(f);
        }
        return p;
    } catch (const json::exception& e) {
        throw std::invalid_argument(std::string("a footprint prediction: ") + e.what());
    }
}

}  // namespace hearth
