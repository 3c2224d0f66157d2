#include "engine/run/TechniqueLadder.h"

#include "engine/config/ConfigSchema.h"
#include "engine/data/Augment.h"

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
        if (strategy != "zero2") shard("zero2", "and only its slice of the gradients");
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
    std::vector<LadderStep> steps;

    ExperimentConfig current = base;
    current.trainer.precision = "32-true";
    current.trainer.num_workers = 0;
    current.trainer.pin_memory = false;
    current.trainer.persistent_workers = false;
    current.trainer.accumulate_grad_batches = 1;
    current.trainer.devices = 1;
    current.trainer.num_nodes = 1;
    current.trainer.strategy = "auto";
    current.data.on_device = false;
    current.data.cache_decoded = false;
    current.trainer.cuda_graph = "off";
    // Text: the baseline pads every sample to data.max_length, as the seed study effectively ran.
    const bool text = isTextKind(base.data.kind);
    if (text) {
        current.data.padding = "max_length";
        current.data.bucket_by_length = false;
    }
    const bool on_cuda = base.trainer.accelerator == "cuda" || (base.trainer.accelerator == "auto" && caps.cuda_available);
    // On a GPU the baseline also steps the optimizer per parameter, in float32 matmuls, with
    // cuDNN's default kernels and NCHW images: each has a rung of its own below.
    if (on_cuda) {
        current.optimizer.implementation = "per_parameter";
        current.trainer.tf32 = false;
        current.trainer.cudnn_benchmark = false;
        current.trainer.channels_last = false;
    }
    current.name = base.name + " · baseline";
    steps.push_back({"baseline",
                     std::string("32-true, loader on the training thread, no accumulation") +
                         (on_cuda ? ", per-parameter optimizer" : "") +
                         (text ? ", every sample padded to " + std::to_string(base.data.max_length) + " tokens" : ""),
                     current, "baseline"});
    std::string so_far;
    // `optional`: a speed technique, left out of the later steps when it measures slower.
    auto rung = [&](const std::string& short_name, const std::string& label, const std::string& change,
                    bool optional = true) {
        so_far += so_far.empty() ? short_name : " + " + short_name;
        current.name = base.name + " · " + so_far;
        steps.push_back({label, change, current, short_name, optional});
    };

    // TF32 tensor cores for float32 matmuls and convolutions (Ampere and later: where bf16 is).
    if (on_cuda && caps.cuda_bf16) {
        current.trainer.tf32 = true;
        rung("tf32", "+ TF32", "float32 matmuls and convolutions on TF32 tensor cores");
    }

    const std::string mixed = (!on_cuda || caps.cuda_bf16) ? "bf16-mixed" : "16-mixed";
    current.trainer.precision = mixed;
    rung(mixed, "+ " + mixed,
         mixed == "bf16-mixed" ? "autocast to bfloat16 (no loss scaling needed)"
                               : "autocast to float16 with a dynamic GradScaler");

    if (on_cuda) {
        current.optimizer.implementation = caps.fused_optimizers ? "fused" : "foreach";
        rung(current.optimizer.implementation + " optimizer", "+ " + current.optimizer.implementation + " optimizer",
             caps.fused_optimizers ? "one fused kernel per optimizer step, unscaling and skipping on the device"
                                   : "multi-tensor foreach kernels instead of a loop over the parameters");
        // Two rungs: autotuning pays off on long runs and costs seconds per new shape in short
        // ones, and NHWC helps wide convolutions on tensor cores but not one-channel 28x28 images.
        if ((base.model.name == "cnn" || isResNetName(base.model.name)) && !base.trainer.deterministic) {
            current.trainer.cudnn_benchmark = true;
            rung("cudnn benchmark", "+ cuDNN benchmark",
                 "cuDNN times its convolution kernels for each new shape and keeps the fastest");
            current.trainer.channels_last = true;
            rung("channels_last", "+ channels_last", "NHWC (channels-last) weights and images");
        }
    }

    // Text: padding each batch only to its longest sample, then batching similar lengths together.
    if (text) {
        current.data.padding = "longest";
        rung("dynamic padding", "+ dynamic padding", "each batch padded to its longest sample");
        current.data.bucket_by_length = true;
        rung("bucketing", "+ length bucketing", "samples of similar length batched together (batches still shuffled)");
    }

    current.trainer.num_workers = std::max<int64_t>(1, options.loader_workers);
    current.trainer.persistent_workers = true;
    if (base.data.kind == "image_folder") {
        // Decoding JPEG/PNG is real loader work: workers, pinned memory and the decoded cache
        // each get a rung of their own.
        rung("workers", "+ workers",
             std::to_string(current.trainer.num_workers) + " loader workers decoding, resizing and cropping, persistent");
        if (on_cuda) {
            current.trainer.pin_memory = true;
            rung("pinned", "+ pinned memory", "batches built in page-locked memory, each next one copied during the step");
        }
        current.data.cache_decoded = true;
        rung("decoded cache", "+ decoded cache",
             "every image decoded once into a uint8 cache file (built on all cores, outside the timing), then read");
    } else {
        current.trainer.pin_memory = true;
        rung("workers", "+ workers",
             std::to_string(current.trainer.num_workers) + " loader workers, persistent" +
                 (on_cuda ? ", pinned memory with each next batch copied during the step" : " (pinned memory n/a on CPU)"));
    }

    // The training set in GPU memory: no loader work and no copy per batch (images and tables).
    if (on_cuda && !text) {
        current.data.on_device = true;
        rung("data on device", "+ data on device",
             "the whole training set held on the GPU, shuffled, batched" +
                 std::string(ImageAugment(base.data.augment).active() ? ", augmented" : "") +
                 " and normalised there");
    }

    // The whole optimizer step as one CUDA graph: one launch instead of hundreds (fixed shapes; text
    // pads per batch above, so it is not captured here).
    if (on_cuda && caps.cuda_graphs && !text && current.optimizer.name != "adagrad") {
        current.trainer.cuda_graph = "step";
        rung("cuda graph", "+ CUDA graph", "the optimizer step captured once as a CUDA graph and replayed");
    }

    if (options.target_batch) {
        const int64_t target = *options.target_batch;
        const int64_t micro = base.trainer.batch_size;
        if (target < micro || target % micro != 0)
            throw ConfigError("target_batch", "must be a multiple of trainer.batch_size (" + std::to_string(micro) +
                                                  "), got " + std::to_string(target));
        current.trainer.accumulate_grad_batches = target / micro;
        rung("accumulation", "+ accumulation",
             "effective batch " + std::to_string(target) + " = " + std::to_string(micro) + " x " +
                 std::to_string(current.trainer.accumulate_grad_batches) + " accumulated micro-batches",
             false);
    }

    // The study's biggest win: data parallelism over every GPU, one process each, the same batch
    // per device (so the global batch grows with the device count, as in the seed study).
    if (on_cuda && caps.distributed && caps.cuda_device_count > 1) {
        const int64_t n = caps.cuda_device_count;
        current.trainer.devices = n;
        current.trainer.strategy = "ddp";
        current.trainer.cuda_graph = "off";  // the reducer's hooks cannot be replayed
        current.name = steps.back().config.name + " + ddp";
        steps.push_back({"+ DDP on " + std::to_string(n) + " devices",
                         std::to_string(n) + " processes (NCCL), " + std::to_string(current.trainer.batch_size) +
                             " per device: global batch " +
                             std::to_string(current.trainer.batch_size * n * current.trainer.accumulate_grad_batches),
                         current, "ddp"});
    }
    return steps;
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

size_t ladderReferenceStep(const std::vector<LadderStep>& steps, size_t k) {
    size_t ref = 0;
    for (size_t i = 1; i < k && i < steps.size(); ++i)
        if (steps[i].kept) ref = i;
    return ref;
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
    return false;
}

}  // namespace hearth
