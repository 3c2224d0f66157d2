#pragma once
// Packing of logged training steps into the step_metrics blocks: a block is up to kRows
// consecutive steps of one run, each step kFields 8-byte little-endian values in a fixed order.
// Reading a curve then costs one row per block instead of one per step (fast 1M-step curves).

#include "engine/events/Events.h"

#include <cstddef>
#include <string>
#include <vector>

namespace hearth::stepblock {

inline constexpr size_t kRows = 1024;
// epoch, batch, batches_per_epoch, global_step (int64); loss, accuracy, lr, loss_scale,
// samples_per_sec, step_time_ms, data_wait_ms, elapsed_s, eta_s (double).
inline constexpr size_t kFields = 13;

std::string pack(const StepMetrics* steps, size_t count);
// `field_count` as stored: blocks written by a newer build may carry more fields (ignored);
// missing trailing fields read as 0.
void unpackAppend(const void* data, size_t bytes, size_t field_count, std::vector<StepMetrics>& out);

}  // namespace hearth::stepblock
