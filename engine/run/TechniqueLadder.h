#pragma once
// TechniqueLadder: the speed study as a list of runs, each adding one technique to the previous:
// 32-true baseline on one device -> mixed precision -> (text: + dynamic padding -> + length
// bucketing) -> + loader workers / pinned memory -> + accumulation -> + DDP on every GPU (when the
// machine has several and c10d is built in).
// Shared by `hearth-cli sweep --ladder` and the workbench's Ladder button.

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

struct LadderOptions {
    std::optional<int64_t> target_batch;   // adds an accumulation step reaching this effective batch
    int64_t loader_workers = 2;            // workers for the loader step
};

// Steps for `base` on a machine with `caps`. The mixed-precision step uses bf16 where the device
// does it well (CPU, Ampere+ GPUs) and fp16 with a GradScaler otherwise. Throws ConfigError when
// target_batch is not a multiple of the batch size.
std::vector<LadderStep> buildTechniqueLadder(const ExperimentConfig& base, const DeviceCapabilities& caps,
                                             const LadderOptions& options = {});

}  // namespace hearth
