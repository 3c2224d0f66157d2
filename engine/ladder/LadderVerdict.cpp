#include "engine/ladder/LadderVerdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hearth {

Spread spreadOf(std::vector<double> values) {
    Spread s;
    s.n = static_cast<int64_t>(values.size());
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    s.median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
    s.min = values.front();
    s.max = values.back();
    return s;
}

SpeedChange compareSpeeds(const Spread& step, const Spread& reference) {
    if (step.n == 0 || reference.n == 0 || reference.median <= 0.0) return SpeedChange::Unknown;
    if (step.n >= 2 && reference.n >= 2) {
        if (step.min <= reference.max && reference.min <= step.max) return SpeedChange::NoMeasurableChange;
        // Apart, but by less than either step's own spread: three runs each fall apart by chance
        // one time in ten, so the gap must also exceed the noise the runs showed.
        if (std::abs(step.median - reference.median) < std::max(step.max - step.min, reference.max - reference.min))
            return SpeedChange::NoMeasurableChange;
        return step.median > reference.median ? SpeedChange::Faster : SpeedChange::Slower;
    }
    const double ratio = step.median / reference.median;
    if (std::abs(ratio - 1.0) < kSingleRunNoise) return SpeedChange::NoMeasurableChange;
    return ratio > 1.0 ? SpeedChange::Faster : SpeedChange::Slower;
}

AccuracyChange compareAccuracies(const Spread& step, const Spread& reference) {
    if (step.n == 0 || reference.n == 0) return AccuracyChange::Unknown;
    if (step.n >= 2 && reference.n >= 2) {
        if (step.min <= reference.max && reference.min <= step.max) return AccuracyChange::Same;
        if (std::abs(step.median - reference.median) < std::max(step.max - step.min, reference.max - reference.min))
            return AccuracyChange::Same;
    } else if (std::abs(step.median - reference.median) < kSingleRunAccuracyNoise) {
        return AccuracyChange::Same;
    }
    return step.median > reference.median ? AccuracyChange::Higher : AccuracyChange::Lower;
}

std::string speedupText(SpeedChange change, double speedup) {
    if (change == SpeedChange::Unknown || speedup <= 0.0) return "-";
    char text[64];
    if (change == SpeedChange::NoMeasurableChange)
        std::snprintf(text, sizeof text, "no measurable change (%.2fx)", speedup);
    else
        std::snprintf(text, sizeof text, "%.2fx", speedup);
    return text;
}

std::string accuracyChangeName(AccuracyChange change) {
    switch (change) {
        case AccuracyChange::Higher: return "higher";
        case AccuracyChange::Lower: return "lower";
        case AccuracyChange::Same: return "same";
        case AccuracyChange::Unknown: break;
    }
    return "-";
}

LadderVerdict judgeLadder(const std::vector<StepRuns>& steps, const std::vector<std::string>& labels) {
    LadderVerdict out;
    if (steps.empty()) return out;
    const Spread base_speed = spreadOf(steps[0].speeds);
    const Spread base_accuracy = spreadOf(steps[0].accuracies);
    for (size_t i = 0; i < steps.size(); ++i) {
        StepVerdict v;
        v.speed = spreadOf(steps[i].speeds);
        v.accuracy = spreadOf(steps[i].accuracies);
        const size_t ref = std::min(steps[i].reference, steps.size() - 1);
        const Spread ref_speed = spreadOf(steps[ref].speeds);
        if (i > 0) {
            v.change = compareSpeeds(v.speed, ref_speed);
            v.change_vs_baseline = compareSpeeds(v.speed, base_speed);
            v.accuracy_change = compareAccuracies(v.accuracy, base_accuracy);
        }
        if (v.speed.n && ref_speed.n && ref_speed.median > 0) v.speedup = v.speed.median / ref_speed.median;
        if (v.speed.n && base_speed.n && base_speed.median > 0) v.speedup_vs_baseline = v.speed.median / base_speed.median;
        out.steps.push_back(v);
    }
    // Measurably faster than the baseline at an accuracy not measurably lower.
    const auto qualifies = [&](size_t i) {
        const StepVerdict& v = out.steps[i];
        return i > 0 && v.change_vs_baseline == SpeedChange::Faster && v.accuracy_change != AccuracyChange::Lower &&
               v.accuracy_change != AccuracyChange::Unknown;
    };
    for (size_t i = 1; i < out.steps.size(); ++i) {
        if (!qualifies(i)) continue;
        if (!out.recommended || out.steps[i].speedup_vs_baseline > out.steps[*out.recommended].speedup_vs_baseline)
            out.recommended = i;
    }
    // The simplest step as fast: a recommended step no measurably faster than the step it built on
    // gives way to that step when it qualifies too (it adds a technique that bought nothing).
    while (out.recommended && out.steps[*out.recommended].change == SpeedChange::NoMeasurableChange) {
        const size_t ref = std::min(steps[*out.recommended].reference, steps.size() - 1);
        if (ref == *out.recommended || !qualifies(ref)) break;
        out.recommended = ref;
    }
    const auto label = [&](size_t i) { return i < labels.size() ? labels[i] : "step " + std::to_string(i + 1); };
    char text[256];
    if (out.recommended) {
        const StepVerdict& v = out.steps[*out.recommended];
        std::snprintf(text, sizeof text, "Recommended: '%s', %.2fx the baseline's speed (%lld run%s each), test accuracy "
                                         "%.4f against %.4f (%s).",
                      label(*out.recommended).c_str(), v.speedup_vs_baseline, static_cast<long long>(v.speed.n),
                      v.speed.n == 1 ? "" : "s", v.accuracy.median, base_accuracy.median,
                      v.accuracy_change == AccuracyChange::Same ? "within the run-to-run spread" : "higher");
        out.recommendation = text;
    } else if (!base_speed.n) {
        // Nothing to measure against: "keep the baseline" would recommend a step that never ran.
        out.recommendation = "No step can be judged: '" + label(0) + "' has no completed run to measure against.";
    } else {
        out.recommendation = "Nothing ran measurably faster than the baseline at the same accuracy: keep '" + label(0) +
                             "'.";
    }
    return out;
}

}  // namespace hearth
