#pragma once
// The engine's one way out: typed events delivered to EventSinks (UI controller, run store
// writer, CLI progress printer). Plain standard types only, so ui/ and storage/ can include it.

#include "engine/config/DeviceInfo.h"
#include "engine/metrics/ClassificationReport.h"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace hearth {

// Why a run failed; the CLI maps these to exit codes 2 / 3 / 4.
enum class FailureKind { Config, Data, Training };

struct RunStarted {
    std::string run_name;
    std::string config_json;                         // the requested config, as given
    std::map<std::string, std::string> effective;    // dotted key -> what actually ran ("n/a on CPU: ...")
    EnvironmentInfo environment;
    std::string device;                              // "cpu", "cuda:0"
    int64_t train_size = 0, val_size = 0, test_size = 0;
    int64_t batches_per_epoch = 0;                   // micro-batches
    int64_t max_epochs = 0;
    std::vector<std::string> class_names;
    std::vector<std::string> model_summary;          // one line per layer
    int64_t parameter_count = 0;
    double wall_time_s = 0.0;                        // seconds since the Unix epoch
};

// Where a training micro-batch's time goes, in ms per micro-batch, measured on a sample of the
// micro-batches (trainer.profile_every_n_steps): wall clock on the CPU, CUDA events on a GPU.
// Parts add up to about step_ms; the difference is work outside the timed sections.
struct StepBreakdown {
    double data_wait_ms = 0.0;       // waiting for the loader's next batch
    double host_to_device_ms = 0.0;  // the batch's copy to the device
    double forward_ms = 0.0;         // model forward, loss and predictions
    double backward_ms = 0.0;        // backward compute (gradient communication overlapped with it included)
    double comm_wait_ms = 0.0;       // DDP/ZeRO: waiting for gradient communication after the last backward op
    double optimizer_ms = 0.0;       // unscale, clip, optimizer step, zero gradients (per micro-batch)
    double sync_ms = 0.0;            // reading metrics back to the host (amortised over the interval)
    double step_ms = 0.0;            // the profiled micro-batches' own measured time
    int64_t profiled = 0;            // micro-batches the means come from (0: not measured)

    double partsMs() const {
        return data_wait_ms + host_to_device_ms + forward_ms + backward_ms + comm_wait_ms + optimizer_ms + sync_ms;
    }
};

// One logged training step (every log_every_n_steps optimizer steps, and the last of an epoch).
struct StepMetrics {
    int64_t epoch = 0;               // 0-based
    int64_t batch = 0;               // micro-batches done in this epoch (1..batches_per_epoch)
    int64_t batches_per_epoch = 0;
    int64_t global_step = 0;         // optimizer steps since the start
    double loss = 0.0;               // mean loss of the micro-batches since the last log
    double accuracy = 0.0;           // idem
    double lr = 0.0;
    double loss_scale = 0.0;         // GradScaler scale; 0 when not scaling
    double samples_per_sec = 0.0;    // since the last log
    double step_time_ms = 0.0;       // mean per micro-batch since the last log
    double data_wait_ms = 0.0;       // mean per micro-batch waiting for the loader
    double elapsed_s = 0.0;          // since fit started
    double eta_s = 0.0;              // to the end of fit
    int64_t skipped_steps = 0;       // optimizer steps the GradScaler skipped (inf/NaN gradients) since the last log
    // Model FLOPs achieved per device since the last log (the model's count, engine/models/
    // ModelFlops.h, over this rank's time), and that over the device's dense peak for the
    // precision (engine/monitor/PeakFlops.h). -1: unknown (no FLOP count for the model, no peak
    // for the device: every CPU).
    double tflops = -1.0;
    double mfu = -1.0;               // fraction, 0..1
    StepBreakdown breakdown;         // the interval's profiled micro-batches (live; not stored per step)
};

struct EpochMetrics {
    int64_t epoch = 0;
    int64_t global_step = 0;
    double train_loss = 0.0, train_accuracy = 0.0;
    double val_loss = 0.0, val_accuracy = 0.0;
    double lr = 0.0;
    double epoch_time_s = 0.0;
    double samples_per_sec = 0.0;
    double data_wait_share = 0.0;    // fraction of the epoch's step time spent waiting for data
    int64_t skipped_steps = 0;       // optimizer steps skipped by the GradScaler
    bool is_best = false;            // the checkpoint monitor improved
    StepBreakdown breakdown;         // the epoch's profiled micro-batches
};

struct EvalReport {
    std::string split;               // "val" | "test"
    double loss = 0.0;
    ClassificationReport report;
};

struct Prediction {
    int64_t index = 0;               // index in the split's source file order
    int64_t true_label = 0;
    int64_t predicted = 0;
    double confidence = 0.0;         // softmax probability of `predicted`
};

struct PredictionsReady {
    std::string split;
    std::vector<Prediction> predictions;
};

struct CheckpointSaved {
    std::string path;
    int64_t epoch = 0;
    std::string monitor;
    double value = 0.0;
    int64_t bytes = 0;
    // "checkpoint": the best weights (best.pt); "state": a safety checkpoint, the fit's whole
    // training state (hearth-cli resume continues from it).
    std::string kind = "checkpoint";
    std::vector<std::string> removed;    // files of this kind deleted with this save (keep_last)
};

struct DeviceSample {
    double elapsed_s = 0.0;
    int64_t device = -1;             // -1: the process on the host; >= 0: CUDA device index
    std::string name;
    int64_t allocated_bytes = 0;     // CUDA: caching allocator; host: process RSS
    int64_t reserved_bytes = 0;
    int64_t peak_bytes = 0;
    int64_t total_bytes = 0;         // device memory, or physical RAM
    double utilization = -1.0;       // 0..1, -1 when unknown (GPU: NVML; host: this process's share of all cores)
    int64_t rank = 0;                // the data-parallel rank whose process took it (0 alone)
    // Another rank's latest sample relayed by rank 0 while training, for the live view; the store
    // keeps that rank's whole history, sent when fit ends, instead.
    bool relayed = false;
    // From NVML (the driver's view); -1 when unknown (no NVML, the call failed or is unsupported).
    int64_t driver_used_bytes = -1;  // device memory in use by every process, as nvidia-smi shows it
    double temperature_c = -1.0;
    double power_w = -1.0;
    double power_limit_w = -1.0;
    double sm_clock_mhz = -1.0;
};

// One rank of a data-parallel run (world size > 1), sent by every rank to rank 0 when fit ends.
struct RankSummary {
    int64_t rank = 0;
    int64_t world_size = 1;
    std::string backend;             // "gloo", "nccl"
    std::string device;              // "cpu", "cuda:1"
    int64_t pid = 0;
    int64_t samples = 0;             // training samples this rank processed
    double train_time_s = 0.0;       // its training time (validation excluded)
    double samples_per_sec = 0.0;
    double data_wait_s = 0.0;        // of train_time_s, waiting for its loader
    int64_t peak_memory_bytes = 0;
    std::string log_path;            // its output, when the launcher wrote it to a file
    int64_t steps = 0;               // optimizer steps
    int64_t comm_steps = 0;          // steps whose gradient communication was timed (0: none)
    double comm_ms = 0.0;            // mean gradient communication per timed step
    double overlap_ms = 0.0;         // of comm_ms, hidden under backward compute (ddp overlaps)
    // What this rank held after its first optimizer step (its MemoryBreakdown's): a sharded
    // strategy's share (zero1/zero2 split the optimizer state, zero2 also the gradients by their
    // flat slices; zero1 assigns whole parameters, so its shares can differ). -1: not measured.
    int64_t gradients_bytes = -1;
    int64_t optimizer_state_bytes = -1;
    // false: a live update while training (samples/s of the last logging interval, the rest 0);
    // true: the rank's record when fit ends (what the store keeps).
    bool final = true;
};

struct LogLine {
    enum class Level { Debug, Info, Warning, Error };
    Level level = Level::Info;
    std::string text;
};

// What fills memory at the run's peak, in bytes on the training device (rank 0's). Parameters,
// gradients and optimizer state are the sizes of the tensors themselves; activations are the peak
// minus everything else. GPU: from the caching allocator (reserved_unused = reserved peak -
// allocated peak). CPU: activations = peak RSS - RSS when training started - gradients -
// optimizer state; other = RSS when training started - parameters (libraries, data, buffers).
struct MemoryBreakdown {
    std::string device;              // "cpu", "cuda:0"; empty: not measured
    int64_t parameters_bytes = 0;
    int64_t gradients_bytes = 0;
    int64_t optimizer_state_bytes = 0;
    int64_t activations_bytes = 0;
    int64_t reserved_unused_bytes = 0;
    int64_t cuda_graph_bytes = 0;    // the captured step's private pool (trainer.cuda_graph=step), out of the reserve
    int64_t other_bytes = 0;
    int64_t peak_bytes = 0;          // allocated peak (GPU) or peak RSS (CPU)
    // Not part of the peak: the offloaded optimizer's state and copies in host memory
    // (trainer.offload_optimizer on a GPU), the device memory offload saves. 0: not offloaded.
    int64_t offloaded_bytes = 0;
};

struct RunFinished {
    std::string status;              // "completed" | "stopped"
    double train_time_s = 0.0;       // fit (train + validation)
    double total_time_s = 0.0;       // start to end, including test
    double best_val_accuracy = 0.0;
    double test_accuracy = 0.0;      // of the best checkpoint; 0 when stopped before test
    double test_loss = 0.0;
    double samples_per_sec = 0.0;    // training samples per second over fit
    double tflops = -1.0;            // model FLOPs per second per device over fit's training time; -1 unknown
    double mfu = -1.0;               // tflops over the device's dense peak (fraction); -1 unknown
    int64_t peak_memory_bytes = 0;
    int64_t epochs_completed = 0;
    int64_t global_steps = 0;
    MemoryBreakdown memory;
    std::string stop_reason;         // why it ended before max_epochs (early stopping); "" otherwise
};

struct RunFailed {
    FailureKind kind = FailureKind::Training;
    std::string message;             // what went wrong, naming the file/key/value
    std::string suggestion;          // what to try (e.g. out of memory: smaller batch, 16-mixed)
};

using Event = std::variant<RunStarted, StepMetrics, EpochMetrics, EvalReport, PredictionsReady,
                           CheckpointSaved, DeviceSample, RankSummary, LogLine, RunFinished, RunFailed>;

// Receives events on the engine thread. Implementations copy and return at once.
class EventSink {
public:
    virtual ~EventSink() = default;
    virtual void onEvent(const Event& event) = 0;
};

}  // namespace hearth
