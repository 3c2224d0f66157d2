// validate(): each key against its description (ConfigSchema), then the rules between keys and
// the checks against what the machine can do.
// Every message names what is wrong and what is allowed; the CLI and the GUI show the same text.
#include "engine/config/ExperimentConfig.h"

#include "engine/config/ConfigSchema.h"
#include "engine/config/NoEffectRules.h"

#include <algorithm>
#include <numeric>
#include <sstream>

namespace hearth {
namespace {

class Checker {
public:
    explicit Checker(std::vector<ConfigIssue>& issues) : issues_(issues) {}
    void fail(const std::string& key, const std::string& message) { issues_.push_back({key, message}); }
    static std::string number(double v) {
        std::ostringstream s;
        s << v;
        return s.str();
    }

private:
    std::vector<ConfigIssue>& issues_;
};

// Each key against its own description: type, choices, range (ConfigSchema).
void checkKeys(const ExperimentConfig& cfg, Checker& c) {
    for (const auto& key : configSchema()) {
        const std::string problem = checkConfigValue(key, cfg);
        if (!problem.empty()) c.fail(key.key, problem);
    }
}

// What one key alone cannot say: rules between keys.
void checkData(const DataConfig& d, Checker& c) {
    if (d.path.empty())
        c.fail("data.path", "must name a folder (idx, image_folder), a file (csv, text_csv) or data.noun (wordnet)");
    if (d.kind == "text_csv") {
        if (d.text_column.empty()) c.fail("data.text_column", "must name the CSV column that holds the text");
        if (d.label_column.empty()) c.fail("data.label_column", "must name the CSV column that holds the label");
        if (d.text_column == d.label_column)
            c.fail("data.text_column", "must differ from data.label_column ('" + d.label_column + "')");
    }
    if (isTextKind(d.kind) || d.kind == "csv" || d.kind == "image_folder") {
        const double held_out = (d.val_path ? 0.0 : d.val_fraction) + (d.test_path ? 0.0 : d.test_fraction);
        if (held_out >= 1.0)
            c.fail("data.val_fraction", "val_fraction + test_fraction must leave samples for training (sum is " +
                                            Checker::number(held_out) + ")");
        if (d.kind == "csv" && d.label_column.empty())
            c.fail("data.label_column", "must name the CSV column that holds the label");
    }
    if ((d.kind == "idx" || d.kind == "wordnet" || d.kind == "image_folder") && (d.val_path || d.test_path)) {
        c.fail(d.val_path ? "data.val_path" : "data.test_path",
               d.kind == "idx"            ? "applies to csv data only; IDX data uses the official t10k test files and "
                                            "data.val_fraction"
               : d.kind == "image_folder" ? "applies to csv data only; an image folder's own val/ and test/ subfolders "
                                            "are its validation and test sets (else data.val_fraction and "
                                            "data.test_fraction)"
                                          : "applies to csv and text_csv data only; wordnet splits data.noun by "
                                            "data.val_fraction and data.test_fraction");
    }
}

void checkTransformer(const ExperimentConfig& cfg, Checker& c) {
    const ModelConfig& m = cfg.model;
    if (!isTextKind(cfg.data.kind)) {
        c.fail("model.name", m.name + " is a text model but data.kind is " + cfg.data.kind +
                                 "; use text_csv or wordnet data, or model.name=cnn/mlp");
        return;
    }
    if (!m.pretrained && m.num_heads > 0 && m.hidden_size % m.num_heads != 0)
        c.fail("model.hidden_size", "must be a multiple of model.num_heads (" + std::to_string(m.num_heads) +
                                        "), got " + std::to_string(m.hidden_size));
    if (!m.pretrained && !cfg.data.tokenizer)
        c.fail("data.tokenizer", "a new " + m.name + " needs a tokenizer (a vocab.txt, tokenizer.json or folder); "
                                 "or set model.pretrained to a checkpoint folder that has one");
}

void checkAugment(const ExperimentConfig& cfg, Checker& c) {
    const AugmentConfig& a = cfg.data.augment;
    if (a.random_resized_crop && cfg.data.kind != "image_folder")
        c.fail("data.augment.random_resized_crop", "applies to image folders (data.kind=image_folder), not " +
                                                       cfg.data.kind + "; use data.augment.random_crop_padding");
    if (a.random_resized_crop && a.random_crop_padding > 0)
        c.fail("data.augment.random_crop_padding", "choose one crop: random_resized_crop or random_crop_padding");
    if (isImageKind(cfg.data.kind)) return;
    if (a.random_crop_padding > 0)
        c.fail("data.augment.random_crop_padding", "applies to images (data.kind=idx or image_folder), not " + cfg.data.kind);
    if (a.horizontal_flip)
        c.fail("data.augment.horizontal_flip", "applies to images (data.kind=idx or image_folder), not " + cfg.data.kind);
}

void checkOnDevice(const ExperimentConfig& cfg, Checker& c) {
    if (cfg.data.on_device && isTextKind(cfg.data.kind))
        c.fail("data.on_device", "holds fixed-size samples (idx images, csv tables) on the device; " + cfg.data.kind +
                                     " batches are padded per batch on the host (use data.padding=longest and "
                                     "data.bucket_by_length for text)");
}

void checkModel(const ExperimentConfig& cfg, Checker& c) {
    checkAugment(cfg, c);
    checkOnDevice(cfg, c);
    const ModelConfig& m = cfg.model;
    if (m.name == "torchscript") {
        if (!m.path || m.path->empty())
            c.fail("model.path", "model.name=torchscript needs the module file: a model saved in PyTorch with "
                                 "torch.jit.save(torch.jit.script(model), 'model.pt')");
        if (m.gradient_checkpointing)
            c.fail("model.gradient_checkpointing", "applies to the built-in models (their blocks); a TorchScript "
                                                   "model runs its forward as it was written");
        if (m.inplace_activations)
            c.fail("model.inplace_activations", "applies to cnn and mlp; a TorchScript model runs as it was written");
    } else if (isTransformerName(m.name)) {
        checkTransformer(cfg, c);
    } else if (isTextKind(cfg.data.kind)) {
        c.fail("model.name", m.name + " cannot read text (data.kind is " + cfg.data.kind +
                                 "); use distilbert, bert or a torchscript model");
    }
    if (m.inplace_activations && isTransformerName(m.name))
        c.fail("model.inplace_activations", "applies to cnn and mlp (their ReLUs); a transformer's GELU has no "
                                            "in-place form");
    if (m.pretrained && !isTransformerName(m.name) && !isResNetName(m.name))
        c.fail("model.pretrained", "applies to distilbert, bert and the resnets only");
    if (isResNetName(m.name) && !isImageKind(cfg.data.kind) && !isTextKind(cfg.data.kind))
        c.fail("model.name", m.name + " needs image input but data.kind is " + cfg.data.kind + "; use mlp");
    // An image folder's images are resized to data.image_size: too small for a resnet's five halvings.
    if (isResNetName(m.name) && cfg.data.kind == "image_folder" && cfg.data.image_size < 32)
        c.fail("data.image_size", "a resnet halves its input five times: it needs at least 32 pixels, got " +
                                      std::to_string(cfg.data.image_size));
    if (m.name == "cnn") {
        if (m.channels.empty() || m.channels.size() > 4)
            c.fail("model.channels", "a cnn needs 1 to 4 convolution blocks, got " + std::to_string(m.channels.size()));
        if (cfg.data.kind == "csv")
            c.fail("model.name", "cnn needs image input but data.kind is csv (tabular rows); use mlp");
    }
}

void checkOptimization(const ExperimentConfig& cfg, Checker& c) {
    const SchedulerConfig& s = cfg.scheduler;
    // Against a valid learning rate only: optimizer.lr's own message already names a bad one.
    if (cfg.optimizer.lr > 0.0 && s.min_lr > cfg.optimizer.lr)
        c.fail("scheduler.min_lr", "must be between 0 and optimizer.lr (" + Checker::number(cfg.optimizer.lr) +
                                       "), got " + Checker::number(s.min_lr));
}

void checkOptimizer(const OptimizerConfig& o, const DeviceCapabilities& caps, Checker& c) {
    if (o.name == "sgd" && o.nesterov && o.momentum <= 0.0)
        c.fail("optimizer.nesterov", "needs optimizer.momentum > 0 (Nesterov looks ahead along the momentum)");
    if (o.implementation == "fused" && !caps.fused_optimizers)
        c.fail("optimizer.implementation", "this LibTorch has no fused optimizer kernels (they came in 2.4); "
                                           "use auto, foreach or per_parameter");
}

void checkTrainer(const ExperimentConfig& cfg, Checker& c) {
    const TrainerConfig& t = cfg.trainer;
    if (t.persistent_workers && t.num_workers == 0)
        c.fail("trainer.persistent_workers", "needs trainer.num_workers > 0 (there are no worker threads to keep)");
    if (t.channels_last && cfg.model.name != "cnn" && !isResNetName(cfg.model.name))
        c.fail("trainer.channels_last", "applies to convolutional models only (model.name=cnn or a resnet)");
    if (t.early_stopping.monitor != "none" && !cfg.data.val_path && cfg.data.val_fraction <= 0.0)
        c.fail("trainer.early_stopping.monitor", "needs a validation split (data.val_fraction > 0 or data.val_path); "
                                                 "or set it to none");
    if (t.deterministic && t.cudnn_benchmark)
        c.fail("trainer.cudnn_benchmark", "conflicts with trainer.deterministic=true (benchmarking picks "
                                          "kernels by timing, which is not reproducible)");
}

// Settings the hardware (or this build) cannot honour are refused before the run, with the reason.
void checkHardware(const TrainerConfig& given, const DeviceCapabilities& caps, Checker& c) {
    const TrainerConfig t = resolveTrainer(given, caps);
    const bool on_cuda = trainsOnCuda(t, caps);
    const int64_t devices = t.devices.value_or(1);
    if (t.accelerator == "cuda" && !caps.cuda_available)
        c.fail("trainer.accelerator", "cuda was requested but this machine has no usable CUDA device "
                                      "(or LibTorch was built without CUDA); use auto or cpu");
    if (t.precision == "16-mixed" && !on_cuda && !caps.cpu_fp16_autocast)
        c.fail("trainer.precision", "16-mixed needs a CUDA device: this LibTorch has no float16 autocast on "
                                    "CPU; use bf16-mixed on CPU");
    if (t.precision == "bf16-mixed" && on_cuda && caps.cuda_available && !caps.cuda_bf16)
        c.fail("trainer.precision", "bf16-mixed needs a GPU with bfloat16 support (Ampere or newer); use 16-mixed");
    const bool distributed = t.strategy != "auto";
    if (distributed && !caps.distributed)
        c.fail(given.strategy == "auto" ? "trainer.devices" : "trainer.strategy",
               (given.strategy == "auto" ? "several devices need a distributed strategy (ddp), and "
                                         : t.strategy + " needs ") +
                   std::string("PyTorch's distributed engine (c10d), which this build of Hearth does not have; "
                               "use one device"));
    // Several ranks may share a GPU over Gloo (a debugging setup); NCCL refuses it.
    if (on_cuda && caps.cuda_available && devices > caps.cuda_device_count &&
        !(distributed && t.ddp.backend == "gloo"))
        c.fail("trainer.devices", "asks for " + std::to_string(devices) + " GPUs but this machine has " +
                                      std::to_string(caps.cuda_device_count) +
                                      (distributed ? " (NCCL cannot put two ranks on one GPU; with "
                                                     "trainer.ddp.backend=gloo ranks may share one, for debugging)"
                                                   : ""));
    if (t.offload_optimizer && !shardsOptimizerState(t.strategy))
        c.fail("trainer.offload_optimizer", "offloads a sharded optimizer to host memory, and " +
                                                (t.strategy == "auto"       ? std::string("one device has none")
                                                 : t.strategy == "pipeline" ? std::string("each pipeline stage steps only its own part already")
                                                                            : t.strategy + " keeps the whole optimizer on every device") +
                                                ": use trainer.strategy zero1, zero2 or zero3, or turn it off");
    if (distributed && t.ddp.backend == "nccl" && !on_cuda)
        c.fail("trainer.ddp.backend", "nccl needs CUDA devices; use gloo (or auto) on CPU");
}

// trainer.cuda_graph=step: what a captured step needs, each refusal naming the key to change.
void checkCudaGraph(const ExperimentConfig& cfg, const DeviceCapabilities& caps, Checker& c) {
    const TrainerConfig t = resolveTrainer(cfg.trainer, caps);
    if (t.cuda_graph != "step") return;
    if (!caps.cuda_graphs) {
        c.fail("trainer.cuda_graph", "step needs a CUDA build of Hearth on LibTorch 2.4 or newer (graphs replay on a "
                                     "GPU, with the fused optimizer kernels); this build cannot capture: use off");
        return;
    }
    if (!trainsOnCuda(t, caps) || !caps.cuda_available) {
        c.fail("trainer.cuda_graph", "step needs a CUDA device and this run trains on the CPU; use off");
        return;
    }
    if (t.strategy != "auto")
        c.fail("trainer.cuda_graph", "step captures one device's step; " + t.strategy +
                                         " reduces gradients from autograd hooks on the host, which a graph cannot "
                                         "replay: use trainer.strategy=auto with one device, or off");
    const OptimizerConfig& o = cfg.optimizer;
    if (o.name == "adagrad")
        c.fail("optimizer.name", "adagrad has no fused kernel, and trainer.cuda_graph=step needs one (its step "
                                 "count and learning rate live on the device); use adam, adamw or sgd");
    else if (o.implementation != "auto" && o.implementation != "fused")
        c.fail("optimizer.implementation", o.implementation + " keeps step counts on the host, which "
                                           "trainer.cuda_graph=step cannot replay; use auto or fused");
    if (isTextKind(cfg.data.kind) && cfg.data.padding != "max_length")
        c.fail("data.padding", cfg.data.padding + " gives every batch its own length and a captured step replays "
                               "one shape: use max_length with trainer.cuda_graph=step");
}

// trainer.strategy=pipeline: a model the stages can cut, as many stages as processes, at most
// as many as the model has blocks, and micro-batches that fit in a batch.
void checkPipeline(const ExperimentConfig& cfg, const DeviceCapabilities& caps, Checker& c) {
    const TrainerConfig t = resolveTrainer(cfg.trainer, caps);
    if (t.strategy != "pipeline") return;
    const std::string& model = cfg.model.name;
    const int64_t processes = t.devices.value_or(1) * t.num_nodes;
    const int64_t stages = t.pipeline.stages.value_or(processes);
    if (stages != processes)
        c.fail("trainer.pipeline.stages", "is " + std::to_string(stages) + " but the run has " +
                                              std::to_string(processes) + " process(es): one stage per process "
                                              "(trainer.devices x trainer.num_nodes), or auto");
    // A TorchScript module's blocks are known once it is read (the children of a scripted
    // nn.Sequential); the strategy checks them there.
    const std::optional<int64_t> blocks = configuredBlocks(cfg.model);
    const std::string blocks_key = model == "cnn" ? "model.channels" : model == "mlp" ? "model.hidden"
                                 : isResNetName(model) ? "the residual blocks" : "model.num_layers";
    if (blocks && stages > *blocks)
        c.fail("trainer.pipeline.stages", std::to_string(stages) + " stages but " + model + " has " +
                                              std::to_string(*blocks) + " block(s) to cut between (" + blocks_key +
                                              "): at most one stage per block");
    const std::vector<int64_t>& given = t.pipeline.stage_blocks;
    if (!given.empty()) {
        const int64_t sum = std::accumulate(given.begin(), given.end(), int64_t{0});
        if (static_cast<int64_t>(given.size()) != stages)
            c.fail("trainer.pipeline.stage_blocks", "gives " + std::to_string(given.size()) + " stage(s) but the run "
                                                    "has " + std::to_string(stages) + ": one count per stage, or empty");
        else if (blocks && sum != *blocks)
            c.fail("trainer.pipeline.stage_blocks", "sums to " + std::to_string(sum) + " block(s) but " + model +
                                                        " has " + std::to_string(*blocks) + " (" + blocks_key + ")");
    }
    if (t.pipeline.micro_batches > t.batch_size)
        c.fail("trainer.pipeline.micro_batches", std::to_string(t.pipeline.micro_batches) +
                                                     " micro-batches cannot be cut from a batch of " +
                                                     std::to_string(t.batch_size) + " (trainer.batch_size)");
}

// Keys set away from their default that do nothing with the rest of the config: one warning per
// key, from its ConfigKey::no_effect rule (the rule the form disables the key by). A key that
// validation refuses already has its message.
void warnNoEffect(const ExperimentConfig& cfg, const DeviceCapabilities& caps, const std::vector<ConfigIssue>& errors,
                  std::vector<ConfigIssue>& warnings) {
    const ExperimentConfig defaults;
    for (const auto& key : configSchema()) {
        const std::string why = noEffectReason(key, cfg, caps);
        if (why.empty() || configValueJson(key, cfg) == configValueJson(key, defaults)) continue;
        const bool refused = std::any_of(errors.begin(), errors.end(), [&](const ConfigIssue& e) { return e.key == key.key; });
        if (!refused) warnings.push_back({key.key, "has no effect: " + why});
    }
}

}  // namespace

bool trainsOnCuda(const TrainerConfig& t, const DeviceCapabilities& caps) {
    return t.accelerator == "cuda" || (t.accelerator == "auto" && caps.cuda_available);
}

TrainerConfig resolveTrainer(const TrainerConfig& trainer, const DeviceCapabilities& caps) {
    TrainerConfig t = trainer;
    if (!t.devices) t.devices = trainsOnCuda(t, caps) ? std::max<int64_t>(caps.cuda_device_count, 1) : 1;
    if (t.strategy == "auto" && *t.devices * t.num_nodes > 1) t.strategy = "ddp";
    return t;
}

std::vector<ConfigIssue> validate(const ExperimentConfig& config, const DeviceCapabilities& caps,
                                  std::vector<ConfigIssue>* warnings) {
    std::vector<ConfigIssue> issues;
    Checker c(issues);
    if (config.name.empty()) c.fail("name", "must not be empty (it names the run)");
    checkKeys(config, c);
    checkData(config.data, c);
    checkModel(config, c);
    checkOptimization(config, c);
    checkOptimizer(config.optimizer, caps, c);
    checkTrainer(config, c);
    checkHardware(config.trainer, caps, c);
    checkCudaGraph(config, caps, c);
    checkPipeline(config, caps, c);
    if (warnings) warnNoEffect(config, caps, issues, *warnings);
    return issues;
}

std::vector<ConfigIssue> validate(const ExperimentConfig& config, const DeviceCapabilities& caps) {
    return validate(config, caps, nullptr);
}

}  // namespace hearth
