#pragma once
// Packing of logged training steps into the step_metrics blocks: a block is up to kRows
// consecutive steps of one run, each step the stored fields of fields::stepFields() as 8-byte
// little-endian values in table order. Reading a curve then costs one row per block instead of
// one per step (fast 1M-step curves).

#include "engine/events/Events.h"

#include <cstddef>
#include <string>
#include <vector>

namespace hearth::stepblock {

inline constexpr size_t kRows = 1024;

// The fields each step of a block written now carries (the stored rows of stepFields()).
size_t fieldCount();

std::string pack(const StepMetrics* steps, size_t count);
// `field_count` as stored: blocks written by a newer build may carry more fields (ignored);
// fields an older build did not write read as 0.
void unpackAppend(const void* data, size_t bytes, size_t field_count, std::vector<StepMetrics>& out);

}  // namespace hearth::stepblock
