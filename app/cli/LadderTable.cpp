#include "LadderTable.h"

#include "engine/config/ExperimentConfig.h"
#include "storage/report/RunReport.h"

#include <algorithm>

namespace hearth::cli {
namespace {

std::string number(double v, const char* pattern) {
    char text[64];
    std::snprintf(text, sizeof text, pattern, v);
    return text;
}

// printf into a string (the summary goes to a FILE* or a std::ostream).
template <class... Args>
void appendf(std::string& out, const char* pattern, Args... args) {
    const int n = std::snprintf(nullptr, 0, pattern, args...);
    if (n <= 0) return;
    std::string text(static_cast<size_t>(n) + 1, '\0');
    std::snprintf(text.data(), text.size(), pattern, args...);
    text.pop_back();
    out += text;
}

}  // namespace

void printLadderPlan(std::FILE* out, const std::vector<LadderRung>& rungs, const std::vector<LadderStep>& steps,
                     const LadderPlan& plan) {
    std::fprintf(out, "Rungs ([x] planned, [ ] applies but not chosen; --rungs ID,... picks them):\n");
    size_t width = 0;
    for (const auto& r : rungs) width = std::max(width, r.id.size());
    for (const auto& r : rungs) {
        const bool chosen = std::any_of(steps.begin(), steps.end(), [&](const LadderStep& s) { return s.label == r.label; });
        const char* mark = !r.applies ? "n/a" : chosen ? "[x]" : "[ ]";
        std::fprintf(out, "  %s %-*s %s: %s\n", mark, static_cast<int>(width), r.id.c_str(), r.label.c_str(),
                     r.applies ? r.change.c_str() : r.reason.c_str());
    }
    std::fprintf(out, "\nSteps (%s; each run %lld time%s, the steps alternating round by round):\n",
                 plan.order == LadderOrder::Alone ? "each rung alone against the baseline" : "each adds its rung to the one before",
                 static_cast<long long>(plan.repeats), plan.repeats == 1 ? "" : "s");
    for (size_t i = 0; i < steps.size(); ++i)
        std::fprintf(out, "  %2zu. %s: %s\n", i + 1, steps[i].label.c_str(), steps[i].change.c_str());
}

namespace {

// Predict, then measure: each step's footprint predicted before its first run against what that
// run measured; the steps not run, with why. Empty when no step has a prediction.
std::string predictionText(const LadderSummary& summary) {
    bool any = false;
    size_t width = 16;
    for (const auto& s : summary.steps) {
        any = any || s.prediction || !s.not_run.empty();
        width = std::max(width, s.label.size());
    }
    if (!any) return {};
    std::string out;
    appendf(out, "\nPredicted before each step's first run, then measured (predicted / measured (error)):\n");
    appendf(out, "%-*s %-38s %-32s %s\n", static_cast<int>(width), "step", "peak memory", "optimizer step", "activations");
    for (const auto& s : summary.steps) {
        if (!s.not_run.empty()) {
            appendf(out, "%-*s not run: %s\n", static_cast<int>(width), s.label.c_str(), s.not_run.c_str());
            continue;
        }
        if (!s.prediction) {
            appendf(out, "%-*s -\n", static_cast<int>(width), s.label.c_str());
            continue;
        }
        std::string activations = formatBytes(s.prediction->memory.activations_bytes);
        if (s.check && s.check->activations_error)
            activations += " (" + footprintErrorText(s.check->activations_error) + ")";
        appendf(out, "%-*s %-38s %-32s %s\n", static_cast<int>(width), s.label.c_str(),
                ladderPeakPredictionCell(s).c_str(), ladderStepPredictionCell(s).c_str(), activations.c_str());
    }
    appendf(out, "(predicted from a probe of a few steps at a quarter and half of each step's batch; measured: its "
                 "first run's peak and its last epoch's step time)\n");
    return out;
}

}  // namespace

std::string ladderSummaryText(const LadderSummary& summary) {
    std::string out;
    size_t width = 16;
    for (const auto& s : summary.steps) width = std::max(width, s.label.size() + (s.kept ? 0 : 11));  // " (left out)"/" (not run)"
    const bool accuracy = summary.goal == "accuracy";
    const std::string speed_head = accuracy ? (summary.accuracy_target
                                                   ? "time to val acc " + number(*summary.accuracy_target, "%.4f")
                                                   : std::string("time to the target"))
                                   : summary.steady ? "samples/s (steady)"
                                                    : "fit time";
    appendf(out, "\n%-*s %5s %-11s %-26s %-28s %-12s %-26s %-6s %11s %9s\n", static_cast<int>(width), "step", "runs",
                 "precision", speed_head.c_str(), "speed-up", "vs baseline", "test acc", "acc", "peak memory", "data wait");
    for (const auto& s : summary.steps) {
        std::string precision = "-";
        if (!s.config_json.empty()) {
            try {
                precision = configFromJson(s.config_json).trainer.precision;
            } catch (const std::exception&) {
            }
        }
        const bool first = &s == &summary.steps.front();
        const std::string label = s.label + (!s.not_run.empty() ? " (not run)" : s.kept ? "" : " (left out)");
        // Accuracy goal: the runs that reached the target, of all.
        const std::string runs = std::to_string(accuracy ? s.reached : s.completed) + "/" + std::to_string(s.run_ids.size());
        appendf(out, "%-*s %5s %-11s %-26s %-28s %-12s %-26s %-6s %11s %8.1f%%\n", static_cast<int>(width),
                     label.c_str(), runs.c_str(), precision.c_str(), ladderSpeedCell(s.verdict.speed, summary.steady).c_str(),
                     first ? "-" : speedupText(s.verdict.change, s.verdict.speedup).c_str(),
                     first ? "-" : speedupText(s.verdict.change_vs_baseline, s.verdict.speedup_vs_baseline).c_str(),
                     ladderAccuracyCell(s.verdict.accuracy).c_str(),
                     first ? "-" : accuracyChangeName(s.verdict.accuracy_change).c_str(),
                     s.peak_bytes.n ? formatBytes(static_cast<int64_t>(s.peak_bytes.median)).c_str() : "-",
                     100.0 * s.data_wait_share.median);
    }
    appendf(out, "(median (min-max) of each step's runs; %s; speed-up: against the step it built on%s. A "
                      "range that overlaps the other step's, or lies apart by less than the ranges' width, reads "
                      "\"no measurable change\"; with one run each, a change under 5%% does. acc: test accuracy against the baseline's, \"same\" within the "
                      "run-to-run spread)\n",
                 accuracy ? "the time until the validation accuracy first reached the baseline's best (runs: those that "
                            "reached it)"
                 : summary.steady ? "samples/s of the last epoch, after the first epoch's warm-up"
                                  : "the whole fit's time, warm-up and validation included (2+ epochs give steady speeds)",
                 summary.order == "alone" ? " (the baseline: each rung ran alone)" : "");
    bool any_why = false;
    for (size_t i = 1; i < summary.steps.size(); ++i) {
        const auto& s = summary.steps[i];
        if (s.why.empty()) continue;
        if (!any_why) appendf(out, "\nWhy:\n");
        any_why = true;
        std::string text;
        for (const auto& line : s.why) text += (text.empty() ? "" : " ") + line;
        appendf(out, "  %s: %s\n", s.label.c_str(), text.c_str());
    }
    for (size_t i = 1; i < summary.steps.size(); ++i) {
        const auto& s = summary.steps[i];
        if (s.kept || !s.not_run.empty()) continue;
        appendf(out, "'%s' measured slower than '%s' in the first round and was left out of the steps after it.\n",
                     s.label.c_str(), summary.steps[s.reference].label.c_str());
    }
    out += predictionText(summary);
    appendf(out, "\n%s\n", summary.recommendation.c_str());
    return out;
}

void printLadderSummary(std::FILE* out, const LadderSummary& summary) {
    std::fputs(ladderSummaryText(summary).c_str(), out);
}

std::string memoryLadderText(const LadderSummary& summary, const MemoryLadderTable& table) {
    size_t width = 16;
    for (const auto& row : table.rows) width = std::max(width, row.label.size());
    std::string out;
    appendf(out, "\n%-*s %5s %11s %9s %11s %10s %10s %8s %9s\n", static_cast<int>(width), "step", "run", "peak memory",
            "change", "activations", "gradients", "train time", "time", "test acc");
    for (const auto& row : table.rows) {
        const MemoryLadderCells c = memoryLadderCells(row, "x");
        appendf(out, "%-*s %5lld %11s %9s %11s %10s %10s %8s %9s\n", static_cast<int>(width), row.label.c_str(),
                static_cast<long long>(row.run_id), c.peak.c_str(), c.change.c_str(), c.activations.c_str(),
                c.gradients.c_str(), c.train_time.c_str(), c.time.c_str(), c.test_accuracy.c_str());
    }
    appendf(out, "(%s)\n", memoryLadderNote(table).c_str());
    return out + predictionText(summary);
}

void printMemorySummary(std::FILE* out, const RunStore& store, const LadderSummary& summary) {
    std::fputs(memoryLadderText(summary, memoryLadderTable(store, summary)).c_str(), out);
}

}  // namespace hearth::cli
