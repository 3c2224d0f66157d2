// The HTML of a comparison page (ComparisonPage.h): header, the speedup figure, the run table,
// a ladder judged or a memory ladder's table, the curves' place, the settings that differ, and the
// breakdowns' place.
#include "storage/report/ComparisonPage.h"

#include "storage/report/HtmlPage.h"
#include "storage/report/ReportScripts.h"
#include "storage/report/RunComparison.h"
#include "storage/report/RunReport.h"

#include <ctime>
#include <map>

namespace hearth::report {
namespace {

using html::escape;

std::string sortValue(const std::optional<double>& v) { return v ? formatFixed(*v, 6) : std::string("-1e300"); }

const ComparedRun* baselineOf(const ComparisonPage& page) {
    for (const auto& r : page.runs)
        if (r.summary.id == page.baseline_id) return &r;
    return nullptr;
}

std::string header(const ComparisonPage& page) {
    const ComparedRun* base = baselineOf(page);
    std::string sub = std::to_string(page.runs.size()) + " runs";
    if (page.sweep_kind == "ladder") sub += " of the technique ladder: one speed technique added per step";
    else if (page.sweep_kind == "memory-ladder") sub += " of the memory ladder: one memory toggle added per step";
    if (base) sub += " · speedups against " + runLabel(base->summary);
    return "<header><h1>" + escape(page.title) + "</h1>\n<div class=\"sub\">" + escape(sub) + "</div></header>\n";
}

std::string figure(const ComparisonPage& page) {
    const size_t n = page.runs.size();
    const std::string height = std::to_string(60 + (n > 40 ? 16 : 26) * n) + "px";
    const std::string body = "<div class=\"chartbox\"><h3>Training speedup against the baseline (×; the run's training "
                             "samples/s divided by the baseline's)</h3><div class=\"chart\" id=\"speedup-box\" style=\"height:" +
                             height + "\"><canvas id=\"chart-speedup\"></canvas></div></div>\n"
                             "<div class=\"chartbox\"><h3>Accuracy (%; test, or validation where a run has no test)</h3>"
                             "<div class=\"chart\" id=\"accuracy-box\" style=\"height:" + height +
                             "\"><canvas id=\"chart-accuracy\"></canvas></div></div>\n";
    return html::section("speedup", "Speedup and accuracy", body);
}

std::string runTable(const ComparisonPage& page) {
    const ComparedRun* base = baselineOf(page);
    html::Table t({"run", "status", "training time", "speedup", "accuracy", "peak memory", "waiting for data", "samples/s",
                   "TFLOP/s", "MFU", "epochs"},
                  "num sortable", "runs");
    for (const auto& r : page.runs) {
        const RunSummary& s = r.summary;
        std::optional<double> up;
        if (base) up = speedup(base->summary, s);
        const auto accuracy = s.test_accuracy ? s.test_accuracy : s.best_val_accuracy;
        const auto wait = dataWaitShare(r.epochs);
        std::optional<double> peak;
        if (s.peak_memory_bytes) peak = static_cast<double>(*s.peak_memory_bytes);
        std::string up_text = "–";
        if (s.id == page.baseline_id) up_text = "1.00× (baseline)";
        else if (up) up_text = formatFixed(*up, 2) + "×";
        t.rows.push_back({escape(runLabel(s)), "<span class=\"badge " + escape(s.status) + "\">" + escape(s.status) + "</span>",
                          s.train_time_s ? formatDuration(*s.train_time_s) : "–", up_text,
                          accuracy ? formatPercent(*accuracy, 2) + (s.test_accuracy ? "" : " (val)") : "–",
                          s.peak_memory_bytes ? formatBytes(*s.peak_memory_bytes) : "–", wait ? formatPercent(*wait) : "–",
                          s.samples_per_sec ? formatFixed(*s.samples_per_sec, 0) : "–",
                          s.tflops ? formatCompute(s.tflops, std::nullopt, /*with_unit=*/false) : "–",
                          s.mfu ? formatPercent(*s.mfu) : "–", std::to_string(s.epochs_completed)});
        t.sort_values.push_back({"", s.status, sortValue(s.train_time_s), sortValue(up), sortValue(accuracy), sortValue(peak),
                                 sortValue(wait), sortValue(s.samples_per_sec), sortValue(s.tflops), sortValue(s.mfu), ""});
        t.row_classes.push_back(s.id == page.baseline_id ? "baseline" : "");
    }
    const std::string table = html::render(t);
    return html::section("runs-table", "Runs", "<div class=\"scroll\">" + table +
                                                   "</div><p class=\"hint\">Click a column's title to sort by it. Speedup: "
                                                   "the run's training samples/s divided by the baseline's (for runs "
                                                   "that trained the same samples, the ratio of their training times).</p>\n");
}

std::string curves() {
    const std::string body =
        "<div class=\"controls\"><label>Metric <select id=\"curve-metric\">"
        "<option value=\"loss\">training loss</option><option value=\"val_loss\">validation loss</option>"
        "<option value=\"val_acc\">validation accuracy</option><option value=\"lr\">learning rate</option>"
        "<option value=\"sps\">throughput (samples/s)</option></select></label>"
        "<label>x <select id=\"curve-x\"><option value=\"step\">step</option><option value=\"epoch\">epoch</option>"
        "<option value=\"wall\">wall time (s)</option></select></label>"
        "<label><input type=\"checkbox\" id=\"curve-log\"> log y</label>"
        "<label>Find <input type=\"search\" id=\"curve-filter\" placeholder=\"run name\" size=\"14\"></label></div>\n"
        "<div class=\"cmp\"><div class=\"chart tall\" id=\"curves-box\"><canvas id=\"chart-curves\"></canvas></div>"
        "<div class=\"runlist\" id=\"curve-legend\"></div></div>\n"
        "<p class=\"hint screen\" id=\"curves-hint\">Drag across the chart to zoom, double-click to zoom out; point at a run "
        "in the list to pick out its curve.</p>\n";
    return html::section("curves", "Curves", body);
}

// Few runs: a row per setting, a column per run (as `hearth-cli compare`); many: a row per run.
html::Table differencesTable(const ComparisonPage& page, const std::vector<SettingDifference>& differences) {
    if (page.runs.size() <= 8) {
        html::Table t({"setting"}, "settings");
        for (const auto& r : page.runs) t.headers.push_back(escape(runLabel(r.summary)));
        for (const auto& d : differences) {
            std::vector<std::string> row{"<code>" + escape(d.key) + "</code>"};
            for (const auto& v : d.values) row.push_back(escape(v.empty() ? "–" : v));
            t.rows.push_back(std::move(row));
        }
        return t;
    }
    html::Table t({"run"}, "settings");
    for (const auto& d : differences) t.headers.push_back("<code>" + escape(d.key) + "</code>");
    for (size_t i = 0; i < page.runs.size(); ++i) {
        std::vector<std::string> row{escape(runLabel(page.runs[i].summary))};
        for (const auto& d : differences) row.push_back(escape(d.values[i].empty() ? "–" : d.values[i]));
        t.rows.push_back(std::move(row));
    }
    return t;
}

// A run's own files (".artifacts/12/best.pt") differ by run id only: not a difference in what ran.
std::map<std::string, std::string> withoutOwnPaths(const ComparedRun& run) {
    const std::string own = ".artifacts/" + std::to_string(run.summary.id) + "/";
    std::map<std::string, std::string> out;
    for (auto [key, value] : run.effective) {
        for (auto at = value.find(own); at != std::string::npos; at = value.find(own, at + 1))
            value.replace(at, own.size(), ".artifacts/<run>/");
        out.emplace(key, std::move(value));
    }
    return out;
}

std::string settings(const ComparisonPage& page) {
    std::vector<std::string> configs;
    std::vector<std::map<std::string, std::string>> effective;
    for (const auto& r : page.runs) {
        configs.push_back(r.summary.config_json);
        effective.push_back(withoutOwnPaths(r));
    }
    const auto differing = differingSettings(configs);
    const auto ran = differingEffective(effective);
    std::string body;
    if (differing.empty()) body += "<p class=\"sub\" id=\"no-differences\">The runs' settings are the same (apart from their names).</p>\n";
    else body += "<div class=\"scroll\" id=\"differences\" data-keys=\"" + std::to_string(differing.size()) + "\">" +
                 html::render(differencesTable(page, differing)) + "</div>\n";
    if (!ran.empty())
        body += "<h3>What ran differently (effective settings)</h3><div class=\"scroll\">" +
                html::render(differencesTable(page, ran)) + "</div>\n";
    return html::section("settings", "Settings that differ", body);
}

// The ladder judged over its repeats: each step's median (min-max), verdicts, why, and the
// recommendation (as `hearth-cli sweep` prints it).
std::string ladderJudged(const ComparisonPage& page) {
    if (!page.ladder) return "";
    const LadderSummary& l = *page.ladder;
    const bool accuracy = l.goal == "accuracy";
    html::Table t({"step", accuracy ? "reached" : "runs",
                   accuracy ? "time to the baseline's accuracy" : l.steady ? "samples/s (steady)" : "fit time",
                   "speed-up", "vs baseline",
                   "test accuracy", "accuracy", "peak memory: predicted / measured",
                   "optimizer step: predicted / measured", "why"},
                  "num", "ladder-judged");
    for (size_t i = 0; i < l.steps.size(); ++i) {
        const auto& s = l.steps[i];
        std::string why;
        for (const auto& line : s.why) why += (why.empty() ? "" : " ") + line;
        if (!s.not_run.empty()) why = "Not run: " + s.not_run + ".";
        t.rows.push_back({escape(s.label) + (!s.not_run.empty() ? " (not run)" : s.kept ? "" : " (left out)"),
                          std::to_string(accuracy ? s.reached : s.completed) + "/" + std::to_string(s.run_ids.size()),
                          escape(ladderSpeedCell(s.verdict.speed, l.steady)),
                          i == 0 ? "-" : escape(speedupText(s.verdict.change, s.verdict.speedup)),
                          i == 0 ? "-" : escape(speedupText(s.verdict.change_vs_baseline, s.verdict.speedup_vs_baseline)),
                          escape(ladderAccuracyCell(s.verdict.accuracy)),
                          i == 0 ? "-" : escape(accuracyChangeName(s.verdict.accuracy_change)),
                          escape(ladderPeakPredictionCell(s)), escape(ladderStepPredictionCell(s)), escape(why)});
        t.row_classes.push_back(l.recommended && *l.recommended == i ? "best" : "");
    }
    const std::string note = "<p class=\"sub\">" + std::to_string(l.repeats) + " run(s) per step, " +
                             (l.order == "alone" ? "each rung alone against the baseline" : "each rung added to the step before") +
                             "; median (min-max). A range that overlaps the other step's, or lies apart by less than the ranges' width, reads "
                             "\"no measurable change\"; "
                             "an accuracy inside the run-to-run spread is \"same\". Predicted: from a probe of a few "
                             "steps at a quarter and half of the step's batch before its first run; measured: that "
                             "run's peak and its last epoch's step time (error in brackets).</p>\n";
    return html::section("ladder", "The ladder, judged over its repeats",
                         note + "<div class=\"scroll\">" + html::render(t) + "</div>\n<p id=\"recommendation\"><b>" +
                             escape(l.recommendation) + "</b></p>\n");
}

// The memory ladder: each step's peak and its change against the step before, the activations,
// the gradients and the time against the baseline (as `hearth-cli sweep --show` prints it).
std::string memoryLadder(const ComparisonPage& page) {
    if (!page.memory_ladder) return "";
    const MemoryLadderTable& m = *page.memory_ladder;
    html::Table t({"step", "run", "peak memory", "change", "activations", "gradients", "train time", "time",
                   "test accuracy", "peak memory: predicted / measured", "optimizer step: predicted / measured"},
                  "num", "memory-ladder");
    for (const auto& row : m.rows) {
        const MemoryLadderCells c = memoryLadderCells(row);
        t.rows.push_back({escape(row.label), row.run_id ? std::to_string(row.run_id) : "-", escape(c.peak),
                          escape(c.change), escape(c.activations), escape(c.gradients), escape(c.train_time),
                          escape(c.time), escape(c.test_accuracy), escape(row.predicted_peak),
                          escape(row.predicted_step)});
    }
    return html::section("memory-ladder", "The memory ladder",
                         "<p class=\"sub\">" + escape(memoryLadderNote(m)) + ".</p>\n<div class=\"scroll\">" +
                             html::render(t) + "</div>\n");
}

std::string breakdowns(const ComparisonPage& page) {
    const std::string height = std::to_string(90 + 24 * page.runs.size()) + "px";
    return html::section(
        "time-memory", "Where the time and memory went",
        "<div class=\"grid2\"><div class=\"chartbox\"><h3>Time per micro-batch (ms; the warm-up epoch left out)</h3>"
        "<div class=\"chart\" id=\"breakdown-box\" style=\"height:" + height + "\"><canvas id=\"chart-breakdown\"></canvas></div></div>"
        "<div class=\"chartbox\"><h3>Memory at the peak (MiB)</h3><div class=\"chart\" id=\"memory-box\" style=\"height:" + height +
        "\"><canvas id=\"chart-memory\"></canvas></div></div></div>\n");
}

}  // namespace

std::string comparisonPageHtml(const ComparisonPage& page) {
    std::string out = html::documentStart(page.title, {false, true});
    out += header(page) + html::missingNotice(comparisonMissing(page)) + figure(page) + ladderJudged(page) + memoryLadder(page) +
           runTable(page) + curves() + settings(page) + breakdowns(page);
    const std::string footer = "Made by Hearth on " + escape(formatTime(static_cast<double>(std::time(nullptr)))) + " from " +
                               escape(page.generated_from) + ". Charts: " + escape(scripts::librariesLine()) +
                               ", inlined: this file needs no network to open.";
    return out + html::documentEnd(comparisonPageData(page), scripts::comparisonPage(), footer);
}

}  // namespace hearth::report
