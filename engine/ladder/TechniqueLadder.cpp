#include "engine/ladder/TechniqueLadder.h"

#include "engine/config/ConfigSchema.h"
#include "engine/ladder/LadderPlan.h"

#include <algorithm>
#include <cstdio>

namespace hearth {
namespace {

std::vector<LadderStep> memoryLadder(const ExperimentConfig& base, const DeviceCapabilities& caps) {
    std::vector<LadderStep> steps;
    ExperimentConfig current = base;
    current.trainer.set_grads_to_none = false;
    current.model.inplace_activations = false;
    current.model.gradient_checkpointing = false;
    current.name = base.name + " · memory baseline";
    steps.push_back({"baseline", "gradients zeroed in place, activations kept for backward", current, "memory baseline"});

    std::string so_far;
    const auto add = [&](const std::string& label, const std::string& short_name, const std::string& change) {
        so_far += (so_far.empty() ? "" : " + ") + short_name;
        current.name = base.name + " · " + so_far;
        steps.push_back({label, change, current, short_name});
    };
    const TrainerConfig resolved = resolveTrainer(base.trainer, caps);
    const std::string strategy = resolved.strategy;
    const bool processes = resolved.devices.value_or(1) * resolved.num_nodes > 1;
    // Under ddp and zero1 the reducer's buckets keep the gradients' memory: no memory rung there.
    if (strategy != "ddp" && strategy != "zero1") {
        current.trainer.set_grads_to_none = true;
        add("+ grads set to none", "grads to none",
            "gradients dropped after each step: backward allocates them, the forward pass runs without them");
    }
    const bool resnet = isResNetName(base.model.name);
    if (base.model.name == "cnn" || base.model.name == "mlp" || resnet) {
        current.model.inplace_activations = true;
        add("+ in-place ReLU", "in-place ReLU", "each ReLU overwrites its input instead of allocating its output");
    }
    // Several processes: each sharding strategy a rung further (ZeRO stages 1, 2, 3), before
    // checkpointing, so each shows what sharding one more kind of state saves per process.
    if (processes && (strategy == "ddp" || strategy == "zero1" || strategy == "zero2")) {
        const auto shard = [&](const std::string& name, const std::string& change) {
            current.trainer.strategy = name;
            add("+ " + name, name, change);
        };
        if (strategy == "ddp") shard("zero1", "each process keeps only its share of the optimizer state");
        if (strategy != "zero2") {
            // Here (ddp or zero1) the baseline zeroes the gradients in place and no rung dropped
            // them (the buckets hold them either way); zero2 keeps a full gradient only while it
            // is reduced, so from here on they are dropped, or each would stay beside its slice.
            current.trainer.set_grads_to_none = true;
            shard("zero2", "and only its slice of the gradients (the full ones dropped after each reduce)");
        }
        shard("zero3", "and only its slice of the parameters, each block gathered when it runs");
    }
    // On GPUs: the sharded optimizer's state and master copy in host memory (ZeRO-Offload). On the
    // CPU it would move nothing.
    if (processes && trainsOnCuda(resolved, caps) && !base.trainer.offload_optimizer) {
        current.trainer.offload_optimizer = true;
        add("+ offload", "offload", "the optimizer state and its master copy in host memory, stepped on the CPU");
    }
    current.model.gradient_checkpointing = true;
    add("+ checkpointing", "checkpointing",
        base.model.name == "cnn"   ? "each conv block keeps its input only and is recomputed in backward"
        : resnet                   ? "each residual block keeps its input only and is recomputed in backward"
        : base.model.name == "mlp" ? "each hidden layer keeps its input only and is recomputed in backward"
                                   : "each encoder layer keeps its input only and is recomputed in backward");
    return steps;
}

}  // namespace

std::optional<LadderKind> ladderKindFromName(const std::string& name) {
    if (name == "speed") return LadderKind::Speed;
    if (name == "memory") return LadderKind::Memory;
    return std::nullopt;
}

std::string ladderKindName(LadderKind kind) {
    return kind == LadderKind::Memory ? "memory" : "speed";
}

std::vector<LadderStep> buildTechniqueLadder(const ExperimentConfig& base, const DeviceCapabilities& caps,
                                             const LadderOptions& options) {
    if (options.kind == LadderKind::Memory) return memoryLadder(base, caps);
    LadderPlan plan;
    plan.target_batch = options.target_batch;
    plan.loader_workers = options.loader_workers;
    return buildPlannedLadder(base, caps, plan);
}

LadderMeasure ladderMeasureOf(double fit_s, const std::vector<EpochMetrics>& epochs) {
    LadderMeasure m;
    m.fit_s = fit_s;
    if (epochs.size() >= 2) m.steady_samples_per_sec = epochs.back().samples_per_sec;
    return m;
}

bool ladderRungSlower(const LadderMeasure& step, const LadderMeasure& reference) {
    const double fit = step.fit_s > 0 && reference.fit_s > 0 ? reference.fit_s / step.fit_s : 0.0;
    if (step.steady_samples_per_sec > 0 && reference.steady_samples_per_sec > 0) {
        const double steady = step.steady_samples_per_sec / reference.steady_samples_per_sec;
        if (steady < kLadderSlowerBelow) return true;
        if (steady >= 1.0 / kLadderSlowerBelow) return false;   // faster once warmed up: pays off in longer runs
        return fit > 0.0 && fit < kLadderSlowerBelow;           // no steady gain: its warm-up is all it adds
    }
    return fit > 0.0 && fit < kLadderSlowerBelow;
}

std::string ladderSpeedupText(const LadderMeasure& step, const LadderMeasure& reference) {
    const auto ratio = [](const char* what, double x) {
        char text[48];
        std::snprintf(text, sizeof text, "%s %.2fx", what, x);
        return std::string(text);
    };
    std::vector<std::string> parts;
    if (step.steady_samples_per_sec > 0 && reference.steady_samples_per_sec > 0)
        parts.push_back(ratio("steady", step.steady_samples_per_sec / reference.steady_samples_per_sec));
    if (step.fit_s > 0 && reference.fit_s > 0) parts.push_back(ratio("whole fit", reference.fit_s / step.fit_s));
    if (parts.empty()) return "no timing";
    return parts.size() == 1 ? parts[0] : parts[0] + ", " + parts[1];
}

namespace {

// "<experiment> · a + b + c" without the part `short_name`.
std::string nameWithout(const std::string& name, const std::string& short_name) {
    const std::string dot = " · ";
    const size_t at = name.rfind(dot);
    if (at == std::string::npos) return name;
    const std::string tail = name.substr(at + dot.size());
    std::string joined;
    for (size_t from = 0; from <= tail.size();) {
        const size_t plus = std::min(tail.find(" + ", from), tail.size());
        if (const std::string part = tail.substr(from, plus - from); part != short_name)
            joined += (joined.empty() ? "" : " + ") + part;
        from = plus + 3;
    }
    return name.substr(0, at) + dot + (joined.empty() ? "baseline" : joined);
}

}  // namespace

bool settleLadderStep(std::vector<LadderStep>& steps, size_t k, const std::vector<LadderMeasure>& measures) {
    if (k == 0 || k >= steps.size() || k >= measures.size() || !steps[k].optional) return true;
    const size_t ref = ladderReferenceStep(steps, k);
    if (!ladderRungSlower(measures[k], measures[ref])) return true;
    leaveOutLadderStep(steps, k);
    return false;
}

void leaveOutLadderStep(std::vector<LadderStep>& steps, size_t k) {
    if (k == 0 || k >= steps.size()) return;
    const size_t ref = ladderReferenceStep(steps, k);
    steps[k].kept = false;

    // The keys this rung changed (step k is its reference step's config plus this rung: earlier
    // dropped rungs were already taken out of it), each with its value before and after.
    struct Change {
        std::string key, before, after;
    };
    std::vector<Change> changes;
    for (const auto& key : configSchema()) {
        if (key.key == "name") continue;
        std::string before = configValueJson(key, steps[ref].config), after = configValueJson(key, steps[k].config);
        if (before != after) changes.push_back({key.key, std::move(before), std::move(after)});
    }
    for (size_t j = k + 1; j < steps.size(); ++j) {
        auto& later = steps[j].config;
        for (const auto& change : changes) {
            // A later rung that set the key itself keeps its value.
            if (configValueJson(*findConfigKey(change.key), later) == change.after)
                applyOverride(later, change.key + "=" + change.before);
        }
        later.name = nameWithout(later.name, steps[k].short_name);
    }
}

LadderProbeOutcome settleLadderPrediction(std::vector<LadderStep>& steps, size_t k, LadderKind kind,
                                          const std::optional<FootprintPrediction>& prediction,
                                          const std::string& failure) {
    LadderStep& step = steps.at(k);
    step.prediction = prediction;
    if (prediction) {
        if (prediction->fits) return LadderProbeOutcome::Run;
        step.not_run = footprintVerdict(*prediction);
    } else if (footprintProbeRanOutOfMemory(failure)) {
        step.not_run = failure;
    } else {
        return LadderProbeOutcome::Run;
    }
    if (kind == LadderKind::Memory) return LadderProbeOutcome::NotRun;
    if (k == 0) return LadderProbeOutcome::Refused;
    leaveOutLadderStep(steps, k);
    return LadderProbeOutcome::NotRun;
}

}  // namespace hearth
