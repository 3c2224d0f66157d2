#pragma once
// Predict, then measure: a run's peak memory by category and its step time, predicted from a
// short probe before the run trains (`hearth-cli tune --footprint`; each step of a ladder), and
// afterwards set against what the run measured. Torch-free (hearth_engine_api): the probe itself
// is engine/run/FinderSteps (predictFootprint in Finders.h); the store's readers and the reports
// compare with what is here.
//
// The model: parameters, gradients and optimizer state are the sizes of the probe's own tensors
// (they do not depend on the batch); activations and workspace grow with the batch, and are
// measured at two batch sizes below the run's (a quarter and a half of it) and extended along the
// straight line through them; other is what the process (CPU) or the device (GPU) held before the
// first step beyond the parameters. The categories are MemoryBreakdown's, measured the same way
// on a host (splitHostPeak), so the prediction and the run's breakdown compare part by part. On a
// GPU the peak compares (the allocator's allocated peak), but the run counts as activations what
// its forward pass keeps and the rest of the peak as other, where the probe counts everything
// beyond the held tensors as activations.

#include "engine/events/Events.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hearth {

// One probe: a few training steps at one micro-batch size.
struct FootprintProbe {
    int64_t batch_size = 0;
    int64_t peak_bytes = 0;         // CPU: peak RSS; GPU: the allocator's allocated peak
    int64_t activations_bytes = 0;  // at the peak, as MemoryBreakdown counts them
    int64_t workspace_bytes = 0;    // MemoryBreakdown's reserved_unused at this probe
    // A micro-batch's share of an optimizer step (microBatchShareMs over the timed steps, the first,
    // warm-up step left out), which the prediction multiplies by the run's micro-batches.
    double step_ms = 0.0;
    int64_t timed_micro_batches = 0;  // the micro-batches step_ms was measured over
    // The activations of each phase of a step (as activations_bytes counts them, which is the
    // larger): forward and backward, and the optimizer step's temporaries. 0: not measured.
    int64_t pass_bytes = 0;
    int64_t optimizer_bytes = 0;
    // GPU: what a forward pass keeps for its backward (as the run's memory breakdown calls its
    // activations there; the rest of activations_bytes, the backward's temporaries and the
    // libraries' workspaces, it counts as other). 0: not measured (a host).
    int64_t kept_bytes = 0;
};

// One timed optimizer step of a probe: its wall time and the micro-batches it ran.
struct TimedStep {
    double ms = 0.0;
    int64_t micro_batches = 1;
};
// A micro-batch's share of a probe's steps: the median over them of ms / micro_batches (0 with none).
double microBatchShareMs(const std::vector<TimedStep>& steps);

// What the probe measured that does not depend on the batch.
struct FootprintBase {
    std::string device;             // "cpu", "cuda:0"
    int64_t parameters_bytes = 0;
    int64_t gradients_bytes = 0;
    int64_t optimizer_state_bytes = 0;
    int64_t other_bytes = 0;        // held before the first step, beyond the parameters
    int64_t capacity_bytes = 0;     // what the run has to fit into (0: unknown)
    std::string capacity;           // in words: "the device's memory (79.2 GiB)", "RAM (23.4 GiB)"
};

struct FootprintPrediction {
    std::string device;
    int64_t batch_size = 0;         // the micro-batch predicted for
    int64_t accumulate = 1;         // micro-batches per optimizer step
    int64_t world_size = 1;         // ranks the probe ran as (the prediction is rank 0's)
    MemoryBreakdown memory;         // predicted, part by part (peak_bytes: their sum, reserved_unused the workspace)
    int64_t capacity_bytes = 0;
    std::string capacity;
    bool fits = true;               // the predicted peak (plus the workspace) within the capacity
    double step_ms = 0.0;           // predicted optimizer step (accumulate micro-batches)
    // GPU: the peak's temporaries beyond what the forward keeps, counted in memory.other_bytes as
    // the run counts them (not part of the base the probes measured before the first step).
    int64_t temporaries_bytes = 0;
    std::vector<FootprintProbe> probes;
    double probe_s = 0.0;           // the probe's own time, setup included
};

// The two micro-batch sizes probed for a run at `batch`: a quarter and half of it (at least 1 and
// 2, never above it).
std::vector<int64_t> footprintProbeSizes(int64_t batch);

// The prediction at micro-batch `batch` (accumulate per optimizer step) from the probes (two or
// more; with one, activations and workspace scale with the batch). Activations and workspace
// follow the line through the two largest probes, beyond them never below the larger probe's value
// (nor zero); step time too, per micro-batch (where the probes' times fall, noise, the larger
// probe's time per sample scaled to the batch).
// With the phases measured, the activations at the peak are the larger of the forward and backward
// passes' (along their line) and the optimizer step's temporaries (which do not grow with the
// batch): at small batches the peak can be the optimizer step (Adam over a large embedding), flat
// from one probe to the next, until the passes outgrow it.
FootprintPrediction extrapolateFootprint(const FootprintBase& base, const std::vector<FootprintProbe>& probes,
                                         int64_t batch, int64_t accumulate);

// What the prediction needs of the device: the peak (a host's peak RSS holds its workspace), plus
// on a GPU the caching allocator's reserve beyond the allocated peak.
int64_t footprintNeededBytes(const FootprintPrediction& prediction);
// The batch-independent part of a prediction (`tune --footprint` joins probes run in separate
// processes with it).
FootprintBase footprintBaseOf(const FootprintPrediction& prediction);

// What the probe's error says when a probe itself runs out of memory (the run would too), and the
// test for it in a probe's failure text (a child process's last error line).
inline constexpr const char* kFootprintOutOfMemory = "ran out of memory";
bool footprintProbeRanOutOfMemory(const std::string& failure);

// Why a step is not run: "predicted peak 31.2 GiB (activations 28.1 GiB at batch 512) > the
// device's memory (23.6 GiB)". Empty when it fits.
std::string footprintVerdict(const FootprintPrediction& prediction);

// Predicted against measured, part by part. Errors are (predicted - measured) / measured; nullopt
// when the run measured nothing to set against.
struct FootprintCheck {
    std::optional<double> peak_error;
    std::optional<double> activations_error;
    std::optional<double> step_error;
    int64_t measured_peak_bytes = 0;
    double measured_step_ms = 0.0;
};
// The run's optimizer step is its last epoch's samples/s over the samples one step takes (the
// prediction's batch x accumulate x ranks).
FootprintCheck checkFootprint(const FootprintPrediction& prediction, const MemoryBreakdown& measured,
                              const std::vector<EpochMetrics>& epochs);

// "+12.3%" / "-4.0%"; "—" for nullopt.
std::string footprintErrorText(const std::optional<double>& error);

// As JSON (a sweep's plan keeps each step's prediction; `tune --footprint --json` prints it).
std::string footprintJson(const FootprintPrediction& prediction);
// Throws std::invalid_argument on a malformed text.
FootprintPrediction footprintFromJson(const std::string& json);

}  // namespace hearth
