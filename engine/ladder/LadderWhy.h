#pragma once
// LadderWhy: one or two sentences on why a ladder's rung measured what it did, drawn from what
// its runs recorded against its reference step's: the step-time breakdown of the steady epoch,
// the runs' peak memory, the device's utilisation. The rules live in one table
// (whyRules), tried in order; the first two that hold speak. Torch-free (hearth_engine_api).

#include "engine/events/Events.h"
#include "engine/ladder/LadderVerdict.h"

#include <string>
#include <vector>

namespace hearth {

struct WhyEvidence {
    std::string rung;                    // the step's short name: "bf16-mixed", "workers", "ddp", ...
    SpeedChange change = SpeedChange::Unknown;   // against its reference step
    StepBreakdown step, reference;       // per micro-batch, the steady epoch's (profiled 0: none)
    // The runs' peak memory: a data-parallel run's is its largest process's (0: unknown).
    int64_t peak_bytes = 0, reference_peak_bytes = 0;
    double gpu_busy = -1.0;              // the step's mean GPU utilisation 0..1 (-1: unknown)
    int64_t device_total_bytes = 0;      // the device's memory (GPU) or the machine's RAM; 0: unknown
};

struct WhyRule {
    const char* name;
    bool (*holds)(const WhyEvidence&);
    std::string (*say)(const WhyEvidence&);
};
const std::vector<WhyRule>& whyRules();

// At most two sentences, the first rules that hold; empty when none does.
std::vector<std::string> whyLines(const WhyEvidence& evidence);

}  // namespace hearth
