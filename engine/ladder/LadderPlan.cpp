#include "engine/ladder/LadderPlan.h"

#include "engine/data/Augment.h"

#include <algorithm>

namespace hearth {
namespace {

struct Context {
    const ExperimentConfig& base;
    const DeviceCapabilities& caps;
    const LadderPlan& plan;
    bool on_cuda = false;
    bool text = false;
    bool image_folder = false;
    bool conv = false;      // a model with convolutions (cudnn benchmark, channels_last)
    int64_t gpus = 0;
};

// What applying a rung made of the step: its short name (the part of run names), label, words.
struct RungText {
    std::string short_name, label, change;
};

struct RungDef {
    const char* id;
    const char* fallback_label;   // the label listed when the rung does not apply
    bool speed;                   // on by default where it applies; false: it trades speed for memory
    bool optional;                // may be left out of later steps when it measures slower
    std::string (*unavailable)(const Context&);   // why not; "" where it applies
    RungText (*apply)(const Context&, ExperimentConfig&);
};

std::string onlyOnGpus(const Context& x, const std::string& what) {
    return x.on_cuda ? "" : what + " (this experiment trains on the CPU)";
}

std::string severalGpus(const Context& x) {
    if (!x.on_cuda) return "needs several GPUs (this experiment trains on the CPU)";
    if (!x.caps.distributed) return "this build has no c10d (distributed training)";
    if (x.gpus < 2) return "needs several GPUs (this machine has " + std::to_string(x.gpus) + ")";
    return "";
}

std::string mixedPrecision(const Context& x) {
    return (!x.on_cuda || x.caps.cuda_bf16) ? "bf16-mixed" : "16-mixed";
}

// Every strategy rung runs one process per GPU, the batch per device kept (the global batch grows
// with the device count, as in the seed study); a captured step cannot replay the reducer's hooks.
RungText onEveryGpu(const Context& x, ExperimentConfig& c, const std::string& strategy, const std::string& change) {
    c.trainer.devices = x.gpus;
    c.trainer.strategy = strategy;
    c.trainer.cuda_graph = "off";
    const std::string label = strategy == "ddp" ? "DDP" : strategy;
    return {strategy, "+ " + label + " on " + std::to_string(x.gpus) + " devices",
            std::to_string(x.gpus) + " processes (NCCL), " + std::to_string(c.trainer.batch_size) +
                " per device: global batch " +
                std::to_string(c.trainer.batch_size * x.gpus * c.trainer.accumulate_grad_batches) + "; " + change};
}

const std::vector<RungDef>& rungDefs() {
    static const std::vector<RungDef> defs{
        {"tf32", "+ TF32", true, true,
         [](const Context& x) -> std::string {
             if (!x.on_cuda) return onlyOnGpus(x, "a GPU's tensor cores");
             return x.caps.cuda_bf16 ? "" : "TF32 needs an Ampere or later GPU";
         },
         [](const Context&, ExperimentConfig& c) -> RungText {
             c.trainer.tf32 = true;
             return {"tf32", "+ TF32", "float32 matmuls and convolutions on TF32 tensor cores"};
         }},
        {"mixed", "+ mixed precision", true, true, [](const Context&) { return std::string(); },
         [](const Context& x, ExperimentConfig& c) -> RungText {
             const std::string mixed = mixedPrecision(x);
             c.trainer.precision = mixed;
             return {mixed, "+ " + mixed,
                     mixed == "bf16-mixed" ? "autocast to bfloat16 (no loss scaling needed)"
                                           : "autocast to float16 with a dynamic GradScaler"};
         }},
        {"optimizer", "+ fused optimizer", true, true,
         [](const Context& x) {
             return onlyOnGpus(x, "compares the fused and foreach kernels on a GPU");
         },
         [](const Context& x, ExperimentConfig& c) -> RungText {
             c.optimizer.implementation = x.caps.fused_optimizers ? "fused" : "foreach";
             return {c.optimizer.implementation + " optimizer", "+ " + c.optimizer.implementation + " optimizer",
                     x.caps.fused_optimizers ? "one fused kernel per optimizer step, unscaling and skipping on the device"
                                             : "multi-tensor foreach kernels instead of a loop over the parameters"};
         }},
        // Two rungs: autotuning pays off on long runs and costs seconds per new shape in short
        // ones, and NHWC helps wide convolutions on tensor cores but not one-channel 28x28 images.
        {"cudnn", "+ cuDNN benchmark", true, true,
         [](const Context& x) -> std::string {
             if (!x.on_cuda) return onlyOnGpus(x, "a cuDNN setting");
             if (!x.conv) return x.base.model.name + " has no convolutions";
             return x.base.trainer.deterministic ? "trainer.deterministic rules out cuDNN's autotuning" : "";
         },
         [](const Context&, ExperimentConfig& c) -> RungText {
             c.trainer.cudnn_benchmark = true;
             return {"cudnn benchmark", "+ cuDNN benchmark",
                     "cuDNN times its convolution kernels for each new shape and keeps the fastest"};
         }},
        {"channels_last", "+ channels_last", true, true,
         [](const Context& x) -> std::string {
             if (!x.on_cuda) return onlyOnGpus(x, "a layout for a GPU's tensor cores");
             if (!x.conv) return x.base.model.name + " has no convolutions";
             return x.base.trainer.deterministic ? "trainer.deterministic: the ladder keeps cuDNN's default kernels" : "";
         },
         [](const Context&, ExperimentConfig& c) -> RungText {
             c.trainer.channels_last = true;
             return {"channels_last", "+ channels_last", "NHWC (channels-last) weights and images"};
         }},
        {"padding", "+ dynamic padding", true, true,
         [](const Context& x) { return x.text ? std::string() : "pads text batches (the data is " + x.base.data.kind + ")"; },
         [](const Context&, ExperimentConfig& c) -> RungText {
             c.data.padding = "longest";
             return {"dynamic padding", "+ dynamic padding", "each batch padded to its longest sample"};
         }},
        {"bucketing", "+ length bucketing", true, true,
         [](const Context& x) {
             return x.text ? std::string() : "batches texts of similar length (the data is " + x.base.data.kind + ")";
         },
         [](const Context&, ExperimentConfig& c) -> RungText {
             c.data.padding = "longest";   // bucketing pays off only when batches are padded to their longest
             c.data.bucket_by_length = true;
             return {"bucketing", "+ length bucketing", "samples of similar length batched together (batches still shuffled)"};
         }},
        {"workers", "+ workers", true, true, [](const Context&) { return std::string(); },
         [](const Context& x, ExperimentConfig& c) -> RungText {
             c.trainer.num_workers = std::max<int64_t>(1, x.plan.loader_workers);
             c.trainer.persistent_workers = true;
             const std::string n = std::to_string(c.trainer.num_workers);
             if (x.image_folder)
                 return {"workers", "+ workers", n + " loader workers decoding, resizing and cropping, persistent"};
             c.trainer.pin_memory = true;
             return {"workers", "+ workers",
                     n + " loader workers, persistent" +
                         (x.on_cuda ? ", pinned memory with each next batch copied during the step"
                                    : " (pinned memory n/a on CPU)")};
         }},
        {"pinned", "+ pinned memory", true, true,
         [](const Context& x) -> std::string {
             if (!x.on_cuda) return onlyOnGpus(x, "speeds copies to a GPU");
             return x.image_folder ? "" : "part of the workers rung for " + x.base.data.kind + " data";
         },
         [](const Context&, ExperimentConfig& c) -> RungText {
             c.trainer.pin_memory = true;
             return {"pinned", "+ pinned memory", "batches built in page-locked memory, each next one copied during the step"};
         }},
        {"decoded_cache", "+ decoded cache", true, true,
         [](const Context& x) {
             return x.image_folder ? std::string() : "caches decoded images (the data is " + x.base.data.kind + ")";
         },
         [](const Context&, ExperimentConfig& c) -> RungText {
             c.data.cache_decoded = true;
             return {"decoded cache", "+ decoded cache",
                     "every image decoded once into a uint8 cache file (built on all cores, outside the timing), then read"};
         }},
        {"on_device", "+ data on device", true, true,
         [](const Context& x) -> std::string {
             if (!x.on_cuda) return onlyOnGpus(x, "holds the training set on a GPU");
             return x.text ? "text batches are padded per batch on the host" : "";
         },
         [](const Context& x, ExperimentConfig& c) -> RungText {
             c.data.on_device = true;
             return {"data on device", "+ data on device",
                     "the whole training set held on the GPU, shuffled, batched" +
                         std::string(ImageAugment(x.base.data.augment).active() ? ", augmented" : "") +
                         " and normalised there"};
         }},
        // The whole optimizer step as one CUDA graph: one launch instead of hundreds (fixed shapes).
        {"cuda_graph", "+ CUDA graph", true, true,
         [](const Context& x) -> std::string {
             if (!x.on_cuda) return onlyOnGpus(x, "replays a GPU's captured step");
             if (!x.caps.cuda_graphs) return "this LibTorch build cannot capture CUDA graphs";
             if (x.text) return "text batches change shape from batch to batch";
             return x.base.optimizer.name == "adagrad" ? "adagrad has no capturable kernel" : "";
         },
         [](const Context&, ExperimentConfig& c) -> RungText {
             c.trainer.cuda_graph = "step";
             return {"cuda graph", "+ CUDA graph", "the optimizer step captured once as a CUDA graph and replayed"};
         }},
        {"accumulation", "+ accumulation", true, false,
         [](const Context& x) -> std::string {
             return x.plan.target_batch ? "" : "needs a target batch (--target-batch, a multiple of trainer.batch_size)";
         },
         [](const Context& x, ExperimentConfig& c) -> RungText {
             const int64_t target = *x.plan.target_batch;
             const int64_t micro = x.base.trainer.batch_size;
             if (target < micro || target % micro != 0)
                 throw ConfigError("target_batch", "must be a multiple of trainer.batch_size (" + std::to_string(micro) +
                                                       "), got " + std::to_string(target));
             c.trainer.accumulate_grad_batches = target / micro;
             return {"accumulation", "+ accumulation",
                     "effective batch " + std::to_string(target) + " = " + std::to_string(micro) + " x " +
                         std::to_string(c.trainer.accumulate_grad_batches) + " accumulated micro-batches"};
         }},
        {"checkpointing", "+ activation checkpointing", false, true,
         [](const Context& x) {
             return x.base.model.name == "torchscript" ? std::string("a TorchScript model runs its forward as written")
                                                       : std::string();
         },
         [](const Context&, ExperimentConfig& c) -> RungText {
             c.model.gradient_checkpointing = true;
             return {"checkpointing", "+ activation checkpointing",
                     "each block keeps its input only and is recomputed in backward (memory, at a cost in time)"};
         }},
        // The study's biggest win: data parallelism over every GPU, then its sharded forms.
        {"ddp", "+ DDP on every GPU", true, false, severalGpus,
         [](const Context& x, ExperimentConfig& c) {
             return onEveryGpu(x, c, "ddp", "gradients all-reduced during backward");
         }},
        {"zero1", "+ zero1 on every GPU", false, false, severalGpus,
         [](const Context& x, ExperimentConfig& c) {
             return onEveryGpu(x, c, "zero1", "each process keeps its share of the optimizer state (memory)");
         }},
        {"zero2", "+ zero2 on every GPU", false, false, severalGpus,
         [](const Context& x, ExperimentConfig& c) {
             return onEveryGpu(x, c, "zero2", "and only its slice of the gradients (memory; the seed study's ZeRO-2)");
         }},
        {"zero3", "+ zero3 on every GPU", false, false, severalGpus,
         [](const Context& x, ExperimentConfig& c) {
             return onEveryGpu(x, c, "zero3", "and only its slice of the parameters, gathered block by block (memory)");
         }},
        {"offload", "+ optimizer offload", false, false, severalGpus,
         [](const Context& x, ExperimentConfig& c) -> RungText {
             if (c.trainer.strategy != "zero1" && c.trainer.strategy != "zero2" && c.trainer.strategy != "zero3")
                 (void)onEveryGpu(x, c, "zero2", "");   // offload needs a sharded optimizer
             c.trainer.offload_optimizer = true;
             return {"offload", "+ optimizer offload",
                     "the " + c.trainer.strategy +
                         " optimizer's state and master copy in host memory, stepped on the CPU (memory, at a cost in "
                         "time)"};
         }},
        {"pipeline", "+ pipeline on every GPU", false, false,
         [](const Context& x) -> std::string {
             if (std::string why = severalGpus(x); !why.empty()) return why;
             return x.base.model.name != "torchscript"
                        ? ""
                        : "the ladder cuts the built-in models only (a TorchScript module can be cut when it is a "
                          "scripted nn.Sequential: set trainer.strategy=pipeline yourself)";
         },
         [](const Context& x, ExperimentConfig& c) -> RungText {
             (void)onEveryGpu(x, c, "pipeline", "");
             return {"pipeline", "+ pipeline on " + std::to_string(x.gpus) + " devices",
                     "the model cut into " + std::to_string(x.gpus) + " stages, one per GPU, micro-batches flowing "
                                                                       "through them (memory)"};
         }},
    };
    return defs;
}

Context contextOf(const ExperimentConfig& base, const DeviceCapabilities& caps, const LadderPlan& plan) {
    Context x{base, caps, plan};
    x.on_cuda = base.trainer.accelerator == "cuda" || (base.trainer.accelerator == "auto" && caps.cuda_available);
    x.text = isTextKind(base.data.kind);
    x.image_folder = base.data.kind == "image_folder";
    x.conv = base.model.name == "cnn" || isResNetName(base.model.name);
    x.gpus = caps.cuda_device_count;
    return x;
}

// The baseline: 32-true on one device, the loader on the training thread, no accumulation, and on
// a GPU the per-parameter optimizer in float32 matmuls with cuDNN's default kernels and NCHW
// images; text padded to data.max_length, as the seed study effectively ran.
LadderStep baselineStep(const Context& x) {
    ExperimentConfig c = x.base;
    c.trainer.precision = "32-true";
    c.trainer.num_workers = 0;
    c.trainer.pin_memory = false;
    c.trainer.persistent_workers = false;
    c.trainer.accumulate_grad_batches = 1;
    c.trainer.devices = 1;
    c.trainer.num_nodes = 1;
    c.trainer.strategy = "auto";
    c.trainer.offload_optimizer = false;
    c.model.gradient_checkpointing = false;
    c.data.on_device = false;
    c.data.cache_decoded = false;
    c.trainer.cuda_graph = "off";
    if (x.text) {
        c.data.padding = "max_length";
        c.data.bucket_by_length = false;
    }
    if (x.on_cuda) {
        c.optimizer.implementation = "per_parameter";
        c.trainer.tf32 = false;
        c.trainer.cudnn_benchmark = false;
        c.trainer.channels_last = false;
    }
    c.name = x.base.name + " · baseline";
    return {"baseline",
            std::string("32-true, loader on the training thread, no accumulation") +
                (x.on_cuda ? ", per-parameter optimizer" : "") +
                (x.text ? ", every sample padded to " + std::to_string(x.base.data.max_length) + " tokens" : ""),
            c, "baseline"};
}

}  // namespace

std::vector<LadderRung> ladderRungs(const ExperimentConfig& base, const DeviceCapabilities& caps,
                                    const LadderPlan& plan) {
    const Context x = contextOf(base, caps, plan);
    const LadderStep baseline = baselineStep(x);
    std::vector<LadderRung> rungs;
    for (const auto& def : rungDefs()) {
        LadderRung r;
        r.id = def.id;
        r.reason = def.unavailable(x);
        r.applies = r.reason.empty();
        r.default_on = r.applies && def.speed;
        r.label = def.fallback_label;
        if (r.applies) {
            ExperimentConfig c = baseline.config;
            try {
                const RungText t = def.apply(x, c);
                r.label = t.label;
                r.change = t.change;
            } catch (const ConfigError& e) {
                r.applies = false;
                r.default_on = false;
                r.reason = std::string("--") + e.what();
            }
        }
        rungs.push_back(std::move(r));
    }
    return rungs;
}

std::vector<LadderStep> buildPlannedLadder(const ExperimentConfig& base, const DeviceCapabilities& caps,
                                           const LadderPlan& plan) {
    const Context x = contextOf(base, caps, plan);
    const auto& defs = rungDefs();
    std::vector<std::string> chosen;
    if (plan.rungs) {
        for (const auto& id : *plan.rungs) {
            const auto def = std::find_if(defs.begin(), defs.end(), [&](const RungDef& d) { return id == d.id; });
            if (def == defs.end()) {
                std::string known;
                for (const auto& d : defs) known += (known.empty() ? "" : ", ") + std::string(d.id);
                std::string message = "no rung '";
                message.append(id).append("'; the rungs are ").append(known);
                throw ConfigError("rungs", message);
            }
            if (std::string why = def->unavailable(x); !why.empty()) {
                std::string message = "'";
                message.append(id).append("' does not apply here: ").append(why);
                throw ConfigError("rungs", message);
            }
            chosen.push_back(id);
        }
    } else {
        for (const auto& def : defs)
            if (def.speed && def.unavailable(x).empty()) chosen.emplace_back(def.id);
    }
    if (plan.repeats < 1) throw ConfigError("repeats", "must be at least 1, got " + std::to_string(plan.repeats));
    if (plan.goal == LadderGoal::Accuracy && !base.data.val_path && base.data.val_fraction <= 0.0)
        throw ConfigError("measure", "accuracy times each rung to the baseline's validation accuracy, and this "
                                     "experiment has no validation split (data.val_fraction > 0 or data.val_path)");

    std::vector<LadderStep> steps{baselineStep(x)};
    const ExperimentConfig baseline = steps.front().config;   // a copy: steps grows
    ExperimentConfig current = baseline;
    std::string so_far;
    for (const auto& def : defs) {
        if (std::find(chosen.begin(), chosen.end(), def.id) == chosen.end()) continue;
        const bool alone = plan.order == LadderOrder::Alone;
        ExperimentConfig c = alone ? baseline : current;
        const RungText t = def.apply(x, c);
        LadderStep step{t.label, t.change, c, t.short_name, def.optional && !alone};
        step.alone = alone;
        if (alone) {
            step.config.name = base.name + " · baseline + " + t.short_name;
        } else {
            // A strategy rung names itself after the step it built on ("… + ddp"), as the study did.
            so_far += so_far.empty() ? t.short_name : " + " + t.short_name;
            step.config.name = base.name + " · " + so_far;
            current = step.config;
        }
        steps.push_back(std::move(step));
    }
    return steps;
}

void aimLadderAtAccuracy(std::vector<LadderStep>& steps, LadderPlan& plan, double target) {
    plan.accuracy_target = target;
    for (size_t i = 1; i < steps.size(); ++i) {
        TrainerConfig& t = steps[i].config.trainer;
        const int64_t cap = plan.cap_epochs > 0 ? plan.cap_epochs : 2 * steps.front().config.trainer.max_epochs;
        t.max_epochs = cap;
        t.early_stopping.monitor = "val_acc";
        t.early_stopping.mode = "max";
        t.early_stopping.patience = 1000;   // the target or the cap ends it, never patience
        t.early_stopping.min_delta = 0.0;
        t.early_stopping.stop_at = target;
    }
}

}  // namespace hearth
