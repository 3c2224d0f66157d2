// The HTML of a run's report page (RunPage.h): header, key figures, charts' places, tables.
#include "storage/report/RunPage.h"

#include "storage/report/HtmlPage.h"
#include "storage/report/ReportScripts.h"
#include "storage/report/RunComparison.h"

#include <algorithm>
#include <cmath>
#include <ctime>

namespace hearth::report {
namespace {

using html::escape;

std::string optionalPercent(const std::optional<double>& v) { return v ? formatPercent(*v, 2) : "–"; }
std::string count(int64_t n) {
    std::string digits = std::to_string(n < 0 ? -n : n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return (n < 0 ? "-" : "") + out;
}

std::string className(const std::vector<std::string>& names, int64_t c) {
    return c >= 0 && c < static_cast<int64_t>(names.size()) ? names[static_cast<size_t>(c)] : std::to_string(c);
}

std::string header(const RunPage& page) {
    const RunSummary& s = page.run.summary;
    std::string sub = "Started " + formatTime(s.started_at);
    if (s.finished_at > 0) sub += " · finished " + formatTime(s.finished_at);
    if (!s.device.empty()) sub += " · " + s.device;
    if (s.sweep_id) sub += " · sweep #" + std::to_string(*s.sweep_id) + (s.sweep_name.empty() ? "" : " “" + s.sweep_name + "”");
    if (!s.hostname.empty()) sub += " · host " + s.hostname;
    std::string out = "<header><h1>" + escape(runPageTitle(s)) + "<span class=\"badge " + escape(s.status) + "\" id=\"status\">" +
                      escape(s.status) + "</span></h1>\n<div class=\"sub\">" + escape(sub) + "</div></header>\n";
    if (!s.failure_message.empty())
        out += "<div class=\"failure\" id=\"failure\"><strong>Failed" +
               (s.failure_kind.empty() ? std::string() : " (" + escape(s.failure_kind) + ")") + ":</strong> " +
               escape(s.failure_message) + "</div>\n";
    if (!s.stop_reason.empty()) out += "<p class=\"sub\">Ended early: " + escape(s.stop_reason) + "</p>\n";
    return out;
}

std::string keyFigures(const RunPage& page) {
    const RunSummary& s = page.run.summary;
    const int64_t max_epochs = page.run.started.max_epochs;
    std::vector<std::pair<std::string, std::string>> figures = {
        {"test accuracy", optionalPercent(s.test_accuracy)},
        {"best validation accuracy", optionalPercent(s.best_val_accuracy)},
        {"training time", s.train_time_s ? formatDuration(*s.train_time_s) : "–"},
        {"samples/s", s.samples_per_sec ? count(std::llround(*s.samples_per_sec)) : "–"},
        // The number alone in the card (a card's value is one line): "412.3", not "412.3 TFLOP/s (MFU …)".
        {"TFLOP/s per device (model FLOPs)", s.tflops ? formatCompute(s.tflops, std::nullopt, false) : "–"},
    };
    if (s.tflops && s.mfu && *s.mfu >= 0.0) figures.emplace_back("MFU (model FLOPs utilisation)", formatPercent(*s.mfu));
    figures.insert(figures.end(),
                   {{"peak memory", s.peak_memory_bytes ? formatBytes(*s.peak_memory_bytes) : "–"},
                    {"epochs", std::to_string(s.epochs_completed) + (max_epochs > 0 ? " of " + std::to_string(max_epochs) : "")},
                    {"optimizer steps", count(s.global_steps)}});
    return html::cards(figures);
}

std::string chartBox(const std::string& key, const std::string& title, const std::string& extra_class = {}) {
    return "<div class=\"chartbox\"><h3>" + escape(title) + "</h3><div class=\"chart" + extra_class + "\" id=\"chart-" + key +
           "\"></div><div class=\"legend\" id=\"legend-" + key + "\"></div></div>\n";
}

std::string curves(const RunPage& page) {
    const size_t n = page.steps.size();
    std::string body = "<p class=\"hint\" id=\"curves-hint\">All " + count(static_cast<int64_t>(n)) + " logged steps and " +
                       std::to_string(page.run.epochs.size()) +
                       " epochs are in this file. Drag across a chart to zoom (the others follow), double-click to zoom "
                       "out, hover for values; the strip under the loss chart pans. A chart draws up to two points per "
                       "pixel column (beyond that, each column's lowest and highest step), and zooming in redraws from "
                       "the stored steps, down to every one. An address ending in #steps=FROM-TO opens zoomed.</p>\n";
    body += chartBox("loss", "Loss", " tall");
    body += "<div class=\"grid2\">\n" + chartBox("accuracy", "Accuracy") + chartBox("lr", "Learning rate") +
            chartBox("throughput", "Throughput (samples/s)") + chartBox("steptime", "Time per micro-batch (ms)") + "</div>\n";
    return html::section("curves", "Training curves", body);
}

html::Table classificationTable(const ClassificationReport& c) {
    html::Table t({"", "precision", "recall", "f1-score", "support"}, "num");
    for (size_t i = 0; i < c.class_names.size(); ++i)
        t.rows.push_back({escape(c.class_names[i]), formatFixed(c.precision.at(i), 4), formatFixed(c.recall.at(i), 4),
                          formatFixed(c.f1.at(i), 4), count(c.support.at(i))});
    t.rows.push_back({"accuracy", "", "", formatFixed(c.accuracy, 4), count(c.total)});
    t.rows.push_back({"macro avg", formatFixed(c.macro_precision, 4), formatFixed(c.macro_recall, 4),
                      formatFixed(c.macro_f1, 4), count(c.total)});
    t.rows.push_back({"weighted avg", formatFixed(c.weighted_precision, 4), formatFixed(c.weighted_recall, 4),
                      formatFixed(c.weighted_f1, 4), count(c.total)});
    t.row_classes.assign(c.class_names.size(), "");
    t.row_classes.insert(t.row_classes.end(), 3, "total");
    return t;
}

// Rows: true class; columns: predicted. A cell's colour is its share of the true class's samples.
std::string heatmap(const ClassificationReport& c) {
    const auto& names = c.class_names;
    const size_t n = c.confusion.size();
    std::string out = "<div class=\"scroll\"><table class=\"heat\" id=\"confusion\" data-classes=\"" + std::to_string(n) +
                      "\">\n<thead><tr><th class=\"l\">true ↓ predicted →</th>";
    for (size_t p = 0; p < n; ++p) out += "<th class=\"col\">" + escape(className(names, static_cast<int64_t>(p))) + "</th>";
    out += "</tr></thead>\n<tbody>\n";
    for (size_t t = 0; t < n; ++t) {
        int64_t row_total = 0;
        for (const int64_t v : c.confusion[t]) row_total += v;
        const std::string true_name = className(names, static_cast<int64_t>(t));
        out += "<tr><th class=\"l\">" + escape(true_name) + "</th>";
        for (size_t p = 0; p < c.confusion[t].size(); ++p) {
            const int64_t v = c.confusion[t][p];
            const double share = row_total > 0 ? static_cast<double>(v) / static_cast<double>(row_total) : 0.0;
            // Correct cells blue, mistakes red; white text on dark cells.
            const char* rgb = t == p ? "37,99,235" : "200,40,40";
            const double alpha = v == 0 ? 0.0 : 0.08 + 0.92 * std::sqrt(share);
            out += "<td style=\"background:rgba(" + std::string(rgb) + "," + formatFixed(alpha, 3) + ")" +
                   (alpha > 0.55 ? ";color:#fff" : "") + "\" title=\"true " + escape(true_name) + ", predicted " +
                   escape(className(names, static_cast<int64_t>(p))) + ": " + count(v) + " (" + formatPercent(share) +
                   " of " + escape(true_name) + ")\" data-count=\"" + std::to_string(v) + "\">" + count(v) + "</td>";
        }
        out += "</tr>\n";
    }
    return out + "</tbody></table></div>\n<p class=\"hint\">Rows are the true class, columns the prediction; a cell's "
                 "colour is its share of the row (blue: right, red: wrong). Hover a cell for its numbers.</p>\n";
}

std::string classification(const RunPage& page) {
    const auto& report = page.run.test ? page.run.test : page.run.val;
    if (!report)
        return html::section("classification", "Classification report",
                             "<p class=\"sub\">No classification report was stored for this run (see above).</p>\n");
    const ClassificationReport& c = report->report;
    std::string body = "<p class=\"sub\">The " + escape(report->split) + " split: " + count(c.total) + " samples, loss " +
                       formatFixed(report->loss, 4) + ", accuracy " + formatPercent(c.accuracy, 2) + ".</p>\n";
    const std::string table = "<div class=\"scroll\">" + html::render(classificationTable(c)) + "</div>";
    if (c.class_names.size() <= 12) body += "<div class=\"split\"><div>" + table + "</div><div>" + heatmap(c) + "</div></div>\n";
    else body += table + "<h3>Confusion matrix</h3>" + heatmap(c);
    return html::section("classification", "Classification report (" + report->split + " split)", body);
}

std::string samples(const RunPage& page) {
    if (page.samples.empty()) {
        const std::string why = page.predictions == 0 ? "No per-sample predictions were stored."
                                                      : "The model got every " + page.samples_split + " sample right.";
        return html::section("samples", "Misclassified samples", "<p class=\"sub\">" + escape(why) + "</p>\n");
    }
    const auto& names = page.run.test ? page.run.test->report.class_names
                        : page.run.val ? page.run.val->report.class_names
                                       : page.run.started.class_names;
    const bool text = std::any_of(page.samples.begin(), page.samples.end(),
                                  [](const auto& s) { return !s.text.empty() && !s.image && s.image_url.empty(); });
    std::string body = "<p class=\"sub\">The " + std::to_string(page.samples.size()) + " most confident of " +
                       count(page.misclassified) + " misclassified " + escape(page.samples_split) + " samples (of " +
                       count(page.predictions) + ").</p>\n";
    if (!page.samples_note.empty()) body += "<p class=\"hint\">" + escape(page.samples_note) + "</p>\n";
    body += std::string("<div class=\"samples") + (text ? " text" : "") + "\" id=\"sample-grid\">\n";
    for (const auto& s : page.samples) {
        const Prediction& p = s.prediction;
        const std::string labels = "<span class=\"lbl\">" + escape(className(names, p.true_label)) + "</span> → <span class=\"wrong\">" +
                                   escape(className(names, p.predicted)) + "</span>";
        const std::string meta = formatPercent(p.confidence, 0) + " sure · #" + std::to_string(p.index);
        body += "<div class=\"sample\" data-index=\"" + std::to_string(p.index) + "\">";
        if (s.image || !s.image_url.empty()) {
            std::string url = s.image_url;
            try {
                if (s.image) url = pngDataUrl(*s.image);
            } catch (const std::exception&) {
                url.clear();   // a malformed image is left out; its labels still show
            }
            if (!url.empty())
                body += "<img alt=\"sample " + std::to_string(p.index) + "\"" +
                        (s.text.empty() ? std::string() : " title=\"" + escape(s.text) + "\"") + " src=\"" + url + "\">";
            body += "<div>" + labels;
            body += "</div><div class=\"hint\">" + meta + "</div>";
        } else {
            const size_t limit = 600;
            const std::string shown = s.text.size() > limit ? s.text.substr(0, limit) + " …" : s.text;
            body += "<div>" + labels;
            body += " <span class=\"hint\">" + meta + "</span></div>";
            if (!shown.empty()) body += "<q>" + escape(shown) + "</q>";
        }
        body += "</div>\n";
    }
    return html::section("samples", "Misclassified samples", body + "</div>\n");
}

std::string timeAndMemory(const RunPage& page) {
    // A data-parallel run's breakdown is rank 0's; the Processes table has every rank's share.
    const std::string whose = page.run.ranks.empty() ? "" : " (rank 0)";
    std::string body = "<div class=\"grid2\"><div class=\"chartbox\"><h3>Where a micro-batch's time went (ms)</h3>"
                       "<div class=\"chart\" id=\"breakdown-box\"><canvas id=\"chart-breakdown\"></canvas></div></div>\n"
                       "<div class=\"chartbox\"><h3>Memory at the peak" + whose + "</h3><div class=\"chart\" id=\"memory-box\">"
                       "<canvas id=\"chart-memory\"></canvas></div></div></div>\n";
    if (!page.run.devices.empty()) {
        html::Table t({"rank", "device", "samples", "mean use", "peak memory", "of", "max temp.", "mean power"}, "num");
        for (const auto& d : page.run.devices)
            t.rows.push_back({std::to_string(d.rank), escape(d.name.empty() ? (d.device < 0 ? "host" : std::to_string(d.device)) : d.name),
                              count(d.samples), d.utilization_mean >= 0 ? formatPercent(d.utilization_mean, 0) : "–",
                              formatBytes(d.memory_peak_bytes), d.total_bytes > 0 ? formatBytes(d.total_bytes) : "–",
                              d.temperature_max_c >= 0 ? formatFixed(d.temperature_max_c, 0) + " °C" : "–",
                              d.power_mean_w >= 0 ? formatFixed(d.power_mean_w, 0) + " W" : "–"});
        body += "<h3>Devices</h3><div class=\"scroll\">" + html::render(t) + "</div>";
    }
    if (!page.run.ranks.empty()) {
        html::Table t({"rank", "device", "samples", "train time", "samples/s", "data wait", "peak memory", "gradients",
                       "optimizer state"}, "num");
        for (const auto& r : page.run.ranks)
            t.rows.push_back({std::to_string(r.rank), escape(r.device), count(r.samples), formatDuration(r.train_time_s),
                              formatFixed(r.samples_per_sec, 0),
                              r.train_time_s > 0 ? formatPercent(r.data_wait_s / r.train_time_s) : "–",
                              formatBytes(r.peak_memory_bytes), formatHeldBytes(r.gradients_bytes, "–"),
                              formatHeldBytes(r.optimizer_state_bytes, "–")});
        body += "<h3>Processes</h3><div class=\"scroll\">" + html::render(t) + "</div>";
    }
    return html::section("time-memory", "Time and memory", body);
}

std::string timings(const RunPage& page) {
    const RunSummary& s = page.run.summary;
    const RunStarted& st = page.run.started;
    const auto wait = dataWaitShare(page.run.epochs);
    html::Table t({}, "kv");
    t.rows = {{"training time", s.train_time_s ? formatDuration(*s.train_time_s) : "–"},
              {"total time (with testing)", s.total_time_s ? formatDuration(*s.total_time_s) : "–"},
              {"samples/s", s.samples_per_sec ? count(std::llround(*s.samples_per_sec)) : "–"},
              {"model FLOPs per device", s.tflops ? formatCompute(s.tflops, s.mfu) : "–"},
              {"waiting for data", wait ? formatPercent(*wait) + " of step time" : "–"},
              {"peak memory", formatPeakMemory(s.peak_memory_bytes, page.run.ranks.size(), "–")},
              {"samples (train / val / test)", count(st.train_size) + " / " + count(st.val_size) + " / " + count(st.test_size)},
              {"batches per epoch", count(st.batches_per_epoch)},
              {"parameters", count(st.parameter_count)}};
    std::string body = html::render(t);
    if (!page.run.epochs.empty()) {
        html::Table e({"epoch", "train loss", "train acc", "val loss", "val acc", "lr", "time", "samples/s", "data wait"}, "num");
        for (const auto& m : page.run.epochs)
            e.rows.push_back({std::to_string(m.epoch + 1) + (m.is_best ? " ★" : ""), formatFixed(m.train_loss, 4),
                              formatPercent(m.train_accuracy, 2), formatFixed(m.val_loss, 4), formatPercent(m.val_accuracy, 2),
                              formatNumber(m.lr), formatDuration(m.epoch_time_s), count(std::llround(m.samples_per_sec)),
                              formatPercent(m.data_wait_share)});
        body += "<h3>Epochs</h3><div class=\"scroll\">" + html::render(e) + "</div>";
    }
    return html::section("timings", "Timings", body);
}

// "what ran" restates the request in words ("64 per micro-batch and device", "off" for false):
// it differs when it says something else ("cpu" for "auto", "off (not applicable on CPU)").
bool ranAsAsked(const std::string& asked, const std::string& ran) {
    const auto starts = [&ran](const std::string& prefix) { return ran.compare(0, prefix.size(), prefix) == 0; };
    if (starts(asked)) return ran.find("not applicable") == std::string::npos && ran.find("n/a") != 0;
    if (asked == "false" || asked == "null") return starts("off") && ran.find("not applicable") == std::string::npos;
    if (asked == "true") return starts("on");
    return false;
}

std::string settings(const RunPage& page) {
    const auto requested = flattenConfig(page.run.summary.config_json);
    const auto& effective = page.run.started.effective;
    html::Table ran({"setting", "asked for", "what ran"}, "settings");
    int differing = 0;
    for (const auto& [key, value] : effective) {
        const auto it = requested.find(key);
        const std::string asked = it == requested.end() ? "–" : it->second;
        const bool differs = it != requested.end() && !ranAsAsked(it->second, value);
        differing += differs ? 1 : 0;
        ran.rows.push_back({"<code>" + escape(key) + "</code>", escape(asked), escape(value)});
        ran.row_classes.push_back(differs ? "differs" : "");
    }
    std::string body;
    if (effective.empty()) {
        body += "<p class=\"sub\">No effective settings were stored (see above).</p>\n";
    } else {
        body += "<p class=\"sub\">The speed and device settings as asked for and as they ran on this machine; " +
                std::to_string(differing) + " of " + std::to_string(effective.size()) +
                " ran otherwise than asked (highlighted): “auto” resolved for this machine, or a toggle that does not apply here.</p>\n<div class=\"scroll\">" +
                html::render(ran) + "</div>\n";
    }
    html::Table all({}, "kv");
    for (const auto& [key, value] : requested) all.rows.push_back({"<code>" + escape(key) + "</code>", escape(value)});
    body += "<details id=\"all-settings\"><summary>All " + std::to_string(requested.size()) +
            " settings of the experiment</summary>\n" + html::render(all) + "</details>\n";
    return html::section("settings", "Settings: asked for and what ran", body);
}

std::string environment(const RunPage& page) {
    const EnvironmentInfo& e = page.run.started.environment;
    std::string devices;
    for (const auto& d : e.devices) devices += (devices.empty() ? "" : ", ") + d;
    html::Table t({}, "kv");
    const auto row = [&t](const std::string& k, const std::string& v) { t.rows.push_back({escape(k), escape(v.empty() ? "–" : v)}); };
    row("Hearth", e.hearth_version + (e.git_revision.empty() ? "" : " (" + e.git_revision + ")"));
    row("LibTorch", e.libtorch_version);
    row("CUDA", e.cuda_support.empty() ? (e.libtorch_version.empty() ? "" : "not recorded") : e.cuda_support);
    row("device of the run", page.run.summary.device);
    row("devices seen", devices);
    row("CPU", e.cpu.empty() ? "" : e.cpu + " (" + std::to_string(e.cpu_threads) + " logical CPUs, " +
                                         std::to_string(e.intra_op_threads) + " intra-op threads)");
    row("OS", e.os);
    std::string body = html::render(t);
    if (!page.run.started.model_summary.empty()) {
        std::string lines;
        for (const auto& l : page.run.started.model_summary) lines += escape(l) + "\n";
        body += "<details><summary>Model: " + count(page.run.started.parameter_count) + " parameters</summary><pre>" + lines +
                "</pre></details>\n";
    }
    return html::section("environment", "Environment", body);
}

std::string notesAndTags(const RunPage& page) {
    const RunSummary& s = page.run.summary;
    std::string body;
    if (!s.tags.empty()) {
        body += "<p id=\"tags\">";
        for (const auto& tag : s.tags) body += "<span class=\"badge\">" + escape(tag) + "</span> ";
        body += "</p>\n";
    }
    body += s.notes.empty() ? "<p class=\"sub\">No notes.</p>\n"
                            : "<p id=\"notes\" style=\"white-space:pre-wrap\">" + escape(s.notes) + "</p>\n";
    if (!page.run.artifacts.empty()) {
        html::Table t({"kind", "epoch", "size", "SHA-256", "path"}, "artifacts");
        for (const auto& a : page.run.artifacts)
            t.rows.push_back({escape(a.kind), a.epoch >= 0 ? std::to_string(a.epoch + 1) : "–", formatBytes(a.bytes),
                              "<code>" + escape(a.sha256.substr(0, 12)) + "</code>", "<code>" + escape(a.path) + "</code>"});
        body += "<h3>Files</h3><div class=\"scroll\">" + html::render(t) + "</div>";
    }
    return html::section("notes", "Notes and tags", body);
}

std::string nowText() {
    const std::time_t now = std::time(nullptr);
    return formatTime(static_cast<double>(now));
}

}  // namespace

std::string runPageHtml(const RunPage& page) {
    std::string out = html::documentStart(runPageTitle(page.run.summary), {true, true});
    out += header(page) + html::missingNotice(missingParts(page)) + keyFigures(page);
    out += curves(page) + classification(page) + samples(page) + timeAndMemory(page) + timings(page) + settings(page) +
           environment(page) + notesAndTags(page);
    const std::string footer = "Made by Hearth on " + escape(nowText()) + " from " + escape(page.generated_from) +
                               ". Charts: " + escape(scripts::librariesLine()) +
                               ", inlined: this file needs no network to open.";
    return out + html::documentEnd(runPageData(page), scripts::runPage(), footer);
}

}  // namespace hearth::report
