#pragma once
// LadderSummary: a stored speed ladder read back and judged: its steps (from the sweep's plan, or
// one per run for a ladder stored without one), every repeat's run, each step's speed and accuracy
// as median (min-max), the verdict against its reference step and the baseline
// (engine/ladder/LadderVerdict), one or two "why" sentences (engine/ladder/LadderWhy) and the
// recommendation. `hearth-cli sweep` prints it; Compare and the reports read the same summary.

#include "engine/ladder/LadderVerdict.h"
#include "engine/run/Footprint.h"
#include "storage/RunStore.h"

#include <optional>
#include <string>
#include <vector>

namespace hearth {

struct LadderStepSummary {
    std::string label, short_name, change;
    bool kept = true;               // false: left out of the steps after it (measured slower in round 1)
    bool alone = false;             // tried alone on the baseline
    size_t reference = 0;           // the step it is judged against
    std::vector<int64_t> run_ids;   // every repeat's run, in the order they ran
    int64_t completed = 0;          // of those, completed
    int64_t reached = 0;            // accuracy goal: of those, the ones that reached the target
    std::string config_json;        // the step's config (its first run's)
    std::vector<double> speeds, accuracies;   // the completed runs'
    Spread fit_s;                   // whole-fit seconds (warm-up and validation included)
    Spread peak_bytes, data_wait_share;
    StepVerdict verdict;
    std::vector<std::string> why;
    // Predict, then measure: the step's footprint predicted before its first run, and that
    // prediction against the first completed run's memory breakdown and step time.
    std::optional<FootprintPrediction> prediction;
    std::optional<FootprintCheck> check;
    std::string not_run;            // why the step was not run (predicted not to fit); empty: it ran
};

struct LadderSummary {
    int64_t sweep_id = 0;
    std::string name, kind;
    std::string order = "cumulative";
    int64_t repeats = 1;
    // true: speeds are the last epoch's training samples/s (every run had 2+ epochs, the first
    // carrying the warm-up); false: 1 / the whole fit's seconds.
    bool steady = false;
    // "accuracy": a speed is 1 / the seconds until the validation accuracy first reached
    // `accuracy_target` (the baseline's best); runs that never did have no speed.
    std::string goal = "epochs";
    std::optional<double> accuracy_target;
    std::vector<LadderStepSummary> steps;
    std::optional<size_t> recommended;
    std::string recommendation;
};

// Throws StoreError when there is no such sweep.
LadderSummary summarizeLadder(const RunStore& store, int64_t sweep_id);

// The memory ladder's table (`hearth-cli sweep --ladder=memory`, Compare's Ladder tab): per step,
// its first run's peak (the largest process's under several) and the change against the step
// before, rank 0's activations and gradients, and the training time against the baseline's.
struct MemoryLadderRow {
    std::string label;
    int64_t run_id = 0;                          // 0: the step has no run
    int64_t peak_bytes = 0;                      // 0: not measured
    std::optional<double> peak_change;           // against the step before: -0.035 is 3.5% less
    std::optional<int64_t> activations_bytes, gradients_bytes;   // rank 0's breakdown
    double train_time_s = 0.0;
    std::optional<double> time_vs_baseline;      // 1.41: 1.41x the baseline's training time
    std::optional<double> test_accuracy;         // completed runs
    // The step's prediction against that run, as ladderPeakPredictionCell and
    // ladderStepPredictionCell write it.
    std::string predicted_peak, predicted_step;
};
struct MemoryLadderTable {
    std::vector<MemoryLadderRow> rows;
    bool gpu = false;   // the peaks are the caching allocator's; else the process's peak RSS
};
MemoryLadderTable memoryLadderTable(const RunStore& store, const LadderSummary& summary);
// A row's cells as the CLI, Compare's panel and the HTML report write them ("-" where unknown):
// "320.9 MiB", "-3.5%", "48.3 MiB", "377.2 KiB", "9.8 s", "0.99" + `times`, "0.8351".
struct MemoryLadderCells {
    std::string peak, change, activations, gradients, train_time, time, test_accuracy;
};
MemoryLadderCells memoryLadderCells(const MemoryLadderRow& row, const std::string& times = "×");
// What the table's numbers are, in one sentence ("Peak: …"), written under each of them.
std::string memoryLadderNote(const MemoryLadderTable& table);

// The sweep every one of `runs` belongs to; nullopt when one has none or they differ (or no runs).
std::optional<int64_t> commonSweep(const std::vector<const RunSummary*>& runs);
// The summaries of loaded runs (anything with a `summary`: Compare's runs, the reports' runs), as
// commonSweep and ladderOfRuns take them.
template <class Runs>
std::vector<const RunSummary*> summariesOf(const Runs& runs) {
    std::vector<const RunSummary*> out;
    out.reserve(runs.size());
    for (const auto& run : runs) out.push_back(&run.summary);
    return out;
}

// The ladder a set of compared runs makes up, the one rule Compare, `hearth-cli compare` and the
// HTML comparison page follow: when every run is of one speed ladder, that ladder judged over all
// its repeats; of one memory ladder, its table too. nullopt when the runs are not one ladder's
// (runs picked by hand, a grid sweep, runs of two ladders). Throws StoreError when the ladder's
// plan cannot be read.
struct LadderOfRuns {
    LadderSummary summary;
    std::optional<MemoryLadderTable> memory;   // a memory ladder's table of peaks
};
std::optional<LadderOfRuns> ladderOfRuns(const RunStore& store, const std::vector<const RunSummary*>& runs);

// The cells the CLI's table and the workbench's ladder panel show: a speed as "1,611
// (1,555-1,651)" (steady samples/s) or as the whole fit's time "12.5 s (11.9 s-13.0 s)", an
// accuracy as "0.8257 (0.8037-0.8275)"; one run: the value alone; none: "-".
std::string ladderSpeedCell(const Spread& speed, bool steady);
std::string ladderAccuracyCell(const Spread& accuracy);
// The prediction's cells: "331.7 MiB / 333.5 MiB (-0.5%)" (predicted / measured (error)), the
// predicted value alone before a run measured it, "-" without a prediction.
std::string ladderPeakPredictionCell(const LadderStepSummary& step);
std::string ladderStepPredictionCell(const LadderStepSummary& step);

}  // namespace hearth
