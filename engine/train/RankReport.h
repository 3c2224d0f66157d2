#pragma once
// What each rank of a data-parallel run tells rank 0 when fit ends, so that the run's record
// covers every process: its timings and peak memory (one RankSummary per rank) and the device
// samples its monitor took (rank 0 emits its own live; the others' arrive here). A collective:
// every rank calls reportRanks at the same point. Nothing happens in a world of one.

#include "engine/events/Events.h"
#include "engine/monitor/DeviceMonitor.h"
#include "engine/strategy/Strategy.h"

#include <cstdint>

namespace hearth {

struct RankTotals {
    int64_t samples = 0;          // training samples this rank processed
    double train_time_s = 0.0;    // its training passes (validation excluded)
    double data_wait_s = 0.0;
    int64_t peak_memory_bytes = 0;
    int64_t steps = 0;            // optimizer steps
    int64_t gradients_bytes = -1;        // its memory breakdown's (-1: not measured)
    int64_t optimizer_state_bytes = -1;
};

// Returns the run's peak memory: on rank 0 of a data-parallel run the largest process's (what
// has to fit: zero1's ranks hold unequal shares), elsewhere `local.peak_memory_bytes`.
int64_t reportRanks(const Strategy& strategy, const DeviceMonitor& monitor, const RankTotals& local, EventSink& sink);

// While training, at every logged step (a collective too): each rank's samples/s over the last
// interval and its latest device samples reach rank 0, which emits them (RankSummary with
// final = false, DeviceSample of the other ranks) so the live view shows every rank as it runs.
void shareLiveRanks(const Strategy& strategy, const DeviceMonitor& monitor, double samples_per_sec, EventSink& sink);

}  // namespace hearth
