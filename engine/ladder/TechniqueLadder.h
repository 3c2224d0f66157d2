#pragma once
// TechniqueLadder: the speed study as a list of runs, each adding one technique to the previous:
// 32-true baseline on one device -> (GPU: + TF32) -> mixed precision -> (GPU: + fused optimizer,
// + cuDNN benchmark, + channels_last) -> (text: + dynamic padding -> + length bucketing) -> +
// loader workers / pinned memory -> (GPU: + data on device, + CUDA graph) -> + accumulation -> +
// DDP on every GPU (when the machine has several and c10d is built in).
// A speed rung that measures slower than the step before it is left out of the steps after it
// (settleLadderStep): the ladder climbs on what helps, and still shows what did not.
// The memory ladder turns the memory toggles on one at a time instead: gradients zeroed in place
// -> + set to none -> (cnn, mlp, resnets: + in-place activations) -> (several processes: + zero1
// -> + zero2 -> + zero3, from the experiment's strategy on) -> + activation checkpointing, the
// experiment otherwise as given, so each step's peak memory shows what its toggle saves.
// Shared by `hearth-cli sweep --ladder[=memory]` and the workbench's ladder actions.

#include "engine/config/ExperimentConfig.h"
#include "engine/events/Events.h"
#include "engine/run/Footprint.h"

#include <optional>
#include <string>
#include <vector>

namespace hearth {

struct LadderStep {
    std::string label;         // "baseline", "+ bf16-mixed", ...
    std::string change;        // what this step changes, in words
    ExperimentConfig config;
    std::string short_name;    // "bf16-mixed": the part of the run names ("<experiment> · tf32 + bf16-mixed")
    // A speed technique that may be left out of the later steps when it measured slower. The
    // baseline, accumulation and DDP change what a step is (the batch it sees), and always stay.
    bool optional = false;
    bool kept = true;          // false once settleLadderStep found it slower than the step it built on
    bool alone = false;        // tried alone on the baseline (LadderOrder::Alone): the baseline is its reference
    // Its peak memory and step time, predicted by a short probe before its first run.
    std::optional<FootprintPrediction> prediction{};
    // Why it was not run ("predicted peak ... > the memory of cuda:0 (...)"); empty: it ran.
    std::string not_run{};
};

// How fast a finished step trained: its whole fit (validation included), and with two or more
// epochs its last epoch's training samples/s, the steady speed (the first epoch carries the
// warm-up: cuDNN's autotuning, the graph capture, workers starting).
struct LadderMeasure {
    double fit_s = 0.0;
    double steady_samples_per_sec = 0.0;   // 0: a one-epoch run
};
LadderMeasure ladderMeasureOf(double fit_s, const std::vector<EpochMetrics>& epochs);

// A rung counts as slower when it is below this speed-up against the step it built on: a single
// run's noise on a shared GPU is several percent, so a rung within it stays.
inline constexpr double kLadderSlowerBelow = 0.95;

// Whether `step` trained slower than `reference`: with steady speeds, slower once warmed up, or no
// faster once warmed up (within 1/0.95) while its whole fit was slower (a warm-up cost such as
// cuDNN's autotuning, with nothing to show for it); without them, a slower whole fit. A rung
// measurably faster once warmed up stays even when its warm-up made this short fit slower.
bool ladderRungSlower(const LadderMeasure& step, const LadderMeasure& reference);
// The two speed-ups that decided it: "steady 1.02x, whole fit 0.43x" ("whole fit 0.90x" alone
// without steady speeds).
std::string ladderSpeedupText(const LadderMeasure& step, const LadderMeasure& reference);

// The step a later step built on when step k ran: the last kept step before k (the baseline for a
// step tried alone).
size_t ladderReferenceStep(const std::vector<LadderStep>& steps, size_t k);

// After step k has run (`measures` holds steps 0..k): an optional rung slower than its reference
// step (ladderRungSlower) is marked not kept, and every later step is rewritten to leave its change out (each key it
// changed goes back to the reference step's value unless a later rung sets that key itself; run
// names lose its short name). Returns the step's `kept`.
bool settleLadderStep(std::vector<LadderStep>& steps, size_t k, const std::vector<LadderMeasure>& measures);
// Marks step k not kept and rewrites every later step to leave its change out, as above (a rung
// that did not help, or that was not run because it was predicted not to fit).
void leaveOutLadderStep(std::vector<LadderStep>& steps, size_t k);

enum class LadderKind { Speed, Memory };

// Predict, then measure: step k's footprint probe has ended, with a `prediction` or without one
// (`failure`: its last error line). The prediction is kept in the step. A step predicted not to fit,
// or whose probe itself ran out of memory, is not run (`not_run` says why): a speed rung is left out
// of the steps after it (leaveOutLadderStep), a memory step's toggles stay (the next may fit), and a
// speed ladder whose baseline does not fit has nothing to measure against (Refused). A probe that
// failed otherwise leaves the step to run and report its own error.
enum class LadderProbeOutcome { Run, NotRun, Refused };
LadderProbeOutcome settleLadderPrediction(std::vector<LadderStep>& steps, size_t k, LadderKind kind,
                                          const std::optional<FootprintPrediction>& prediction,
                                          const std::string& failure);

struct LadderOptions {
    LadderKind kind = LadderKind::Speed;
    std::optional<int64_t> target_batch;   // speed: adds an accumulation step reaching this effective batch
    int64_t loader_workers = 2;            // speed: workers for the loader step
};
// Planning a speed ladder (which rungs, alone or stacked, repeats): engine/ladder/LadderPlan.h.
// buildTechniqueLadder's speed ladder is that plan's default: every speed rung that applies, stacked.

// "speed" / "memory" (the CLI's --ladder values); nullopt for anything else.
std::optional<LadderKind> ladderKindFromName(const std::string& name);
std::string ladderKindName(LadderKind kind);

// Steps for `base` on a machine with `caps`. Speed: the mixed-precision step uses bf16 where the
// device does it well (CPU, Ampere+ GPUs) and fp16 with a GradScaler otherwise. Throws ConfigError
// when target_batch is not a multiple of the batch size. Memory: the gradients step is left out
// under ddp and zero1 (their gradients are always zeroed in place), the in-place step for
// transformers.
std::vector<LadderStep> buildTechniqueLadder(const ExperimentConfig& base, const DeviceCapabilities& caps,
                                             const LadderOptions& options = {});

}  // namespace hearth
