#pragma once
// The comparison of runs (a technique ladder, any sweep, or runs picked by hand) as one
// self-contained HTML page: the speedup against a baseline run as bars (the seed study's
// figure, for the user's own model and hardware), a table of training time, speedup, accuracy,
// peak memory and data-wait share per run, the curves overlaid, the settings that differ, and
// each run's step-time and memory breakdown. Readable with 2 or 100 runs. No Qt.

#include "storage/RunStore.h"
#include "storage/report/LadderSummary.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hearth::report {

struct ComparedRun {
    RunSummary summary;
    std::map<std::string, std::string> effective;   // what ran
    std::vector<EpochMetrics> epochs;
    std::optional<MemoryBreakdown> memory;
    std::vector<StepMetrics> steps;                 // the steps the curves keep (all, unless decimated)
    int64_t stored_steps = 0;                       // the steps the store holds
    std::vector<std::string> unreadable;            // parts the store could not read, with why
};

struct ComparisonPage {
    std::string title;                  // "Sweep #3: fashion-cnn ladder", "3 runs compared"
    std::string sweep_kind;             // "ladder", "memory-ladder", ... when the runs are one sweep
    std::vector<ComparedRun> runs;      // in the order asked for (a sweep: the order they ran)
    int64_t baseline_id = 0;            // speedups are against this run
    int point_cap = 0;                  // the most points a run's curve keeps
    std::string generated_from;         // the database path
    // The runs are one speed ladder's: it judged over its repeats (ranges, verdicts, why-lines,
    // the recommendation).
    std::optional<LadderSummary> ladder;
    // The runs are one memory ladder's: its table of peaks (as `hearth-cli sweep --show` prints it).
    std::optional<MemoryLadderTable> memory_ladder;
};

// The most points a run's curves keep in a comparison page: 10,000 up to 40 runs, fewer beyond
// (4,000 at 100 runs, 400 at 1,000), so that the page stays a few megabytes.
int comparisonPointCap(int64_t run_count);

// The runs of sweep `sweep_id` in the order they ran; its name in `name`. Throws StoreError
// when no run belongs to it.
std::vector<int64_t> sweepRunIds(const RunStore& store, int64_t sweep_id, std::string* name = nullptr);

// Reads the runs (unknown ids throw StoreError naming them). `baseline`: a run among them (the
// first when not given). Curves longer than the cap keep each bucket's extremes per metric.
ComparisonPage loadComparisonPage(const RunStore& store, const std::vector<int64_t>& run_ids,
                                  std::optional<int64_t> baseline = std::nullopt);

// What the page lacks, per run, in the user's words.
std::vector<std::string> comparisonMissing(const ComparisonPage& page);

std::string comparisonPageHtml(const ComparisonPage& page);
std::string comparisonPageData(const ComparisonPage& page);   // the JSON its charts draw

}  // namespace hearth::report
