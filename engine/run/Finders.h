#pragma once
// The batch-size and learning-rate finders (Lightning's BatchSizeFinder and LearningRateFinder):
// each builds its own model, data and strategy from an experiment config, runs real training
// steps, and reports what it measured. Torch-free, like RunController.h: the workbench and the
// CLI include it. The model the user then trains is never touched: a finder trains its own copy,
// restores its weights after every trial, and puts the process's random state back.

#include "engine/config/ByteSize.h"   // sizes in the finders' options and messages
#include "engine/config/ExperimentConfig.h"
#include "engine/events/Events.h"
#include "engine/run/Footprint.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hearth {

// A finder could not run: the config, the data or the training failed (CLI exit 2/3/4).
class FinderError : public std::runtime_error {
public:
    FinderError(FailureKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    FailureKind kind() const noexcept { return kind_; }

private:
    FailureKind kind_;
};

// How far a finder is: fraction in [0, 1] and what it is doing ("trial 4: batch 256").
using FinderProgress = std::function<void(double fraction, const std::string& what)>;

// ---- Batch size ---------------------------------------------------------------------------------

struct BatchSizeTrial {
    int64_t batch_size = 0;
    bool fits = false;
    int64_t peak_bytes = 0;  // CPU: the process's peak RSS; CUDA: the caching allocator's peak reserved
    double seconds = 0.0;
    std::string failure;     // why it did not fit: "out of memory: ...", "peak 2.31 GiB > limit 2.00 GiB"
};

struct BatchSizeFinderOptions {
    int64_t start_batch = 2;         // the first trial (Lightning's init_val)
    int64_t max_batch = 0;           // 0: only the training split bounds the search
    int64_t steps_per_trial = 3;     // forward + backward + optimizer step, each a full batch
    int64_t memory_limit_bytes = 0;  // required on CPU (peak RSS); optional on CUDA (else VRAM)
    int64_t max_trials = 25;
    // Where the bisection ends. Above this size it tries only multiples of it (tensor cores and
    // vectorised kernels work in multiples of 8) and ends once the gap between the largest fit and
    // the smallest failure is at most max(multiple_of, tolerance x the fit); below it, at a gap of 1.
    // multiple_of 1 and tolerance 0 bisect to the exact batch, as Lightning's binsearch does.
    int64_t multiple_of = 8;
    double tolerance = 0.05;
    std::function<void(const BatchSizeTrial&)> on_trial;  // each trial as it ends
    FinderProgress on_progress;
    std::function<void(const std::string&)> on_log;       // setup messages (text tokenising, ...)
    // Called before every step of a trial, with its batch size (tests throw out-of-memory here).
    std::function<void(int64_t batch_size)> before_step;
};

struct BatchSizeResult {
    int64_t batch_size = 0;     // the largest batch that fit (0: none did)
    int64_t first_failure = 0;  // the smallest batch that did not fit (0: none failed)
    std::vector<BatchSizeTrial> trials;  // in the order they ran
    std::string device;         // "cpu", "cuda:0"
    std::string limit;          // what a trial had to fit into
    int64_t baseline_bytes = 0; // CPU: the process's RSS before the first trial (data, model, runtime)
    std::string bound;          // why the search did not go higher, when not a failure
    std::string settling;       // where the bisection ended (settlingText of the options)
    bool stopped = false;
};

// How the bisection ends, in words: "bisecting to the exact batch", "bisecting in multiples of 8
// to within 5% (at least 8)".
std::string settlingText(const BatchSizeFinderOptions& options);

// Doubles the batch from start_batch until a trial fails, then bisects between the last fit and
// the first failure (Lightning's "power" then "binsearch") until the gap settles (multiple_of,
// tolerance), each trial at the config's precision
// and strategy. Out-of-memory in a trial is caught, everything freed, and the trial recorded as
// failing. Throws FinderError.
BatchSizeResult findBatchSize(const ExperimentConfig& config, const BatchSizeFinderOptions& options,
                              const std::atomic<bool>& stop);

// ---- Learning rate ------------------------------------------------------------------------------

struct LrPoint {
    double lr = 0.0;
    double loss = 0.0;           // the step's loss
    double smoothed_loss = 0.0;  // the moving average
};

struct LrFinderOptions {
    double min_lr = 1e-7;
    double max_lr = 1.0;
    int64_t steps = 100;               // optimizer steps, the LR growing exponentially over them
    double smoothing = 0.98;           // beta of the loss's exponential moving average (bias-corrected)
    double divergence = 4.0;           // stop once the smoothed loss passes this times the best
    int64_t skip_begin = 10, skip_end = 1;  // points the suggestion ignores at each end
    std::function<void(const LrPoint&)> on_point;   // each step's point as it is measured
    FinderProgress on_progress;
    std::function<void(const std::string&)> on_log;
};

struct LrFinderResult {
    std::vector<LrPoint> points;
    std::optional<size_t> suggestion_index;  // into points: steepest descent of the smoothed loss
    std::optional<double> suggestion;        // its learning rate
    bool diverged = false;                   // stopped early: loss past divergence x best, or not finite
    bool stopped = false;
};

// Lightning's LearningRateFinder (fastai's lr_find) on the config's model and training data.
// Throws FinderError.
LrFinderResult findLearningRate(const ExperimentConfig& config, const LrFinderOptions& options,
                                const std::atomic<bool>& stop);

// ---- Footprint (predict, then measure) ---------------------------------------------------------

struct FootprintOptions {
    int64_t steps_per_probe = 5;   // optimizer steps at each probed batch size; the first is warm-up
    int64_t capacity_bytes = 0;    // what the run must fit into; 0: the device's memory (CPU: the RAM)
    // The micro-batch sizes probed, one after the other in this process (empty: footprintProbeSizes).
    // A later probe runs in a heap the earlier ones shaped; `hearth-cli tune --footprint` probes each
    // size in a fresh process of its own.
    std::vector<int64_t> batch_sizes;
    FinderProgress on_progress;
    std::function<void(const std::string&)> on_log;
};

// Probes the config's model at two micro-batch sizes below its batch (footprintProbeSizes), a few
// real training steps each at the config's precision, strategy and accumulation, and predicts the
// run's peak memory by category and its step time at its own batch (extrapolateFootprint).
// Throws FinderError (a probe that runs out of memory is a Training failure: the run would too).
FootprintPrediction predictFootprint(const ExperimentConfig& config, const FootprintOptions& options,
                                     const std::atomic<bool>& stop);

// The index of the steepest descent: the most negative gradient of the smoothed loss against
// log10(lr) (central differences, as numpy.gradient), ignoring skip_begin points at the start and
// skip_end at the end and any non-finite loss. nullopt when fewer than two points remain.
std::optional<size_t> steepestDescent(const std::vector<LrPoint>& points, int64_t skip_begin, int64_t skip_end);

// About `rows` points spread evenly over the sweep (always the first, the last and the suggestion).
std::vector<size_t> summaryRows(const LrFinderResult& result, size_t rows = 15);

}  // namespace hearth
