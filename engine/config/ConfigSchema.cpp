// The table of config keys, and what derives from it generically: value text, per-key checks,
// the choices the form offers, and the key listing of `hearth-cli keys`.
#include "engine/config/ConfigSchema.h"

#include "engine/config/NoEffectRules.h"
#include "engine/config/Spelling.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

namespace hearth {
namespace {

using Json = nlohmann::ordered_json;

std::string number(double v) {
    // Whole numbers in full (a range's 1048576, not 1.04858e+06); others as the stream prints them.
    if (std::abs(v) < 1e15 && v == std::floor(v)) return std::to_string(static_cast<long long>(v));
    std::ostringstream s;
    s << v;
    return s.str();
}

// Builders keep the table readable: one entry per key, in file order.
struct Entry {
    ConfigKey k;
    Entry(const char* key, ConfigType type, const char* group, const char* label, const char* help,
          ConfigField (*field)(ExperimentConfig&)) {
        k.key = key;
        k.type = type;
        k.group = group;
        k.label = label;
        k.help = help;
        k.field = field;
    }
    Entry& choices(std::vector<std::string> c) { k.choices = std::move(c); return *this; }
    Entry& atLeast(double v) { k.min = v; return *this; }
    Entry& above(double v) { k.min = v; k.min_exclusive = true; return *this; }
    Entry& atMost(double v) { k.max = v; return *this; }
    Entry& below(double v) { k.max = v; k.max_exclusive = true; return *this; }
    Entry& nullable(const char* label) { k.nullable = true; k.null_label = label; return *this; }
    Entry& zeroMeans(const char* label) { k.zero_is_null = true; k.null_label = label; return *this; }
    Entry& nullWord(const char* word) { k.null_word = word; return *this; }
    Entry& toggle() { k.toggle = true; return *this; }
    Entry& widget(ConfigWidget w) { k.widget = w; return *this; }
    Entry& noEffect(NoEffectRule rule) { k.no_effect = rule; return *this; }
    operator ConfigKey() const { return k; }  // NOLINT(google-explicit-constructor)
};

#define HEARTH_FIELD(member) [](ExperimentConfig& c) -> ConfigField { return &c.member; }

std::vector<ConfigKey> buildSchema() {
    using T = ConfigType;
    std::vector<ConfigKey> s;
    // Experiment
    s.push_back(Entry("name", T::String, "Experiment", "Name", "The run's name in the history.", HEARTH_FIELD(name)));
    s.push_back(Entry("seed", T::UInt, "Experiment", "Seed",
                      "Seeds the split, the model's initial weights and shuffling.", HEARTH_FIELD(seed)));
    // Data
    s.push_back(Entry("data.kind", T::String, "Data", "Kind",
                      "idx: MNIST/Fashion-MNIST files in a folder; csv: a table with a label column; text_csv: a "
                      "text column and a label column (IMDB layout); wordnet: WordNet's noun glosses labelled "
                      "with their 26 lexicographer classes; image_folder: JPEG/PNG files, one subfolder per class "
                      "(torchvision's ImageFolder layout, optionally under train/, val/ and test/).",
                      HEARTH_FIELD(data.kind)).choices({"idx", "csv", "text_csv", "wordnet", "image_folder"}));
    s.push_back(Entry("data.path", T::String, "Data", "Source",
                      "idx: the folder with the *-idx?-ubyte(.gz) files; image_folder: the folder of class subfolders; csv, "
                      "text_csv: the training file; wordnet: WordNet's data.noun (or its folder). Drop a folder or "
                      "CSV file onto the window to set it.",
                      HEARTH_FIELD(data.path))
                    .widget(ConfigWidget::DirectoryOrFile));
    s.push_back(Entry("data.val_path", T::String, "Data", "Validation file",
                      "csv, text_csv: an explicit validation file (empty: split off data.val_fraction).",
                      HEARTH_FIELD(data.val_path)).nullable("split off").widget(ConfigWidget::Path)
                    .noEffect(csvFilesRule));
    s.push_back(Entry("data.test_path", T::String, "Data", "Test file",
                      "csv, text_csv: an explicit test file (empty: split off data.test_fraction).",
                      HEARTH_FIELD(data.test_path)).nullable("split off").widget(ConfigWidget::Path)
                    .noEffect(csvFilesRule));
    s.push_back(Entry("data.label_column", T::String, "Data", "Label column",
                      "csv, text_csv: the column holding the class label (names or integers).",
                      HEARTH_FIELD(data.label_column))
                    .noEffect(csvFilesRule));
    s.push_back(Entry("data.text_column", T::String, "Data", "Text column",
                      "text_csv: the column holding the text.", HEARTH_FIELD(data.text_column))
                    .noEffect(textCsvRule));
    s.push_back(Entry("data.tokenizer", T::String, "Data", "Tokenizer",
                      "Text: a BERT WordPiece vocab.txt, a tokenizer.json or a folder with either (empty: "
                      "model.pretrained's).", HEARTH_FIELD(data.tokenizer))
                    .nullable("the model's").widget(ConfigWidget::DirectoryOrFile)
                    .noEffect(textDataRule));
    s.push_back(Entry("data.max_length", T::Int, "Data", "Max tokens",
                      "Text: tokens per sample including [CLS] and [SEP]; longer texts are truncated.",
                      HEARTH_FIELD(data.max_length)).atLeast(3).atMost(8192)
                    .noEffect(textDataRule));
    s.push_back(Entry("data.padding", T::String, "Speed", "Padding",
                      "Text: max_length pads every sample to data.max_length; longest pads each batch to its "
                      "longest sample (dynamic padding: less work).", HEARTH_FIELD(data.padding))
                    .choices({"longest", "max_length"}).toggle()
                    .noEffect(textDataRule));
    s.push_back(Entry("data.bucket_by_length", T::Bool, "Speed", "Bucket by length",
                      "Text: batch samples of similar length together (with longest padding, little padding "
                      "is left); batches are still shuffled.", HEARTH_FIELD(data.bucket_by_length)).toggle()
                    .noEffect(textDataRule));
    s.push_back(Entry("data.on_device", T::Bool, "Speed", "Data on device",
                      "Images and tables: hold the whole training set in the training device's memory (images as "
                      "uint8) and shuffle, batch, augment and normalise it there: no loader work and no copy per "
                      "batch. The same samples in the same order; refused, with the sizes, when it does not fit.",
                      HEARTH_FIELD(data.on_device)).toggle()
                    .noEffect(fixedSizeDataRule));
    s.push_back(Entry("data.val_fraction", T::Double, "Data", "Validation share",
                      "Share of the training data held out for validation.", HEARTH_FIELD(data.val_fraction))
                    .atLeast(0).below(1).widget(ConfigWidget::Fraction));
    s.push_back(Entry("data.test_fraction", T::Double, "Data", "Test share",
                      "csv without a test file: share held out for test.", HEARTH_FIELD(data.test_fraction))
                    .atLeast(0).below(1).widget(ConfigWidget::Fraction)
                    .noEffect(testFractionRule));
    s.push_back(Entry("data.limit", T::Int, "Data", "Limit",
                      "Use only the first N training samples (validation and test scaled alike) for quick "
                      "experiments.", HEARTH_FIELD(data.limit)).nullable("all samples").zeroMeans("all samples")
                    .atLeast(1));
    s.push_back(Entry("data.image_size", T::Int, "Data", "Image size",
                      "image_folder: every image is resized (shorter side, antialiased) and centre-cropped to this "
                      "square, in pixels (224 for ImageNet-style models).", HEARTH_FIELD(data.image_size))
                    .atLeast(8).atMost(1024).noEffect(imageFolderRule));
    s.push_back(Entry("data.on_bad_file", T::String, "Data", "Unreadable files",
                      "image_folder: a file that is not a decodable JPEG or PNG. error: stop before training, naming "
                      "it; skip: leave it out and list it in the run log (without the decoded cache, every image is "
                      "decoded once before training to find them).", HEARTH_FIELD(data.on_bad_file))
                    .choices({"error", "skip"}).noEffect(imageFolderRule));
    s.push_back(Entry("data.cache_decoded", T::Bool, "Speed", "Decoded cache",
                      "image_folder: decode every image once (on all cores) into a uint8 cache file, then read "
                      "squares from it instead of decoding JPEG/PNG in the loader at every epoch. Rebuilt when the "
                      "folder's files change; kept in HEARTH_CACHE_DIR (else ~/.cache/hearth)/images.",
                      HEARTH_FIELD(data.cache_decoded)).toggle().noEffect(imageFolderRule));
    // Model
    s.push_back(Entry("data.augment.random_crop_padding", T::Int, "Data", "Random crop padding",
                      "Images: pad each training image by this many pixels, then crop a random window of the "
                      "original size (per sample, seeded, in the loader workers); 0: off.",
                      HEARTH_FIELD(data.augment.random_crop_padding)).atLeast(0).atMost(64).zeroMeans("off")
                    .noEffect(imageDataRule));
    s.push_back(Entry("data.augment.horizontal_flip", T::Bool, "Data", "Random horizontal flip",
                      "Images: mirror each training image left-right with probability 1/2.",
                      HEARTH_FIELD(data.augment.horizontal_flip)).noEffect(imageDataRule));
    s.push_back(Entry("data.augment.random_resized_crop", T::Bool, "Data", "Random resized crop",
                      "image_folder: torchvision's RandomResizedCrop on each training image: a random box of 8% to "
                      "100% of the image's area and aspect 3/4 to 4/3, resized back to data.image_size (per sample, "
                      "seeded, where the batch is built).", HEARTH_FIELD(data.augment.random_resized_crop))
                    .noEffect(imageFolderRule));
    s.push_back(Entry("model.name", T::String, "Model", "Architecture",
                      "cnn: convolution blocks for images; mlp: fully connected layers for any input; resnet18, "
                      "resnet34, resnet50: torchvision's residual networks for images (new, or model.pretrained's "
                      "weights); distilbert, bert: transformer encoders for text (from model.pretrained or new); "
                      "torchscript: your own model, defined in PyTorch and saved with torch.jit.save (model.path).",
                      HEARTH_FIELD(model.name)).choices({"cnn", "mlp", "resnet18", "resnet34", "resnet50", "distilbert",
                                                        "bert", "torchscript"}));
    s.push_back(Entry("model.path", T::String, "Model", "TorchScript file",
                      "torchscript: the module file, saved in PyTorch with torch.jit.save(torch.jit.script(model), "
                      "'model.pt') (or torch.jit.trace). Its forward takes one tensor (images or table rows) or, "
                      "for text, input_ids and attention_mask, and returns logits [batch, classes].",
                      HEARTH_FIELD(model.path)).nullable("none").widget(ConfigWidget::Path)
                    .noEffect(torchscriptRule));
    s.push_back(Entry("model.hidden", T::IntList, "Model", "Hidden widths",
                      "mlp: widths of the hidden layers, e.g. 256, 128.", HEARTH_FIELD(model.hidden)).atLeast(1).atMost(1 << 16)
                    .noEffect(mlpRule));
    s.push_back(Entry("model.channels", T::IntList, "Model", "Channels",
                      "cnn: output channels of each convolution block (1 to 4), e.g. 32, 64.",
                      HEARTH_FIELD(model.channels)).atLeast(1).atMost(8192)
                    .noEffect(cnnRule));
    s.push_back(Entry("model.dropout", T::Double, "Model", "Dropout",
                      "Probability of zeroing activations during training (a pretrained transformer keeps its "
                      "config.json's).", HEARTH_FIELD(model.dropout))
                    .atLeast(0).below(1).widget(ConfigWidget::Fraction)
                    .noEffect(dropoutRule));
    s.push_back(Entry("model.pretrained", T::String, "Model", "Pretrained",
                      "distilbert, bert: a Hugging Face checkpoint folder (config.json with model.safetensors, "
                      "its shards, or pytorch_model.bin); resnet: torchvision's weights, a .pth state_dict "
                      "(torch.save(model.state_dict())) or .safetensors file, the classifier replaced for the "
                      "data's classes; empty: a new model.",
                      HEARTH_FIELD(model.pretrained)).nullable("new model").widget(ConfigWidget::Path)
                    .noEffect(pretrainedRule));
    s.push_back(Entry("model.hidden_size", T::Int, "Model", "Hidden size",
                      "New transformer: width of the hidden states (a multiple of model.num_heads).",
                      HEARTH_FIELD(model.hidden_size)).atLeast(8).atMost(16384)
                    .noEffect(newTransformerRule));
    s.push_back(Entry("model.num_layers", T::Int, "Model", "Layers", "New transformer: encoder layers.",
                      HEARTH_FIELD(model.num_layers)).atLeast(1).atMost(48)
                    .noEffect(newTransformerRule));
    s.push_back(Entry("model.num_heads", T::Int, "Model", "Attention heads", "New transformer: heads per layer.",
                      HEARTH_FIELD(model.num_heads)).atLeast(1).atMost(256)
                    .noEffect(newTransformerRule));
    s.push_back(Entry("model.intermediate_size", T::Int, "Model", "Feed-forward size",
                      "New transformer: width of each layer's feed-forward block.",
                      HEARTH_FIELD(model.intermediate_size)).atLeast(1).atMost(1 << 17)
                    .noEffect(newTransformerRule));
    s.push_back(Entry("model.gradient_checkpointing", T::Bool, "Memory", "Activation checkpointing",
                      "Keep only each block's input (transformer layer, cnn conv block, mlp hidden layer) and "
                      "recompute its activations in backward: less memory, about one more forward pass.",
                      HEARTH_FIELD(model.gradient_checkpointing)).toggle());
    s.push_back(Entry("model.inplace_activations", T::Bool, "Memory", "In-place activations",
                      "cnn, mlp: each ReLU overwrites its input instead of allocating its output.",
                      HEARTH_FIELD(model.inplace_activations)).toggle()
                    .noEffect(inplaceRule));
    // Optimization
    s.push_back(Entry("optimizer.name", T::String, "Optimization", "Optimizer", "The update rule.",
                      HEARTH_FIELD(optimizer.name)).choices({"adam", "adamw", "sgd", "adagrad"}));
    s.push_back(Entry("optimizer.lr", T::Double, "Optimization", "Learning rate", "Step size, e.g. 0.001 or 1e-3.",
                      HEARTH_FIELD(optimizer.lr)).above(0));
    s.push_back(Entry("optimizer.weight_decay", T::Double, "Optimization", "Weight decay",
                      "L2 penalty (adamw: decoupled).", HEARTH_FIELD(optimizer.weight_decay)).atLeast(0));
    s.push_back(Entry("optimizer.momentum", T::Double, "Optimization", "Momentum", "sgd only.",
                      HEARTH_FIELD(optimizer.momentum)).atLeast(0).below(1)
                    .noEffect(momentumRule));
    s.push_back(Entry("optimizer.beta1", T::Double, "Optimization", "Beta 1", "adam/adamw: decay of the first moment.",
                      HEARTH_FIELD(optimizer.beta1)).atLeast(0).below(1)
                    .noEffect(betasRule));
    s.push_back(Entry("optimizer.beta2", T::Double, "Optimization", "Beta 2",
                      "adam/adamw: decay of the second moment.", HEARTH_FIELD(optimizer.beta2)).atLeast(0).below(1)
                    .noEffect(betasRule));
    s.push_back(Entry("optimizer.eps", T::Double, "Optimization", "Epsilon",
                      "adam/adamw/adagrad: added to the denominator.", HEARTH_FIELD(optimizer.eps)).above(0)
                    .noEffect(epsRule));
    s.push_back(Entry("optimizer.nesterov", T::Bool, "Optimization", "Nesterov momentum",
                      "sgd: look ahead along the momentum (needs momentum > 0).", HEARTH_FIELD(optimizer.nesterov))
                    .noEffect(nesterovRule));
    s.push_back(Entry("optimizer.amsgrad", T::Bool, "Optimization", "AMSGrad",
                      "adam/adamw: divide by the largest second moment seen so far.", HEARTH_FIELD(optimizer.amsgrad))
                    .noEffect(amsgradRule));
    s.push_back(Entry("optimizer.implementation", T::String, "Speed", "Optimizer kernels",
                      "How the optimizer step runs: fused (one kernel for all parameters, loss-scale aware), "
                      "foreach (a few multi-tensor kernels), per_parameter (a loop over the parameters). "
                      "auto: the fastest this build has for the device.",
                      HEARTH_FIELD(optimizer.implementation))
                    .choices({"auto", "fused", "foreach", "per_parameter"}).toggle()
                    .noEffect(implementationRule));
    s.push_back(Entry("scheduler.name", T::String, "Optimization", "LR schedule",
                      "How the learning rate changes over the run.", HEARTH_FIELD(scheduler.name))
                    .choices({"none", "step", "cosine", "linear-warmup"}));
    s.push_back(Entry("scheduler.step_size", T::Int, "Optimization", "Step every", "step: epochs between decays.",
                      HEARTH_FIELD(scheduler.step_size)).atLeast(1)
                    .noEffect(stepScheduleRule));
    s.push_back(Entry("scheduler.gamma", T::Double, "Optimization", "Decay factor",
                      "step: multiply the learning rate by this.", HEARTH_FIELD(scheduler.gamma)).above(0).atMost(1)
                    .noEffect(stepScheduleRule));
    s.push_back(Entry("scheduler.warmup_steps", T::Int, "Optimization", "Warm-up steps",
                      "linear-warmup: optimizer steps of warm-up.", HEARTH_FIELD(scheduler.warmup_steps)).atLeast(0)
                    .noEffect(warmupRule));
    s.push_back(Entry("scheduler.min_lr", T::Double, "Optimization", "Final LR",
                      "cosine / linear-warmup: the learning rate at the end.", HEARTH_FIELD(scheduler.min_lr))
                    .atLeast(0)
                    .noEffect(finalLrRule));
    // Trainer
    s.push_back(Entry("trainer.max_epochs", T::Int, "Optimization", "Epochs", "Passes over the training data.",
                      HEARTH_FIELD(trainer.max_epochs)).atLeast(1).atMost(100000));
    s.push_back(Entry("trainer.batch_size", T::Int, "Optimization", "Batch size", "Samples per micro-batch.",
                      HEARTH_FIELD(trainer.batch_size)).atLeast(1).atMost(1 << 20).toggle());
    s.push_back(Entry("trainer.precision", T::String, "Speed", "Precision",
                      "32-true: float32; 16-mixed: float16 autocast with a gradient scaler (CUDA); bf16-mixed: "
                      "bfloat16 autocast.", HEARTH_FIELD(trainer.precision))
                    .choices({"32-true", "16-mixed", "bf16-mixed"}).toggle());
    s.push_back(Entry("trainer.accumulate_grad_batches", T::Int, "Speed", "Accumulate batches",
                      "Micro-batches per optimizer step (a larger effective batch in the same memory).",
                      HEARTH_FIELD(trainer.accumulate_grad_batches)).atLeast(1).atMost(65536).toggle());
    s.push_back(Entry("trainer.accelerator", T::String, "Devices", "Accelerator",
                      "auto: the GPU when there is one, else the CPU.", HEARTH_FIELD(trainer.accelerator))
                    .choices({"auto", "cpu", "cuda"}).toggle());
    s.push_back(Entry("trainer.devices", T::Int, "Devices", "Devices",
                      "Devices per node, one process each (CPU: processes); auto: every GPU, or 1 on a CPU.",
                      HEARTH_FIELD(trainer.devices)).atLeast(1).atMost(256).nullable("auto").zeroMeans("auto").nullWord("auto")
                    .toggle());
    s.push_back(Entry("trainer.num_nodes", T::Int, "Devices", "Nodes",
                      "Machines in the run, each with trainer.devices processes (started by torchrun or srun "
                      "on every node).", HEARTH_FIELD(trainer.num_nodes)).atLeast(1).atMost(4096).toggle());
    s.push_back(Entry("trainer.strategy", T::String, "Devices", "Strategy",
                      "How several devices share the work: ddp replicates the model; zero1 shards the optimizer "
                      "state, zero2 also the gradients, zero3 also the parameters (gathered block by block); "
                      "pipeline cuts the model into consecutive stages, one per device (model parallel).",
                      HEARTH_FIELD(trainer.strategy)).choices({"auto", "ddp", "zero1", "zero2", "zero3", "pipeline"})
                    .toggle());
    s.push_back(Entry("trainer.offload_optimizer", T::Bool, "Memory", "Offload optimizer to host",
                      "ZeRO-Offload: a sharded strategy's optimizer state and master copy in (pinned) host memory, "
                      "stepped on the CPU; the device keeps only the parameters and gradients, and each step "
                      "copies the gradient shard out and the updated values back.",
                      HEARTH_FIELD(trainer.offload_optimizer)).toggle()
                    .noEffect(offloadRule));
    s.push_back(Entry("trainer.num_workers", T::Int, "Speed", "Loader workers",
                      "Threads preparing batches; 0 loads on the training thread.", HEARTH_FIELD(trainer.num_workers))
                    .atLeast(0).atMost(256).toggle());
    s.push_back(Entry("trainer.pin_memory", T::Bool, "Speed", "Pin memory",
                      "Page-locked host buffers for faster, asynchronous copies to the GPU.",
                      HEARTH_FIELD(trainer.pin_memory)).toggle()
                    .noEffect(cudaRule));
    s.push_back(Entry("trainer.prefetch_factor", T::Int, "Speed", "Prefetch per worker",
                      "Batches each worker prepares ahead.", HEARTH_FIELD(trainer.prefetch_factor)).atLeast(1).atMost(64).toggle()
                    .noEffect(workersRule));
    s.push_back(Entry("trainer.persistent_workers", T::Bool, "Speed", "Persistent workers",
                      "Keep loader workers between epochs.", HEARTH_FIELD(trainer.persistent_workers)).toggle()
                    .noEffect(workersRule));
    s.push_back(Entry("trainer.gradient_clip_val", T::Double, "Optimization", "Clip gradients",
                      "Clip the gradient norm to this value; empty: no clipping.",
                      HEARTH_FIELD(trainer.gradient_clip_val)).nullable("off").above(0).toggle());
    s.push_back(Entry("trainer.set_grads_to_none", T::Bool, "Memory", "Free gradients after each step",
                      "Drop the gradients after each optimizer step (backward allocates them anew) instead of "
                      "zeroing them in place, so they do not hold memory through the next forward pass. "
                      "Under ddp and zero1 the reducer's buckets keep that memory; dropping saves zeroing them "
                      "(backward's gradients are copied into the buckets instead of added to zeros).",
                      HEARTH_FIELD(trainer.set_grads_to_none)).toggle());
    s.push_back(Entry("trainer.deterministic", T::Bool, "Optimization", "Deterministic algorithms",
                      "Reproducible results, possibly slower.", HEARTH_FIELD(trainer.deterministic)).toggle());
    s.push_back(Entry("trainer.log_every_n_steps", T::Int, "Optimization", "Log every",
                      "Optimizer steps between logged metrics (plots and history).",
                      HEARTH_FIELD(trainer.log_every_n_steps)).atLeast(1).toggle());
    s.push_back(Entry("trainer.profile_every_n_steps", T::Int, "Optimization", "Profile every",
                      "Time the parts of one optimizer step in this many (data wait, copy, forward, backward, "
                      "communication, optimizer): the step-time breakdown. 0: off.",
                      HEARTH_FIELD(trainer.profile_every_n_steps)).atLeast(0).zeroMeans("off"));
    s.push_back(Entry("trainer.num_threads", T::Int, "Speed", "CPU threads",
                      "LibTorch intra-op threads; 0: one per physical core (or OMP_NUM_THREADS).", HEARTH_FIELD(trainer.num_threads))
                    .atLeast(0).atMost(1024).zeroMeans("default").toggle());
    s.push_back(Entry("trainer.cudnn_benchmark", T::Bool, "Speed", "cuDNN benchmark",
                      "CUDA: let cuDNN time kernels and pick the fastest.", HEARTH_FIELD(trainer.cudnn_benchmark))
                    .toggle()
                    .noEffect(cudaRule));
    s.push_back(Entry("trainer.tf32", T::Bool, "Speed", "TF32 matmuls",
                      "CUDA Ampere+: TensorFloat-32 for float32 matrix products.", HEARTH_FIELD(trainer.tf32)).toggle()
                    .noEffect(cudaRule));
    s.push_back(Entry("trainer.channels_last", T::Bool, "Speed", "Channels last",
                      "cnn, resnets: NHWC memory layout (faster convolutions on tensor cores).",
                      HEARTH_FIELD(trainer.channels_last)).toggle()
                    .noEffect(convolutionalRule));
    s.push_back(Entry("trainer.cuda_graph", T::String, "Speed", "CUDA graph",
                      "CUDA: step captures one whole optimizer step (forward, backward, every accumulation "
                      "micro-batch, unscale, clipping, the fused optimizer) as a CUDA graph after a few eager "
                      "warm-up steps, then replays it: one launch instead of hundreds. Needs fixed batch shapes, "
                      "one device and a fused optimizer; a batch of another shape (the epoch's last) runs eagerly.",
                      HEARTH_FIELD(trainer.cuda_graph))
                    .choices({"off", "step"}).toggle()
                    .noEffect(cudaRule));
    s.push_back(Entry("trainer.checkpoint.monitor", T::String, "Optimization", "Keep best by",
                      "The validation metric that picks the best checkpoint (tested at the end).",
                      HEARTH_FIELD(trainer.checkpoint.monitor)).choices({"val_acc", "val_loss"}));
    s.push_back(Entry("trainer.checkpoint.mode", T::String, "Optimization", "Best is",
                      "Whether higher or lower is better.", HEARTH_FIELD(trainer.checkpoint.mode))
                    .choices({"max", "min"}));
    s.push_back(Entry("trainer.early_stopping.monitor", T::String, "Optimization", "Stop early on",
                      "Stop when this validation metric has not improved for trainer.early_stopping.patience "
                      "epochs (the best checkpoint is then tested); none: train every epoch.",
                      HEARTH_FIELD(trainer.early_stopping.monitor)).choices({"none", "val_loss", "val_acc"}));
    s.push_back(Entry("trainer.early_stopping.mode", T::String, "Optimization", "Improvement is",
                      "auto: lower val_loss, higher val_acc.", HEARTH_FIELD(trainer.early_stopping.mode))
                    .choices({"auto", "min", "max"}));
    s.push_back(Entry("trainer.early_stopping.patience", T::Int, "Optimization", "Patience",
                      "Validated epochs without improvement before stopping.",
                      HEARTH_FIELD(trainer.early_stopping.patience)).atLeast(1).atMost(1000));
    s.push_back(Entry("trainer.early_stopping.min_delta", T::Double, "Optimization", "Minimum improvement",
                      "A change smaller than this does not count as an improvement.",
                      HEARTH_FIELD(trainer.early_stopping.min_delta)).atLeast(0));
    s.push_back(Entry("trainer.early_stopping.stop_at", T::Double, "Optimization", "Stop once it reaches",
                      "Stop as soon as the monitored metric reaches this value (val_acc at or above it, val_loss "
                      "at or below it): the time to an accuracy. Empty: off.",
                      HEARTH_FIELD(trainer.early_stopping.stop_at)).nullable("off").toggle());
    s.push_back(Entry("trainer.safety_checkpoint.every_n_steps", T::Int, "Optimization", "Save state every (steps)",
                      "Write the whole training state (model, optimizer, scaler, random generators, the position "
                      "in the epoch) every this many optimizer steps, so the run can be resumed "
                      "(hearth-cli resume); 0: not by steps.",
                      HEARTH_FIELD(trainer.safety_checkpoint.every_n_steps)).atLeast(0).zeroMeans("off"));
    s.push_back(Entry("trainer.safety_checkpoint.every_n_minutes", T::Double, "Optimization",
                      "Save state every (minutes)",
                      "Write the training state at least this often; 0: not by time. A stop always writes one.",
                      HEARTH_FIELD(trainer.safety_checkpoint.every_n_minutes)).atLeast(0).atMost(10080).zeroMeans("off"));
    s.push_back(Entry("trainer.safety_checkpoint.keep_last", T::Int, "Optimization", "Saved states kept",
                      "The newest training states kept (a completed run deletes them); 0: none (the run cannot "
                      "be resumed).", HEARTH_FIELD(trainer.safety_checkpoint.keep_last))
                    .atLeast(0).atMost(1000).zeroMeans("off"));
    s.push_back(Entry("trainer.ddp.backend", T::String, "Devices", "Backend",
                      "ddp: how processes talk. auto: nccl on CUDA, gloo on CPU; gloo also runs several ranks "
                      "on one GPU.", HEARTH_FIELD(trainer.ddp.backend)).choices({"auto", "gloo", "nccl"}).toggle()
                    .noEffect(distributedRule));
    s.push_back(Entry("trainer.ddp.find_unused_parameters", T::Bool, "Devices", "Find unused parameters",
                      "ddp: allow parameters that take no part in a step's loss (costs a graph walk per step).",
                      HEARTH_FIELD(trainer.ddp.find_unused_parameters)).toggle()
                    .noEffect(reducerRule));
    s.push_back(Entry("trainer.ddp.gradient_as_bucket_view", T::Bool, "Devices", "Gradients as bucket views",
                      "ddp: gradients live in the allreduce buckets: no copies between them each step and one copy of "
                      "the gradients less in memory (on by default; PyTorch's DDP has it off).",
                      HEARTH_FIELD(trainer.ddp.gradient_as_bucket_view)).toggle()
                    .noEffect(reducerRule));
    s.push_back(Entry("trainer.ddp.bucket_cap_mb", T::Double, "Devices", "Bucket size (MB)",
                      "ddp, zero1: gradients are allreduced in buckets of about this size, overlapping backward; "
                      "zero2: reduced onto their owners in buckets of this size (the memory a step holds beside "
                      "the gradients).",
                      HEARTH_FIELD(trainer.ddp.bucket_cap_mb)).above(0).toggle()
                    .noEffect(bucketRule));
    s.push_back(Entry("trainer.ddp.timeout_s", T::Int, "Devices", "Timeout (s)",
                      "ddp: how long a rank waits for the others (rendezvous and each collective) before "
                      "the run fails.", HEARTH_FIELD(trainer.ddp.timeout_s)).atLeast(1).toggle()
                    .noEffect(distributedRule));
    s.push_back(Entry("trainer.fsdp.blocks_per_unit", T::Int, "Devices", "Blocks per gathered unit",
                      "zero3: consecutive model blocks (conv blocks, hidden layers, residual blocks, encoder "
                      "layers) whose parameters are gathered and whose gradients are reduced together. 1 holds "
                      "the least; more makes fewer, larger collectives.", HEARTH_FIELD(trainer.fsdp.blocks_per_unit))
                    .atLeast(1).atMost(1024).toggle()
                    .noEffect(fsdpRule));
    s.push_back(Entry("trainer.fsdp.prefetch", T::Bool, "Devices", "Prefetch the next unit",
                      "zero3: start gathering the next unit's parameters (the one after in forward, the one before "
                      "in backward) while this one computes, as FSDP's forward and backward prefetch; one more "
                      "unit in memory at a time.", HEARTH_FIELD(trainer.fsdp.prefetch)).toggle()
                    .noEffect(fsdpRule));
    s.push_back(Entry("trainer.pipeline.stages", T::Int, "Devices", "Pipeline stages",
                      "pipeline: consecutive parts the model is cut into between its blocks, one per process "
                      "(auto: as many as processes).", HEARTH_FIELD(trainer.pipeline.stages))
                    .atLeast(1).atMost(256).nullable("auto").zeroMeans("auto").nullWord("auto").toggle()
                    .noEffect(pipelineRule));
    s.push_back(Entry("trainer.pipeline.micro_batches", T::Int, "Devices", "Pipeline micro-batches",
                      "pipeline: each batch is cut into this many micro-batches that flow through the stages one "
                      "after another (GPipe); more shrink the bubble where stages wait.",
                      HEARTH_FIELD(trainer.pipeline.micro_batches)).atLeast(1).atMost(4096).toggle()
                    .noEffect(pipelineRule));
    s.push_back(Entry("trainer.pipeline.stage_blocks", T::IntList, "Devices", "Blocks per stage",
                      "pipeline: how many consecutive blocks each stage runs, first stage first, e.g. 3, 5 (as many "
                      "numbers as stages, summing to the model's blocks); empty: cut where the stages' forward FLOPs "
                      "are most even.", HEARTH_FIELD(trainer.pipeline.stage_blocks)).atLeast(1).atMost(4096)
                    .noEffect(pipelineRule));
    return s;
}

#undef HEARTH_FIELD

const char* typeWord(const ConfigKey& k) {
    switch (k.type) {
        case ConfigType::String: return k.choices.empty() ? "text" : "choice";
        case ConfigType::Bool: return "true/false";
        case ConfigType::Int: return "integer";
        case ConfigType::UInt: return "integer >= 0";
        case ConfigType::Double: return "number";
        case ConfigType::IntList: return "list of integers";
    }
    return "?";
}

// "at least 1", "in [0, 1)", "greater than 0", "in (0, 1]"; "" without bounds.
std::string rangeText(const ConfigKey& k) {
    if (k.min && k.max) {
        return std::string("in ") + (k.min_exclusive ? "(" : "[") + number(*k.min) + ", " + number(*k.max) +
               (k.max_exclusive ? ")" : "]");
    }
    if (k.min) return (k.min_exclusive ? "greater than " : "at least ") + number(*k.min);
    if (k.max) return (k.max_exclusive ? "less than " : "at most ") + number(*k.max);
    return "";
}

bool inRange(const ConfigKey& k, double v) {
    if (std::isnan(v)) return false;
    if (k.min && (k.min_exclusive ? !(v > *k.min) : !(v >= *k.min))) return false;
    if (k.max && (k.max_exclusive ? !(v < *k.max) : !(v <= *k.max))) return false;
    return true;
}

Json valueJson(const ConfigKey& key, const ExperimentConfig& config) {
    auto& c = const_cast<ExperimentConfig&>(config);  // the accessor only reads here
    const std::string& word = key.null_word;
    return std::visit(
        [&word](auto* p) -> Json {
            using V = std::remove_pointer_t<decltype(p)>;
            if constexpr (std::is_same_v<V, std::optional<std::string>> || std::is_same_v<V, std::optional<int64_t>> ||
                          std::is_same_v<V, std::optional<double>>) {
                return *p ? Json(**p) : (word.empty() ? Json(nullptr) : Json(word));
            } else {
                return Json(*p);
            }
        },
        key.field(c));
}

}  // namespace

const std::vector<ConfigKey>& configSchema() {
    static const std::vector<ConfigKey> schema = buildSchema();
    return schema;
}

const std::vector<std::string>& configGroups() {
    static const std::vector<std::string> groups = {"Experiment", "Data", "Model", "Optimization", "Speed", "Memory",
                                                       "Devices"};
    return groups;
}

const ConfigKey* findConfigKey(const std::string& key) {
    for (const auto& k : configSchema()) {
        if (k.key == key) return &k;
    }
    return nullptr;
}

std::string configValueJson(const ConfigKey& key, const ExperimentConfig& config) {
    return valueJson(key, config).dump();
}

std::string configValueText(const ConfigKey& key, const ExperimentConfig& config) {
    const Json v = valueJson(key, config);
    if (v.is_null()) return key.null_label.empty() ? "none" : key.null_label;
    if (v.is_string()) return v.get<std::string>();
    if (v.is_array()) {
        std::string out;
        for (const auto& e : v) out += (out.empty() ? "" : ", ") + e.dump();
        return out;
    }
    if (key.zero_is_null && v.is_number() && v.get<double>() == 0.0) return key.null_label;
    if (v.is_number_float()) return number(v.get<double>());
    return v.dump();
}

std::string checkConfigValue(const ConfigKey& key, const ExperimentConfig& config) {
    const Json v = valueJson(key, config);
    if (v.is_null() || (!key.null_word.empty() && v == Json(key.null_word))) return "";
    if (!key.choices.empty()) {
        const auto value = v.get<std::string>();
        for (const auto& c : key.choices) {
            if (c == value) return "";
        }
        std::string list;
        for (const auto& c : key.choices) list += (list.empty() ? "" : ", ") + c;
        return "'" + value + "' is not one of: " + list + didYouMean(value, key.choices);
    }
    if (!key.min && !key.max) return "";
    auto bad = [&](double x) { return "must be " + rangeText(key) + ", got " + number(x); };
    if (v.is_array()) {
        for (const auto& e : v) {
            if (!inRange(key, e.get<double>())) return bad(e.get<double>());
        }
        return "";
    }
    if (v.is_number() && !inRange(key, v.get<double>())) return bad(v.get<double>());
    return "";
}

std::string noEffectReason(const ConfigKey& key, const ExperimentConfig& config, const DeviceCapabilities& caps) {
    return key.no_effect ? key.no_effect(config, caps) : std::string();
}

std::vector<std::string> offeredChoices(const ConfigKey& key, const DeviceCapabilities& caps) {
    std::vector<std::string> out;
    for (const auto& c : key.choices) {
        if (key.key == "trainer.precision" && c == "16-mixed" && !caps.cuda_available && !caps.cpu_fp16_autocast) {
            continue;
        }
        if (key.key == "trainer.accelerator" && c == "cuda" && !caps.cuda_available) continue;
        if (key.key == "optimizer.implementation" && c == "fused" && !caps.fused_optimizers) continue;
        // The distributed strategies run where c10d is built in (one process per device).
        if (key.key == "trainer.strategy" && c != "auto" && !caps.distributed) continue;
        if (key.key == "trainer.ddp.backend" && c == "nccl" && !caps.cuda_available) continue;
        out.push_back(c);
    }
    return out;
}

std::optional<double> offeredMax(const ConfigKey& key, const DeviceCapabilities& caps) {
    // Processes on this machine: one per GPU; on a CPU several Gloo processes where c10d is built.
    if (key.key == "trainer.devices") {
        if (!caps.distributed) return 1.0;
        return caps.cuda_available ? static_cast<double>(std::max<int64_t>(caps.cuda_device_count, 1)) : 8.0;
    }
    return key.max;
}

std::string describeConfigKeys(const std::string& prefix) {
    const ExperimentConfig defaults;
    std::ostringstream out;
    for (const auto& k : configSchema()) {
        if (!prefix.empty() && k.key.rfind(prefix, 0) != 0) continue;
        const std::string null_text = k.null_word.empty() ? "null" : "\"" + k.null_word + "\"";
        out << k.key << "  (" << typeWord(k) << (k.nullable ? " or " + null_text : std::string()) << ")  default "
            << configValueJson(k, defaults);
        if (!k.choices.empty()) {
            out << "  one of: ";
            for (size_t i = 0; i < k.choices.size(); ++i) out << (i ? ", " : "") << k.choices[i];
        }
        const std::string range = rangeText(k);
        if (!range.empty()) out << "  " << range;
        out << "\n    " << k.label << ": " << k.help << "\n";
    }
    return out.str();
}

}  // namespace hearth
