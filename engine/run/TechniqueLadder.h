#pragma once
// TechniqueLadder: the speed study as a list of runs, each adding one technique to the previous:
// 32-true baseline on one device -> mixed precision -> (text: + dynamic padding -> + length
// bucketing) -> + loader workers / pinned memory -> + accumulation -> + DDP on every GPU (when the
// machine has several and c10d is built in).
// The memory ladder turns the memory toggles on one at a time instead: gradients zeroed in place
// -> + set to none -> (cnn, mlp: + in-place activations) -> + activation checkpointing, the
// experiment otherwise as given, so each step's peak memory shows what its toggle saves.
// Shared by `hearth-cli sweep --ladder[=memory]` and the workbench's ladder actions.

#include "engine/config/ExperimentConfig.h"

#include <optional>
#include <string>
#include <vector>

namespace hearth {

struct LadderStep {
    std::string label;         // "baseline", "+ bf16-mixed", ...
    std::string change;        // what this step changes, in words
    ExperimentConfig config;
};

enum class LadderKind { Speed, Memory };

struct LadderOptions {
    LadderKind kind = LadderKind::Speed;
    std::optional<int64_t> target_batch;   // speed: adds an accumulation step reaching this effective batch
    int64_t loader_workers = 2;            // speed: workers for the loader step
};

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
