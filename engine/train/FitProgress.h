#pragma once
// FitProgress: a fit's progress as one value, owned by the Trainer's loop and saved whole by a
// TrainingState (so resuming is one assignment): where the loop stands (LoopState), the running
// totals of the epoch in progress (an interrupted epoch's EpochMetrics come out as if it had not
// been interrupted), the fit's totals over its completed epochs (its samples/s and the per-rank
// report continue), and the fit's elapsed time (the curves' time axis continues).

#include "engine/train/LoopState.h"
#include "engine/train/RunningMeter.h"

#include <cstdint>

namespace hearth {

// The epoch in progress, so far.
struct EpochProgress {
    MeterTotals totals;              // summed over ranks from the step-metric intervals (each ends in its epoch)
    int64_t local_samples = 0;       // this rank's
    double local_flops = 0.0;        // this rank's model FLOPs (ModelFlops.h; 0: the model has no count)
    int64_t skipped_steps = 0;       // optimizer steps the GradScaler skipped
    double wait_ms = 0.0;            // waiting for the loader
    double train_time_s = 0.0;       // training time (when saved: up to the save)

    bool operator==(const EpochProgress& o) const;
};

// The fit's totals over its completed epochs.
struct FitTotals {
    double train_s = 0.0;            // pure training time
    int64_t samples = 0;             // training samples, summed over ranks
    int64_t rank_samples = 0;        // this rank's
    double rank_flops = 0.0;         // this rank's model FLOPs
    double rank_train_s = 0.0;
    double rank_wait_s = 0.0;
    double best_val_accuracy = 0.0;

    // Adds a finished (or stopped) epoch's training.
    void add(const EpochProgress& epoch);
    bool operator==(const FitTotals& o) const;
};

struct FitProgress {
    LoopState loop;
    EpochProgress epoch;
    FitTotals fit;
    double elapsed_s = 0.0;          // the fit's time so far (when saved: up to the save)

    bool operator==(const FitProgress& o) const;
};

}  // namespace hearth
