#pragma once
// LadderVerdict: what a ladder's repeated runs say, and no more. Each step's speed is the median
// of its runs with their min-max; a step whose range overlaps its reference's reads "no measurable
// change" rather than "1.03x", and so does one whose ranges are apart by less than either range's
// width (with three runs each, ranges fall apart by chance one time in ten); with one run each, a
// change inside the 5% a single run can be off by stands in for the range. An accuracy difference
// inside the run-to-run spread is neither a gain nor a loss. The recommendation is the fastest step measurably faster than the baseline
// whose accuracy is not measurably lower. Torch-free (hearth_engine_api): the CLI, the workbench
// and the reports judge a stored ladder with it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hearth {

struct Spread {
    double median = 0.0, min = 0.0, max = 0.0;
    int64_t n = 0;   // 0: no value
};
Spread spreadOf(std::vector<double> values);

enum class SpeedChange { Faster, Slower, NoMeasurableChange, Unknown };
enum class AccuracyChange { Higher, Lower, Same, Unknown };

// A step's completed runs: speeds (higher is faster, the same measure for every step of the
// ladder) and test accuracies, and the step it is compared with.
struct StepRuns {
    std::vector<double> speeds;
    std::vector<double> accuracies;
    size_t reference = 0;
};

struct StepVerdict {
    Spread speed, accuracy;
    double speedup = 0.0;               // median over its reference's median (0: unknown)
    double speedup_vs_baseline = 0.0;
    SpeedChange change = SpeedChange::Unknown;              // against its reference
    SpeedChange change_vs_baseline = SpeedChange::Unknown;
    AccuracyChange accuracy_change = AccuracyChange::Unknown;   // against the baseline
};

struct LadderVerdict {
    std::vector<StepVerdict> steps;
    std::optional<size_t> recommended;  // nullopt: nothing measurably faster at the same accuracy
    std::string recommendation;         // one sentence
};

// Against this relative change a single run cannot be told from noise (a shared machine's runs
// differ by about 5%); with repeats the ranges decide.
inline constexpr double kSingleRunNoise = 0.05;
// With one run each, accuracies closer than this (absolute) are the same.
inline constexpr double kSingleRunAccuracyNoise = 0.01;

SpeedChange compareSpeeds(const Spread& step, const Spread& reference);
AccuracyChange compareAccuracies(const Spread& step, const Spread& reference);

// `labels` name the steps in the recommendation sentence (labels[0] the baseline).
LadderVerdict judgeLadder(const std::vector<StepRuns>& steps, const std::vector<std::string>& labels);

// "1.21x", "0.80x", or "no measurable change" (with the ratio in brackets: "no measurable change
// (1.03x)"); "-" when unknown.
std::string speedupText(SpeedChange change, double speedup);
std::string accuracyChangeName(AccuracyChange change);   // "higher" | "lower" | "same" | "-"

}  // namespace hearth
