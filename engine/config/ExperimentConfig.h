#pragma once
// ExperimentConfig: everything a training run needs, as plain values, in Lightning's vocabulary.
// Read/written as JSON; validated before anything runs. No LibTorch or Qt types here.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hearth {

inline constexpr const char* kDefaultFashionMnistPath = "/usr/share/datasets/fashion-mnist";
// The built-in text experiment's data (Debian's wordnet-base).
inline constexpr const char* kWordNetNouns = "/usr/share/wordnet/data.noun";

// Training-image augmentation in the loader (torchvision's RandomCrop(padding) and
// RandomHorizontalFlip); images are already normalised with the dataset's statistics.
struct AugmentConfig {
    int64_t random_crop_padding = 0;                  // 0: off
    bool horizontal_flip = false;
    bool random_resized_crop = false;                 // image_folder: torchvision's RandomResizedCrop
};

struct DataConfig {
    std::string kind = "idx";                         // idx | csv | text_csv | wordnet | image_folder
    std::string path = kDefaultFashionMnistPath;      // idx, image_folder: folder; csv/text_csv: training file; wordnet: data.noun
    std::optional<std::string> val_path;              // csv: explicit validation file
    std::optional<std::string> test_path;             // csv: explicit test file
    std::string label_column = "label";               // csv, text_csv
    std::string text_column = "text";                 // text_csv only
    std::optional<std::string> tokenizer;             // text: vocab.txt, tokenizer.json or a folder; null = model.pretrained's
    int64_t max_length = 512;                         // text: tokens per sample, [CLS] and [SEP] included
    std::string padding = "longest";                  // text: longest (per batch) | max_length (every sample)
    bool bucket_by_length = false;                    // text: batch samples of similar length together
    bool on_device = false;                           // idx, csv: the training set held in device memory
    double val_fraction = 1.0 / 12.0;                 // of the training file (idx: 5,000 of 60,000)
    double test_fraction = 0.1;                       // csv without test_path only
    std::optional<int64_t> limit;                     // cap on training samples (val/test scaled alike)
    AugmentConfig augment;                            // images: training split only
    int64_t image_size = 224;                         // image_folder: the square side the images are resized and cropped to
    std::string on_bad_file = "error";                // image_folder: error | skip (an undecodable file)
    bool cache_decoded = false;                       // image_folder: decode once into a uint8 cache file
};

// Text data (token ids for a transformer): text_csv and wordnet.
inline bool isTextKind(const std::string& kind) {
    return kind == "text_csv" || kind == "wordnet";
}

// Image data ([C, H, W] samples): idx and image_folder.
inline bool isImageKind(const std::string& kind) {
    return kind == "idx" || kind == "image_folder";
}

// torchvision's residual networks, built in (model.name resnet18 | resnet34 | resnet50).
inline bool isResNetName(const std::string& name) {
    return name == "resnet18" || name == "resnet34" || name == "resnet50";
}
// 18, 34 or 50 for a resnet's name.
inline int resnetDepth(const std::string& name) { return std::stoi(name.substr(6)); }
// torchvision's residual blocks per stage (layer1..layer4) for a depth; empty for another depth.
inline std::vector<int64_t> resnetLayers(int depth) {
    if (depth == 18) return {2, 2, 2, 2};
    if (depth == 34 || depth == 50) return {3, 4, 6, 3};
    return {};
}

// The built-in BERT-family encoders (model.name distilbert | bert).
inline bool isTransformerName(const std::string& name) { return name == "distilbert" || name == "bert"; }

struct ModelConfig {
    std::string name = "cnn";                         // mlp | cnn | resnet18 | resnet34 | resnet50 | distilbert | bert | torchscript
    std::optional<std::string> path;                  // torchscript: the module file (torch.jit.save)
    std::vector<int64_t> hidden = {256, 128};         // mlp: hidden layer widths
    std::vector<int64_t> channels = {32, 64};         // cnn: conv block widths
    double dropout = 0.25;
    // Transformers (distilbert, bert): a Hugging Face checkpoint folder, or sizes for a new one.
    std::optional<std::string> pretrained;            // config.json + model.safetensors / pytorch_model.bin; resnet: torchvision's .pth or .safetensors
    int64_t hidden_size = 256;                        // from scratch: width of the hidden states
    int64_t num_layers = 4;
    int64_t num_heads = 4;
    int64_t intermediate_size = 1024;                 // feed-forward width
    bool gradient_checkpointing = false;              // per block: recompute its activations in backward
    bool inplace_activations = false;                 // cnn, mlp: ReLU overwrites its input
};

struct OptimizerConfig {
    std::string name = "adam";                        // sgd | adam | adamw | adagrad
    double lr = 1e-3;
    double weight_decay = 0.0;
    double momentum = 0.9;                            // sgd only
    double beta1 = 0.9;                               // adam/adamw
    double beta2 = 0.999;
    double eps = 1e-8;
    bool nesterov = false;                            // sgd with momentum
    bool amsgrad = false;                             // adam/adamw: the maximum of the second moments
    std::string implementation = "auto";              // auto | fused | foreach | per_parameter
};

// The blocks a built-in model is cut between (pipeline stages, ZeRO-3's units, checkpointing):
// cnn's conv blocks, mlp's hidden layers, a resnet's residual blocks, a new transformer's layers.
// nullopt where the config alone does not say: a pretrained transformer (its config.json does) and
// a TorchScript module (a scripted nn.Sequential's children, known once the file is read).
std::optional<int64_t> configuredBlocks(const ModelConfig& m);

struct SchedulerConfig {
    std::string name = "none";                        // none | step | cosine | linear-warmup
    int64_t step_size = 1;                            // step: epochs between decays
    double gamma = 0.1;                               // step: decay factor
    int64_t warmup_steps = 100;                       // linear-warmup: optimizer steps of warm-up
    double min_lr = 0.0;                              // cosine / linear-warmup: final learning rate
};

struct CheckpointConfig {
    std::string monitor = "val_acc";                  // val_acc | val_loss
    std::string mode = "max";                         // max | min
};

// Stop when a validation metric stops improving (Lightning's EarlyStopping): after `patience`
// validated epochs in a row without an improvement larger than min_delta. The run completes (its
// best checkpoint is tested) and the reason is stored.
struct EarlyStoppingConfig {
    std::string monitor = "none";                     // none (off) | val_loss | val_acc
    std::string mode = "auto";                        // auto (min for val_loss, max for val_acc) | min | max
    int64_t patience = 3;
    double min_delta = 0.0;
    // Stop as soon as the monitored value reaches this (val_acc at or above it, val_loss at or
    // below it): the time to an accuracy, as the ladder measures it. Unset: off.
    std::optional<double> stop_at;
};

// Safety checkpoints: the fit's whole training state (model, optimizer, scaler, generators, the
// position inside the epoch) written every N optimizer steps and/or M minutes, and when the run is
// stopped, so a stopped, interrupted or failed run can be resumed (hearth-cli resume). The last
// `keep_last` are kept; a run that completes deletes them.
struct SafetyCheckpointConfig {
    int64_t every_n_steps = 0;                        // 0: not by steps
    double every_n_minutes = 10.0;                    // 0: not by time
    int64_t keep_last = 1;                            // 0: no safety checkpoints (and no resume)
};

// Fully sharded settings (trainer.strategy zero3), as FSDP's wrapping policy.
struct FsdpConfig {
    int64_t blocks_per_unit = 1;   // consecutive model blocks gathered and reduced together
    bool prefetch = true;          // the next unit's gather in flight while this one computes
};

// Model-parallel settings (trainer.strategy pipeline): GPipe over one stage per process.
struct PipelineConfig {
    std::optional<int64_t> stages;   // consecutive parts of the model; nullopt = "auto": one per process
    int64_t micro_batches = 4;       // each batch cut into this many, flowing through the stages in turn
    std::vector<int64_t> stage_blocks;   // blocks per stage, in order; empty: the cuts that even out the stages' forward FLOPs
};

// Data-parallel settings (trainer.strategy ddp), as in Lightning's DDPStrategy.
struct DdpConfig {
    std::string backend = "auto";                     // auto (nccl on CUDA, gloo on CPU) | gloo | nccl
    bool find_unused_parameters = false;
    bool gradient_as_bucket_view = true;   // no gradient<->bucket copies per step (PyTorch: off)
    double bucket_cap_mb = 25.0;
    int64_t timeout_s = 300;                          // collectives and rendezvous
};

struct TrainerConfig {
    int64_t max_epochs = 3;
    int64_t batch_size = 64;
    std::string precision = "32-true";                // 32-true | 16-mixed | bf16-mixed
    int64_t accumulate_grad_batches = 1;
    std::string accelerator = "auto";                 // auto | cpu | cuda
    std::optional<int64_t> devices = 1;               // per node; nullopt = "auto" (every GPU, or 1 on CPU)
    int64_t num_nodes = 1;                            // machines, each running `devices` processes
    std::string strategy = "auto";                    // auto | ddp | zero1 | zero2 | zero3 | pipeline
    bool offload_optimizer = false;                   // zero1/2/3: optimizer state and master copies in host memory
    int64_t num_workers = 2;
    bool pin_memory = true;
    int64_t prefetch_factor = 2;
    bool persistent_workers = false;
    std::optional<double> gradient_clip_val;
    bool set_grads_to_none = true;                    // drop gradients after each step (else zero them)
    bool deterministic = false;
    int64_t log_every_n_steps = 10;
    int64_t profile_every_n_steps = 10;               // step-time breakdown: time 1 optimizer step in N; 0 = off
    int64_t num_threads = 0;                          // CPU intra-op threads; 0 = one per physical core
    bool cudnn_benchmark = false;
    bool tf32 = false;
    bool channels_last = false;
    std::string cuda_graph = "off";                   // off | step: capture the optimizer step as one CUDA graph
    CheckpointConfig checkpoint;
    EarlyStoppingConfig early_stopping;
    SafetyCheckpointConfig safety_checkpoint;
    DdpConfig ddp;
    FsdpConfig fsdp;
    PipelineConfig pipeline;
};

struct ExperimentConfig {
    std::string name = "fashion-cnn";
    uint64_t seed = 42;
    DataConfig data;
    ModelConfig model;
    OptimizerConfig optimizer;
    SchedulerConfig scheduler;
    TrainerConfig trainer;
};

// A config problem tied to the dotted key it concerns ("trainer.precision").
struct ConfigIssue {
    std::string key;
    std::string message;   // says what is wrong and what is allowed
};

// Thrown by parsing and overrides; what() is "<key>: <message>".
class ConfigError : public std::runtime_error {
public:
    ConfigError(std::string key, std::string message);
    const std::string& key() const noexcept { return key_; }
    const std::string& message() const noexcept { return message_; }
private:
    std::string key_;
    std::string message_;
};

// What the machine can do; validation refuses settings the hardware cannot honour.
struct DeviceCapabilities {
    bool cuda_available = false;
    int64_t cuda_device_count = 0;
    bool cuda_bf16 = false;
    bool cpu_fp16_autocast = false;   // LibTorch >= 2.x only
    bool fused_optimizers = false;    // LibTorch >= 2.4: fused Adam/AdamW/SGD kernels on CPU and CUDA
    bool cuda_graphs = false;         // a CUDA build on LibTorch >= 2.4 (capture and replay of a step)
    bool distributed = false;         // c10d (Gloo or NCCL) compiled in
    std::vector<std::string> cuda_device_names;
    std::vector<int64_t> cuda_device_memory;  // total bytes per CUDA device
    std::string cpu_name;             // "Intel(R) Xeon(R) ..." (empty when unknown)
    int64_t cpu_threads = 0;          // logical CPUs
};

// JSON text <-> config. Unknown keys and wrong types throw ConfigError naming the key.
ExperimentConfig configFromJson(const std::string& json_text);
std::string configToJson(const ExperimentConfig& config, int indent = 2);
ExperimentConfig loadConfigFile(const std::string& path);      // ConfigError with key "" on I/O
void saveConfigFile(const ExperimentConfig& config, const std::string& path);

// Applies "a.b.c=value" (value parsed as JSON, else taken as a string). Throws ConfigError.
void applyOverride(ExperimentConfig& config, const std::string& assignment);

// Range and consistency checks; empty when the config can run on `caps`.
std::vector<ConfigIssue> validate(const ExperimentConfig& config, const DeviceCapabilities& caps);

// Every file or folder the config names (data.path, data.val_path, data.test_path, a text kind's
// data.tokenizer, model.pretrained, a torchscript model.path) that is not there on this machine,
// or is a folder where the config reads one file (csv data, a TorchScript module) or a file where
// it reads a folder (idx, image_folder): one issue per key. A missing path names, for the built-in
// data, the package that provides it, and for a relative path the folder it starts at. Checked
// before a job stores anything, in the workbench's form, and by prepareRun (a rank on another node).
std::vector<ConfigIssue> inputProblems(const ExperimentConfig& config);

// The trainer settings with "auto" decided for `caps`, as Lightning decides them: devices auto =
// every GPU when training on CUDA, else 1; strategy auto = ddp when there are several devices in
// all (devices x num_nodes > 1), else one device. Everything else is unchanged (set_grads_to_none
// applies under ddp and zero1 too: it drops the views of the reducer's buckets, not the memory).
TrainerConfig resolveTrainer(const TrainerConfig& trainer, const DeviceCapabilities& caps);
// Whether `trainer` (resolved or not) trains on CUDA on `caps`.
bool trainsOnCuda(const TrainerConfig& trainer, const DeviceCapabilities& caps);

// Every dotted key of the schema (for UIs and diffs), in declaration order.
std::vector<std::string> configKeys();

}  // namespace hearth
