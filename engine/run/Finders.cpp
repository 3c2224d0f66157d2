// The finders' entry points (config in, measurements out, errors as FinderError), the batch-size
// search over trials, and the steepest-descent suggestion.

#include "engine/run/Finders.h"

#include "engine/data/DataError.h"
#include "engine/dist/Rendezvous.h"
#include "engine/monitor/CudaMemory.h"
#include "engine/monitor/Elapsed.h"
#include "engine/run/FinderSteps.h"
#include "engine/run/RunController.h"
#include "engine/train/TrainingError.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace hearth {
namespace {

void releaseDeviceCache() {
#ifdef HEARTH_WITH_CUDA
    if (torch::cuda::is_available()) releaseCudaCache();
#endif
}

// Runs a finder with the process's random state saved, and every error as a FinderError of the
// kind the CLI maps to its exit codes.
template <typename Result, typename Body>
Result guarded(Body&& body) {
    try {
        Result result;
        {
            RandomStateGuard random_state;
            result = body();
        }
        releaseDeviceCache();
        return result;
    } catch (const ConfigError& e) {
        releaseDeviceCache();
        throw FinderError(FailureKind::Config, e.what());
    } catch (const dist::LaunchError& e) {
        releaseDeviceCache();
        throw FinderError(FailureKind::Config, e.what());
    } catch (const DataError& e) {
        releaseDeviceCache();
        throw FinderError(FailureKind::Data, e.what());
    } catch (const TrainingError& e) {
        releaseDeviceCache();
        throw FinderError(FailureKind::Training,
                          std::string(e.what()) + (e.suggestion().empty() ? "" : " (" + e.suggestion() + ")"));
    } catch (const c10::Error& e) {
        releaseDeviceCache();
        throw FinderError(FailureKind::Training, e.what_without_backtrace());
    } catch (const std::exception& e) {
        releaseDeviceCache();
        throw FinderError(FailureKind::Training, e.what());
    }
}

int64_t ceilLog2(int64_t n) {
    int64_t bits = 0;
    while ((int64_t{1} << bits) < n) ++bits;
    return bits;
}

}  // namespace

std::string settlingText(const BatchSizeFinderOptions& options) {
    const int64_t multiple = std::max<int64_t>(options.multiple_of, 1);
    const double percent = std::max(options.tolerance, 0.0) * 100.0;
    if (multiple == 1 && percent == 0.0) return "bisecting to the exact batch";
    char tolerance[32];
    std::snprintf(tolerance, sizeof tolerance, "%g%%", percent);
    const std::string steps = multiple > 1 ? "in multiples of " + std::to_string(multiple) + " " : "";
    if (percent == 0.0) return "bisecting " + steps + "to a gap of " + std::to_string(multiple);
    return "bisecting " + steps + "to within " + tolerance + " (at least " + std::to_string(multiple) + ")";
}

BatchSizeResult searchBatchSizes(int64_t start, int64_t cap, const std::string& bound_reason,
                                 const BatchSizeFinderOptions& options,
                                 const std::function<BatchSizeTrial(int64_t)>& trial, const std::atomic<bool>& stop) {
    BatchSizeResult result;
    result.settling = settlingText(options);
    int64_t low = 0, high = 0;  // the largest fit and the smallest failure so far (0: none yet)
    auto may_continue = [&] {
        if (stop.load()) {
            result.stopped = true;
            return false;
        }
        if (static_cast<int64_t>(result.trials.size()) >= options.max_trials) {
            result.bound = "the maximum number of trials (" + std::to_string(options.max_trials) + ")";
            return false;
        }
        return true;
    };
    const int64_t multiple = std::max<int64_t>(options.multiple_of, 1);
    // The gap at which the bisection between a fit `fit` and a failure ends (options.multiple_of).
    auto settled_gap = [&](int64_t fit) {
        if (fit < multiple) return int64_t{1};
        return std::max(multiple, static_cast<int64_t>(std::max(options.tolerance, 0.0) * static_cast<double>(fit)));
    };
    // Halvings left from a gap between `fit` and `failure` until it settles. The settled gap only
    // grows with the fit and the gap only shrinks, so this never rises as the search goes on.
    auto bisections_left = [&](int64_t fit, int64_t failure) {
        const int64_t settled = settled_gap(fit);
        return ceilLog2((failure - fit + settled - 1) / settled);
    };
    // The next size to try: halfway, moved to the nearest multiple when the gap holds one.
    auto halfway = [&] {
        const int64_t mid = low + (high - low) / 2;
        const int64_t first = (low / multiple + 1) * multiple, last = (high - 1) / multiple * multiple;
        return first <= last ? std::clamp((mid + multiple / 2) / multiple * multiple, first, last) : mid;
    };
    double shown = 0.0;  // the fraction last reported
    auto attempt = [&](int64_t b) {
        if (options.on_progress) {
            // Trials still to come, this one included, estimated so the fraction never falls: while
            // doubling, those left to the cap and the bisection a failure at the next doubling would
            // need; once bisecting, its halvings left; at most the trials the search may still run.
            // A failure just past the multiple can leave more halvings (gap 1 below it) than the
            // estimate held, so the fraction is also kept from falling.
            const int64_t done = static_cast<int64_t>(result.trials.size());
            int64_t left = high > 0 ? bisections_left(low, high)
                                    : ceilLog2((cap + b - 1) / b) + 1 + bisections_left(b, 2 * b);
            left = std::clamp<int64_t>(left, 1, std::max<int64_t>(options.max_trials - done, 1));
            shown = std::max(shown, static_cast<double>(done) / static_cast<double>(done + left));
            options.on_progress(shown, "trial " + std::to_string(result.trials.size() + 1) + ": batch " + std::to_string(b));
        }
        BatchSizeTrial t = trial(b);
        result.trials.push_back(t);
        if (options.on_trial) options.on_trial(t);
        if (t.fits) {
            low = std::max(low, b);
        } else {
            high = high > 0 ? std::min(high, b) : b;
        }
        return t.fits;
    };
    // Power scaling: double until a trial fails or the cap is reached.
    int64_t b = std::clamp<int64_t>(start, 1, std::max<int64_t>(cap, 1));
    while (may_continue()) {
        if (!attempt(b)) break;
        if (b >= cap) {
            result.bound = bound_reason;
            break;
        }
        b = std::min(b * 2, cap);
    }
    // Binary search between the last fit and the first failure, until the gap settles.
    while (high > 0 && high - low > settled_gap(low) && may_continue()) attempt(halfway());
    result.batch_size = low;
    result.first_failure = high;
    if (options.on_progress) options.on_progress(1.0, "done");
    return result;
}

BatchSizeResult findBatchSize(const ExperimentConfig& config, const BatchSizeFinderOptions& options,
                              const std::atomic<bool>& stop) {
    countTrainingJob();
    return guarded<BatchSizeResult>([&] {
        PreparedRun run = prepareRun(config, options.on_log);
        return searchBatchSize(run, options, stop);
    });
}

LrFinderResult findLearningRate(const ExperimentConfig& config, const LrFinderOptions& options,
                                const std::atomic<bool>& stop) {
    countTrainingJob();
    return guarded<LrFinderResult>([&] {
        PreparedRun run = prepareRun(config, options.on_log);
        return sweepLearningRate(run, options, stop);
    });
}

FootprintPrediction predictFootprint(const ExperimentConfig& config, const FootprintOptions& options,
                                     const std::atomic<bool>& stop) {
    countTrainingJob();
    return guarded<FootprintPrediction>([&] {
        const auto start = std::chrono::steady_clock::now();
        PreparedRun run = prepareRun(config, options.on_log);
        FootprintPrediction prediction = probeFootprint(run, options, stop);
        prediction.probe_s = secondsSince(start);
        return prediction;
    });
}

std::optional<size_t> steepestDescent(const std::vector<LrPoint>& points, int64_t skip_begin, int64_t skip_end) {
    std::vector<size_t> idx;
    const int64_t n = static_cast<int64_t>(points.size());
    for (int64_t i = std::max<int64_t>(skip_begin, 0); i < n - std::max<int64_t>(skip_end, 0); ++i) {
        const auto& p = points[static_cast<size_t>(i)];
        if (std::isfinite(p.smoothed_loss) && p.lr > 0.0) idx.push_back(static_cast<size_t>(i));
    }
    if (idx.size() < 2) return std::nullopt;
    auto x = [&](size_t k) { return std::log10(points[idx[k]].lr); };
    auto y = [&](size_t k) { return points[idx[k]].smoothed_loss; };
    // numpy.gradient with coordinates: one-sided at the ends, second-order central inside.
    auto gradient = [&](size_t k) {
        if (k == 0) return (y(1) - y(0)) / (x(1) - x(0));
        if (k + 1 == idx.size()) return (y(k) - y(k - 1)) / (x(k) - x(k - 1));
        const double hs = x(k) - x(k - 1), hd = x(k + 1) - x(k);
        return (hs * hs * y(k + 1) + (hd * hd - hs * hs) * y(k) - hd * hd * y(k - 1)) / (hs * hd * (hd + hs));
    };
    size_t best = 0;
    double best_gradient = gradient(0);
    for (size_t k = 1; k < idx.size(); ++k) {
        const double g = gradient(k);
        if (g < best_gradient) {
            best_gradient = g;
            best = k;
        }
    }
    return idx[best];
}

std::vector<size_t> summaryRows(const LrFinderResult& result, size_t rows) {
    const size_t n = result.points.size();
    std::vector<size_t> out;
    if (n == 0) return out;
    rows = std::max<size_t>(rows, 2);
    for (size_t r = 0; r < rows; ++r) out.push_back(std::min(n - 1, (r * (n - 1) + (rows - 1) / 2) / (rows - 1)));
    if (result.suggestion_index) out.push_back(*result.suggestion_index);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace hearth
