#include "storage/report/LadderSummary.h"

#include "engine/config/ByteSize.h"
#include "engine/ladder/LadderPlan.h"
#include "engine/ladder/LadderWhy.h"
#include "storage/report/RunReport.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace hearth {
namespace {

// What the summary reads of one run.
struct RunRead {
    int64_t id = 0;
    bool completed = false;
    std::optional<RunSummary> summary;
    std::vector<EpochMetrics> epochs;
    double steady = 0.0;   // the last epoch's training samples/s with 2+ epochs; 0 otherwise
};

RunRead readRun(const RunStore& store, int64_t id) {
    RunRead r;
    r.id = id;
    r.summary = store.run(id);
    r.completed = r.summary && r.summary->status == "completed";
    if (!r.completed) return r;
    r.epochs = store.epochs(id);
    if (r.epochs.size() >= 2) r.steady = r.epochs.back().samples_per_sec;
    return r;
}

// The label a run of a ladder stored without a plan goes by: its name's part after " · ".
std::string labelFromName(const std::string& name) {
    const std::string dot = " · ";
    const size_t at = name.rfind(dot);
    return at == std::string::npos ? name : name.substr(at + dot.size());
}

struct Evidence {
    StepBreakdown breakdown;
    MemoryBreakdown memory;
    int64_t peak_bytes = 0;   // the run's: a data-parallel run's largest process's
    double gpu_busy = -1.0;
    int64_t device_total = 0;
};

Evidence evidenceOf(const RunStore& store, const RunRead& run) {
    Evidence e;
    if (!run.epochs.empty()) e.breakdown = run.epochs.back().breakdown;
    if (auto m = store.memoryBreakdown(run.id)) e.memory = *m;
    if (!e.memory.device.empty() && run.summary) e.peak_bytes = run.summary->peak_memory_bytes.value_or(0);
    double busy = 0.0;
    int64_t samples = 0;
    for (const auto& s : store.deviceSamples(run.id)) {
        if (s.rank != 0) continue;
        const bool gpu = e.memory.device.rfind("cuda", 0) == 0;
        if (gpu != (s.device >= 0)) continue;
        e.device_total = std::max(e.device_total, s.total_bytes);
        if (gpu && s.utilization >= 0.0) {
            busy += s.utilization;
            ++samples;
        }
    }
    if (samples > 0) e.gpu_busy = busy / static_cast<double>(samples);
    return e;
}

}  // namespace

LadderSummary summarizeLadder(const RunStore& store, int64_t sweep_id) {
    const auto record = store.sweep(sweep_id);
    if (!record) throw StoreError("No sweep #" + std::to_string(sweep_id) + " in '" + store.path() + "'.");
    LadderSummary out;
    out.sweep_id = sweep_id;
    out.name = record->name;
    out.kind = record->kind;

    // The steps: the plan's, each with its runs; without a plan, one step per run, in order.
    std::vector<LadderStep> plan_steps;
    std::vector<std::vector<int64_t>> step_runs;
    if (!record->plan_json.empty()) {
        StoredLadderPlan plan;
        try {
            plan = ladderPlanFromJson(record->plan_json);
        } catch (const std::invalid_argument& e) {
            throw StoreError("Sweep #" + std::to_string(sweep_id) + "'s plan cannot be read: " + e.what());
        }
        out.order = ladderOrderName(plan.plan.order);
        out.repeats = plan.plan.repeats;
        out.goal = ladderGoalName(plan.plan.goal);
        if (plan.plan.goal == LadderGoal::Accuracy) out.accuracy_target = plan.plan.accuracy_target;
        plan_steps = plan.steps;
        step_runs.resize(plan_steps.size());
        for (const auto& r : record->runs)
            if (r.step >= 0 && static_cast<size_t>(r.step) < step_runs.size()) step_runs[r.step].push_back(r.run_id);
    } else {
        for (const auto& r : record->runs) {
            LadderStep step;
            const auto summary = store.run(r.run_id);
            step.label = summary ? labelFromName(summary->name) : "run #" + std::to_string(r.run_id);
            step.short_name = step.label;
            plan_steps.push_back(step);
            step_runs.push_back({r.run_id});
        }
    }

    std::vector<std::vector<RunRead>> reads(plan_steps.size());
    bool steady = true;
    int64_t completed_runs = 0;
    for (size_t i = 0; i < plan_steps.size(); ++i) {
        for (int64_t id : step_runs[i]) {
            reads[i].push_back(readRun(store, id));
            const RunRead& r = reads[i].back();
            if (!r.completed) continue;
            ++completed_runs;
            if (r.steady <= 0.0) steady = false;
        }
    }
    out.steady = steady && completed_runs > 0 && out.goal == "epochs";
    // The speed of a completed run: steady samples/s, 1 / the fit's seconds, or (accuracy goal)
    // 1 / the seconds to the target; nullopt: a run that never reached the target.
    const auto speedOf = [&](const RunRead& r) -> std::optional<double> {
        if (out.goal == "accuracy") {
            if (!out.accuracy_target) return std::nullopt;
            const auto t = timeToAccuracy(r.epochs, *out.accuracy_target);
            return t && *t > 0.0 ? std::optional<double>(1.0 / *t) : std::nullopt;
        }
        const double fit = r.summary->train_time_s.value_or(0.0);
        return out.steady ? r.steady : (fit > 0.0 ? 1.0 / fit : 0.0);
    };

    std::vector<StepRuns> judged(plan_steps.size());
    std::vector<std::string> labels;
    for (size_t i = 0; i < plan_steps.size(); ++i) {
        LadderStepSummary s;
        const LadderStep& p = plan_steps[i];
        s.label = p.label;
        s.short_name = p.short_name;
        s.change = p.change;
        s.kept = p.kept;
        s.alone = p.alone;
        s.reference = record->plan_json.empty() ? (i == 0 ? 0 : i - 1) : ladderReferenceStep(plan_steps, i);
        s.run_ids = step_runs[i];
        s.prediction = p.prediction;
        s.not_run = p.not_run;
        if (s.prediction) {
            // Against the first completed run: the one the prediction was made for (round 1).
            for (const RunRead& r : reads[i]) {
                if (!r.completed) continue;
                s.check = checkFootprint(*s.prediction, store.memoryBreakdown(r.id).value_or(MemoryBreakdown{}), r.epochs);
                break;
            }
        }
        std::vector<double> fits, peaks, waits;
        for (const RunRead& r : reads[i]) {
            if (s.config_json.empty() && r.summary) s.config_json = r.summary->config_json;
            if (!r.completed) continue;
            ++s.completed;
            const double fit = r.summary->train_time_s.value_or(0.0);
            if (const auto speed = speedOf(r)) {
                s.speeds.push_back(*speed);
                ++s.reached;
            }
            s.accuracies.push_back(r.summary->test_accuracy.value_or(0.0));
            fits.push_back(fit);
            peaks.push_back(static_cast<double>(r.summary->peak_memory_bytes.value_or(0)));
            double wait = 0.0;
            for (const auto& e : r.epochs) wait += e.data_wait_share;
            waits.push_back(r.epochs.empty() ? 0.0 : wait / static_cast<double>(r.epochs.size()));
        }
        s.fit_s = spreadOf(fits);
        s.peak_bytes = spreadOf(peaks);
        s.data_wait_share = spreadOf(waits);
        judged[i] = {s.speeds, s.accuracies, s.reference};
        labels.push_back(s.label);
        out.steps.push_back(std::move(s));
    }
    const LadderVerdict verdict = judgeLadder(judged, labels);
    out.recommended = verdict.recommended;
    out.recommendation = verdict.recommendation;

    // Why: each step's run nearest its median speed against its reference's.
    const auto representative = [&](size_t i) -> const RunRead* {
        const RunRead* best = nullptr;
        double best_gap = 0.0;
        const double median = verdict.steps[i].speed.median;
        for (const RunRead& r : reads[i]) {
            if (!r.completed) continue;
            const auto speed = speedOf(r);
            if (!speed) continue;
            const double gap = std::abs(*speed - median);
            if (!best || gap < best_gap) {
                best = &r;
                best_gap = gap;
            }
        }
        return best;
    };
    for (size_t i = 0; i < out.steps.size(); ++i) {
        LadderStepSummary& s = out.steps[i];
        s.verdict = verdict.steps[i];
        if (i == 0) continue;
        const RunRead* run = representative(i);
        const RunRead* ref = representative(s.reference);
        if (!run || !ref) continue;
        const Evidence e = evidenceOf(store, *run), r = evidenceOf(store, *ref);
        WhyEvidence why;
        why.rung = s.short_name;
        why.change = s.verdict.change;
        why.step = e.breakdown;
        why.reference = r.breakdown;
        why.peak_bytes = e.peak_bytes;
        why.reference_peak_bytes = r.peak_bytes;
        why.gpu_busy = e.gpu_busy;
        why.device_total_bytes = std::max(e.device_total, r.device_total);
        s.why = whyLines(why);
    }
    return out;
}

namespace {

std::string number(double v, const char* pattern) {
    char text[64];
    std::snprintf(text, sizeof text, pattern, v);
    return text;
}

// "4,012": thousands separated (speeds of thousands of samples per second).
std::string grouped(double v) {
    std::string digits = number(v, "%.0f");
    for (int i = static_cast<int>(digits.size()) - 3; i > 0 && std::isdigit(static_cast<unsigned char>(digits[i - 1])); i -= 3)
        digits.insert(static_cast<size_t>(i), ",");
    return digits;
}

}  // namespace

std::string ladderSpeedCell(const Spread& s, bool steady) {
    if (s.n == 0) return "-";
    const auto one = [steady](double v) { return steady ? grouped(v) : report::formatDuration(v > 0.0 ? 1.0 / v : 0.0); };
    if (s.n == 1) return one(s.median);
    // As a fit time the fastest run has the shortest time: the range reads from min time to max.
    return one(s.median) + " (" + one(steady ? s.min : s.max) + "-" + one(steady ? s.max : s.min) + ")";
}

std::string ladderPeakPredictionCell(const LadderStepSummary& step) {
    if (!step.prediction) return "-";
    std::string predicted = formatBytes(step.prediction->memory.peak_bytes);
    if (!step.check || step.check->measured_peak_bytes <= 0) return predicted;
    return predicted + " / " + formatBytes(step.check->measured_peak_bytes) + " (" +
           footprintErrorText(step.check->peak_error) + ")";
}

std::string ladderStepPredictionCell(const LadderStepSummary& step) {
    if (!step.prediction || step.prediction->step_ms <= 0.0) return "-";
    std::string predicted = number(step.prediction->step_ms, "%.1f ms");
    if (!step.check || step.check->measured_step_ms <= 0.0) return predicted;
    return predicted + " / " + number(step.check->measured_step_ms, "%.1f ms") + " (" +
           footprintErrorText(step.check->step_error) + ")";
}

MemoryLadderTable memoryLadderTable(const RunStore& store, const LadderSummary& summary) {
    MemoryLadderTable table;
    int64_t previous_peak = 0;
    double base_time = 0.0;
    for (size_t i = 0; i < summary.steps.size(); ++i) {
        const auto& step = summary.steps[i];
        MemoryLadderRow row;
        row.label = step.label;
        row.run_id = step.run_ids.empty() ? 0 : step.run_ids.front();
        const auto run = row.run_id ? store.run(row.run_id) : std::nullopt;
        const auto breakdown = row.run_id ? store.memoryBreakdown(row.run_id) : std::nullopt;
        if (breakdown && !breakdown->device.empty()) {
            table.gpu = table.gpu || breakdown->device.rfind("cuda", 0) == 0;
            row.activations_bytes = breakdown->activations_bytes;
            row.gradients_bytes = breakdown->gradients_bytes;
        }
        // Under several processes the largest one's peak (the breakdown is rank 0's).
        row.peak_bytes = run && run->peak_memory_bytes.value_or(0) > 0 ? *run->peak_memory_bytes
                         : breakdown                                    ? breakdown->peak_bytes
                                                                        : 0;
        if (i > 0 && previous_peak > 0 && row.peak_bytes > 0)
            row.peak_change = static_cast<double>(row.peak_bytes - previous_peak) / static_cast<double>(previous_peak);
        row.train_time_s = run ? run->train_time_s.value_or(0.0) : 0.0;
        if (i == 0) base_time = row.train_time_s;
        if (row.train_time_s > 0.0 && base_time > 0.0) row.time_vs_baseline = row.train_time_s / base_time;
        if (run && run->status == "completed") row.test_accuracy = run->test_accuracy;
        row.predicted_peak = ladderPeakPredictionCell(step);
        row.predicted_step = ladderStepPredictionCell(step);
        previous_peak = row.peak_bytes;
        table.rows.push_back(std::move(row));
    }
    return table;
}

MemoryLadderCells memoryLadderCells(const MemoryLadderRow& row, const std::string& times) {
    const auto bytes = [](const std::optional<int64_t>& b) { return b ? formatBytes(*b) : std::string("-"); };
    MemoryLadderCells c;
    c.peak = row.peak_bytes > 0 ? formatBytes(row.peak_bytes) : "-";
    c.change = row.peak_change ? number(100.0 * *row.peak_change, "%+.1f%%") : "-";
    c.activations = bytes(row.activations_bytes);
    c.gradients = bytes(row.gradients_bytes);
    c.train_time = row.train_time_s > 0.0 ? report::formatDuration(row.train_time_s) : "-";
    c.time = row.time_vs_baseline ? number(*row.time_vs_baseline, "%.2f") + times : "-";
    c.test_accuracy = row.test_accuracy ? number(*row.test_accuracy, "%.4f") : "-";
    return c;
}

std::string memoryLadderNote(const MemoryLadderTable& table) {
    return std::string("Peak: ") +
           (table.gpu ? "the caching allocator's peak allocated bytes during fit" : "the process's peak RSS during fit") +
           ", the largest process's under several; activations and gradients: rank 0's; time: training time "
           "relative to the baseline";
}

std::string ladderAccuracyCell(const Spread& s) {
    if (s.n == 0) return "-";
    if (s.n == 1) return number(s.median, "%.4f");
    return number(s.median, "%.4f") + " (" + number(s.min, "%.4f") + "-" + number(s.max, "%.4f") + ")";
}

std::optional<int64_t> commonSweep(const std::vector<const RunSummary*>& runs) {
    if (runs.empty() || !runs.front()->sweep_id) return std::nullopt;
    const int64_t sweep = *runs.front()->sweep_id;
    for (const RunSummary* run : runs)
        if (run->sweep_id != sweep) return std::nullopt;
    return sweep;
}

std::optional<LadderOfRuns> ladderOfRuns(const RunStore& store, const std::vector<const RunSummary*>& runs) {
    const std::optional<int64_t> sweep = commonSweep(runs);
    if (!sweep) return std::nullopt;
    const std::string& kind = runs.front()->sweep_kind;
    if (kind != "ladder" && kind != "memory-ladder") return std::nullopt;
    LadderOfRuns ladder{summarizeLadder(store, *sweep), std::nullopt};
    if (kind == "memory-ladder") ladder.memory = memoryLadderTable(store, ladder.summary);
    return ladder;
}

}  // namespace hearth
