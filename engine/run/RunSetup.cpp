#include "engine/run/RunSetup.h"

#include "engine/TorchCompat.h"
#include "engine/config/ByteSize.h"
#include "engine/config/ConfigSchema.h"
#include "engine/config/DeviceInfo.h"
#include "engine/data/DataError.h"
#include "engine/data/DataModule.h"
#include "engine/data/Loader.h"
#include "engine/dist/Rendezvous.h"
#include "engine/monitor/DeviceMonitor.h"
#include "engine/optim/Optimizers.h"
#include "engine/text/TokenizedCorpus.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sstream>

namespace hearth {
namespace {

std::string onOff(bool on) {
    return on ? "on" : "off";
}

std::string number(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

// The variable that sets LibTorch's thread count, when one does.
const char* threadVariable() {
    for (const char* name : {"OMP_NUM_THREADS", "MKL_NUM_THREADS"})
        if (std::getenv(name)) return name;   // NOLINT(concurrency-mt-unsafe): read before any thread starts
    return nullptr;
}

// Processes of this run on this machine (a launcher's LOCAL_WORLD_SIZE); 1 without a launcher.
int64_t processesOnThisNode() {
    try {
        const auto env = dist::readDistEnv();
        return env ? std::max<int64_t>(env->local_world_size, 1) : 1;
    } catch (const std::exception&) {
        return 1;   // the strategy reports a malformed launch itself
    }
}

// The intra-op thread count of trainer.num_threads=0: one per physical core
// (compat::defaultIntraOpThreads, read once, before any run changed LibTorch's), shared by the
// processes of a run on this machine as torchrun shares them. A thread variable's count is
// taken as it is.
int defaultThreadCount() {
    static const int per_machine = compat::defaultIntraOpThreads(physicalCoresAvailable(), threadVariable() != nullptr);
    if (threadVariable()) return per_machine;
    return static_cast<int>(std::max<int64_t>(1, per_machine / processesOnThisNode()));
}

// Where that count came from, for the effective settings.
std::string defaultThreadSource() {
    if (const char* name = threadVariable()) return name;
    const int64_t processes = processesOnThisNode();
    return processes > 1 ? "default: the physical cores shared by the " + std::to_string(processes) +
                               " processes on this machine"
                         : "default: one per physical core";
}

// glibc serves blocks above a *dynamic* mmap threshold with fresh mmaps and unmaps them on free,
// so every step's large activations page-fault in zeroed pages again (measured: 10x the minor
// faults and ~15% slower CNN steps than Python's allocation pattern). A fixed 64 MiB threshold and
// a high trim threshold keep freed activation memory in the heap for the next step.
void tuneHostAllocator() {
#if defined(__GLIBC__)
    static const bool tuned = [] {
        // Once per process (a function-local static), before the first run allocates.
        mallopt(M_MMAP_THRESHOLD, 64 * 1024 * 1024);   // NOLINT(concurrency-mt-unsafe)
        mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);  // NOLINT(concurrency-mt-unsafe)
        return true;
    }();
    (void)tuned;
#endif
}

// "key: message" for each issue, joined by `separator`.
std::string issuesText(const std::vector<ConfigIssue>& issues, const char* separator) {
    std::string message;
    for (const auto& issue : issues) message += (message.empty() ? "" : separator) + issue.key + ": " + issue.message;
    return message;
}

void throwIfInvalid(const ExperimentConfig& config, const DeviceCapabilities& caps) {
    const auto issues = validate(config, caps);
    if (!issues.empty()) throw ConfigError(issues.front().key, issuesText(issues, "; "));
}

// Every input that is not there or not of its kind, listed at once before anything loads (a
// preset with paths to fill in names all of them, not the first alone).
void throwIfInputsUnusable(const ExperimentConfig& config) {
    const auto issues = inputProblems(config);
    if (!issues.empty()) throw DataError(issuesText(issues, "\n"));
}

}  // namespace

PreparedRun prepareRun(const ExperimentConfig& requested, const std::function<void(const std::string&)>& log) {
    const auto caps = queryDeviceCapabilities();
    throwIfInvalid(requested, caps);
    PreparedRun run;
    // "auto" decided for this machine (devices, strategy); the run records the config as given.
    run.config = requested;
    run.config.trainer = resolveTrainer(requested.trainer, caps);
    const ExperimentConfig& config = run.config;
    run.device = resolveDevice(config.trainer, caps);
    applyGlobalSettings(config, run.device);
    throwIfInputsUnusable(config);
    TextSplitOptions text;
    text.tokenizer_fallback = config.model.pretrained;
    text.cache_dir = defaultTokenCacheDir();
    text.log = log;
    run.splits = loadDataSplits(config.data, config.seed, text);
    if (!run.splits.train || run.splits.train->size() == 0) {
        throw DataError("the training split is empty (" + run.splits.description + ")");
    }
    // Re-seed so the weights do not depend on how many random numbers data loading drew.
    torch::manual_seed(config.seed);
    ModelInput input{run.splits.train->sampleShape(), static_cast<int64_t>(run.splits.class_names.size())};
    input.vocab_size = run.splits.text.vocab_size;
    input.max_length = run.splits.text.max_length;
    input.pad_id = run.splits.text.pad_id;
    run.model = createModel(config.model, input);
    return run;
}

torch::Device resolveDevice(const TrainerConfig& trainer, const DeviceCapabilities& caps) {
    if (trainer.accelerator == "cuda" || (trainer.accelerator == "auto" && caps.cuda_available)) {
        if (!caps.cuda_available) {
            throw ConfigError("trainer.accelerator", "cuda was requested but LibTorch sees no CUDA device");
        }
        return torch::Device(torch::kCUDA, 0);
    }
    if (trainer.accelerator != "cpu" && trainer.accelerator != "auto") {
        throw ConfigError("trainer.accelerator", "use auto, cpu or cuda, got '" + trainer.accelerator + "'");
    }
    return torch::Device(torch::kCPU);
}

void applyGlobalSettings(const ExperimentConfig& config, torch::Device device) {
    const auto& t = config.trainer;
    tuneHostAllocator();
    const int threads = defaultThreadCount();
    compat::setIntraOpThreads(t.num_threads > 0 ? static_cast<int>(t.num_threads) : threads);
    torch::manual_seed(config.seed);
    if (device.is_cuda()) {
        torch::cuda::manual_seed_all(config.seed);
        if (t.deterministic) {
            // cuBLAS is deterministic only with a fixed workspace; must be set before its first use.
            // Before the run's first cuBLAS call; only the run thread reads it.
            setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);  // NOLINT(concurrency-mt-unsafe)
        }
    }
    auto& ctx = at::globalContext();
    ctx.setDeterministicAlgorithms(t.deterministic, /*warn_only=*/false);
    ctx.setDeterministicCuDNN(t.deterministic);
    ctx.setBenchmarkCuDNN(device.is_cuda() && t.cudnn_benchmark && !t.deterministic);
    ctx.setAllowTF32CuBLAS(device.is_cuda() && t.tf32);
    ctx.setAllowTF32CuDNN(device.is_cuda() && t.tf32);
}

std::map<std::string, std::string> effectiveSettings(const ExperimentConfig& config, torch::Device device,
                                                     const Trainer& trainer, const std::string& checkpoint_path) {
    const auto& t = config.trainer;
    const bool cpu = device.is_cpu();
    const std::string na_cpu = "off (not applicable on CPU)";
    const bool workers = t.num_workers > 0;
    std::map<std::string, std::string> e;
    // Every toggle of the key table is listed, "n/a" where its no-effect rule says it does nothing
    // here (DDP's buckets in a one-process run); the lines below say more where there is more to say.
    const DeviceCapabilities caps = queryDeviceCapabilities();
    for (const auto& key : configSchema()) {
        if (!key.toggle) continue;
        const std::string why = noEffectReason(key, config, caps);
        e[key.key] = why.empty() ? configValueText(key, config) : "n/a: " + why;
    }
    e["trainer.accelerator"] = device.str();
    const auto& strategy = trainer.strategyInUse();
    e["trainer.devices"] = strategy.worldSize() == 1
                               ? std::string("1")
                               : std::to_string(strategy.worldSize()) + " processes, one device each";
    if (t.num_nodes > 1) {
        e["trainer.num_nodes"] = std::to_string(t.num_nodes) + " nodes, " +
                                 std::to_string(strategy.worldSize() / t.num_nodes) + " processes each";
    }
    // Sharded data: each device reads its own batch; pipeline stages all read the same one.
    const int64_t readers = strategy.shardsData() ? strategy.worldSize() : 1;
    e["trainer.batch_size"] = std::to_string(t.batch_size) + (readers > 1 ? " per micro-batch and device, " : " per micro-batch, ") +
                              std::to_string(t.batch_size * t.accumulate_grad_batches * readers) +
                              " per optimizer step";
    e["trainer.strategy"] = trainer.strategyInUse().describe();
    e["optimizer.implementation"] = describeOptimizerKernel(config.optimizer);
    e["trainer.precision"] = trainer.strategyInUse().precision().describe();
    e["trainer.accumulate_grad_batches"] = std::to_string(t.accumulate_grad_batches) + " (" +
                                           std::to_string(trainer.optimizerStepsPerEpoch()) +
                                           " optimizer steps per epoch)";
    const Loader& train_loader = trainer.trainLoader();
    const bool on_device = config.data.on_device;
    e["trainer.num_workers"] = on_device && workers ? std::to_string(t.num_workers) +
                                                          " (validation and test only: data.on_device cuts the "
                                                          "training batches on the device)"
                               : workers ? std::to_string(t.num_workers) + " (loader threads)"
                                         : "0 (batches built on the training thread)";
    e["trainer.prefetch_factor"] =
        workers ? std::to_string(t.prefetch_factor) + " (batches in flight per worker)" : "n/a (num_workers=0)";
    e["trainer.persistent_workers"] = workers ? onOff(t.persistent_workers) : "n/a (num_workers=0)";
    e["trainer.pin_memory"] = cpu ? na_cpu
                              : !t.pin_memory ? "off (pageable host memory: each copy blocks the host)"
                              : on_device ? "on (validation and test batches; the training set is on the device)"
                              : train_loader.overlapsCopies()
                                  ? "on (pinned staging; each next batch is copied on a copy stream during the step)"
                                  : "on (pinned staging, non-blocking copies)";
    e["data.on_device"] =
        on_device ? "on (" + formatBytes(train_loader.residentBytes()) + " on " + device.str() +
                        (cpu ? "; on a CPU the data is in that memory anyway: no copies to save)" : ")")
        : cpu ? "off"
              : std::string("off (batches built in host memory") +
                    (config.data.kind == "idx" ? ", images copied as uint8 and normalised on the device)" : ")");
    e["trainer.num_threads"] =
        std::to_string(torch::get_num_threads()) + (t.num_threads > 0 ? "" : " (" + defaultThreadSource() + ")");
    e["trainer.deterministic"] =
        t.deterministic ? "on (deterministic algorithms, seed " + std::to_string(config.seed) + ")" : "off";
    e["trainer.gradient_clip_val"] =
        t.gradient_clip_val ? number(*t.gradient_clip_val) + " (gradient norm, after unscale)" : "off";
    e["trainer.cudnn_benchmark"] = cpu                                    ? na_cpu
                                   : t.cudnn_benchmark && t.deterministic ? "off (deterministic wins)"
                                                                          : onOff(t.cudnn_benchmark);
    e["trainer.tf32"] = cpu ? na_cpu : onOff(t.tf32);
    e["trainer.channels_last"] = !t.channels_last         ? "off"
                                 : trainer.strategyInUse().channelsLast() ? "on (NHWC weights and inputs)"
                                                          : "off (model has no convolutions)";
    e["trainer.cuda_graph"] =
        trainer.capturedStep()
            ? "step (after " + std::to_string(kCaptureWarmupSteps) + " eager warm-up steps one optimizer step of " + std::to_string(t.accumulate_grad_batches) +
                  " micro-batch(es) is captured as a CUDA graph and replayed; a batch of another shape, such as the "
                  "epoch's last smaller one, runs eagerly; no step-time breakdown: one launch has no parts to time)"
        : cpu ? "off"
              : "off (each step launches its kernels one by one)";
    e["trainer.log_every_n_steps"] = std::to_string(t.log_every_n_steps) + " optimizer steps";
    e["trainer.checkpoint"] = t.checkpoint.monitor + " (" + t.checkpoint.mode + ") -> " +
                              (checkpoint_path.empty() ? "in memory only" : checkpoint_path);
    {
        const SafetyCheckpointConfig& sc = t.safety_checkpoint;
        std::string when;
        if (sc.every_n_steps > 0) when = "every " + std::to_string(sc.every_n_steps) + " optimizer steps";
        if (sc.every_n_minutes > 0.0) when += (when.empty() ? "every " : " or ") + number(sc.every_n_minutes) + " min";
        when += when.empty() ? "at a stop" : " and at a stop";
        e["trainer.safety_checkpoint"] =
            sc.keep_last <= 0 || checkpoint_path.empty() ? "off (the run cannot be resumed)"
            : trainer.strategyInUse().worldSize() > 1
                ? "off (data-parallel runs cannot be resumed yet)"
                : when + ", last " + std::to_string(sc.keep_last) + " kept -> " +
                      (std::filesystem::path(checkpoint_path).parent_path() / "state-<step>.pt").string();
    }
    e["scheduler.name"] = trainer.schedule().describe();
    e["optimizer.name"] = config.optimizer.name + " (lr " + number(config.optimizer.lr) + ", weight_decay " +
                          number(config.optimizer.weight_decay) + ")";
    if (!isTextKind(config.data.kind)) {
        e["data.padding"] = "n/a (not text data)";
        e["data.bucket_by_length"] = "n/a (not text data)";
    }
    e["seed"] = std::to_string(config.seed);
    // MFU's denominator (the achieved TFLOP/s are shown wherever the model's FLOPs are known).
    if (const auto peak = devicePeakFlops(device, t.precision, t.tf32))
        e["engine.mfu_peak"] = peak->basis;
    else
        e["engine.mfu_peak"] = cpu ? "n/a on CPU (TFLOP/s only)" : "no datasheet peak known for this GPU (TFLOP/s only)";
#if defined(__GLIBC__)
    e["engine.host_allocator"] = "glibc malloc, fixed 64 MiB mmap threshold (no per-step page faults)";
#endif
    return e;
}

std::vector<std::string> ineffectiveToggles(const ExperimentConfig& requested) {
    // pin_memory on a CPU is not among them: it is on by default so that one config serves CPU and
    // GPU machines alike (a default value is never warned about); the effective settings still
    // say "off (not applicable on CPU)".
    std::vector<ConfigIssue> warnings;
    validate(requested, queryDeviceCapabilities(), &warnings);
    std::vector<std::string> notes;
    for (const auto& w : warnings) {
        const ConfigKey* key = findConfigKey(w.key);
        notes.push_back(w.key + "=" + (key ? configValueText(*key, requested) : std::string("?")) + " " + w.message);
    }
    return notes;
}

}  // namespace hearth
