// Reading runs for a comparison page, what it lacks, and the data its charts draw.
#include "storage/report/ComparisonPage.h"

#include "engine/metrics/RunProfile.h"
#include "storage/report/HtmlPage.h"
#include "storage/report/RunComparison.h"
#include "storage/report/RunReport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace hearth::report {
namespace {

using nlohmann::json;

// The steps a run's curves keep: each metric's extremes per bucket, merged.
std::vector<StepMetrics> keptSteps(std::vector<StepMetrics> steps, int cap) {
    const auto n = static_cast<int64_t>(steps.size());
    if (n <= cap) return steps;
    std::set<int64_t> keep;
    const int per_metric = std::max(4, cap / 3);
    for (const auto field : {&StepMetrics::loss, &StepMetrics::lr, &StepMetrics::samples_per_sec}) {
        const auto kept = decimatedIndices(n, per_metric, [&](int64_t i) { return steps[static_cast<size_t>(i)].*field; });
        keep.insert(kept.begin(), kept.end());
    }
    std::vector<StepMetrics> out;
    out.reserve(keep.size());
    for (const int64_t i : keep) out.push_back(steps[static_cast<size_t>(i)]);
    return out;
}


}  // namespace

int comparisonPointCap(int64_t run_count) {
    const int64_t per_run = 400000 / std::max<int64_t>(1, run_count);
    return static_cast<int>(std::clamp<int64_t>(per_run, 400, 10000));
}

std::vector<int64_t> sweepRunIds(const RunStore& store, int64_t sweep_id, std::string* name) {
    std::vector<int64_t> ids;
    for (const auto& r : store.listRuns()) {
        if (r.sweep_id != sweep_id) continue;
        ids.push_back(r.id);
        if (name) *name = r.sweep_name;
    }
    if (ids.empty())
        throw StoreError("No run in '" + store.path() + "' belongs to sweep #" + std::to_string(sweep_id) +
                         " (`hearth-cli runs` lists the runs; `hearth-cli sweep --ladder` makes a sweep).");
    std::sort(ids.begin(), ids.end());
    return ids;
}

ComparisonPage loadComparisonPage(const RunStore& store, const std::vector<int64_t>& run_ids,
                                  std::optional<int64_t> baseline) {
    ComparisonPage page;
    page.generated_from = store.path();
    page.point_cap = comparisonPointCap(static_cast<int64_t>(run_ids.size()));
    for (const int64_t id : run_ids) {
        auto summary = store.run(id);
        if (!summary) throw StoreError("No run #" + std::to_string(id) + " in '" + store.path() + "'.");
        ComparedRun run;
        run.summary = std::move(*summary);
        const auto attempt = [&run](const std::string& what, const auto& read) {
            try {
                read();
            } catch (const std::exception& e) {
                run.unreadable.push_back(runLabel(run.summary) + ": " + what + " could not be read: " + e.what());
            }
        };
        attempt("its effective settings", [&] {
            if (auto started = store.runStarted(id)) run.effective = std::move(started->effective);
        });
        attempt("its epochs", [&] { run.epochs = store.epochs(id); });
        attempt("its memory breakdown", [&] { run.memory = store.memoryBreakdown(id); });
        attempt("its logged steps", [&] {
            auto steps = store.steps(id);
            run.stored_steps = static_cast<int64_t>(steps.size());
            run.steps = keptSteps(std::move(steps), page.point_cap);
        });
        page.runs.push_back(std::move(run));
    }
    const bool baseline_listed = baseline && std::any_of(page.runs.begin(), page.runs.end(), [&](const ComparedRun& r) {
                                     return r.summary.id == *baseline;
                                 });
    if (baseline && !baseline_listed)
        throw StoreError("The baseline run #" + std::to_string(*baseline) + " is not one of the runs compared.");
    page.baseline_id = baseline ? *baseline : page.runs.empty() ? 0 : page.runs.front().summary.id;

    const std::vector<const RunSummary*> summaries = summariesOf(page.runs);
    if (const std::optional<int64_t> sweep = commonSweep(summaries)) {
        const RunSummary& first = page.runs.front().summary;
        page.title = "Sweep #" + std::to_string(*sweep) + (first.sweep_name.empty() ? "" : ": " + first.sweep_name);
        page.sweep_kind = first.sweep_kind;
        try {
            if (auto ladder = ladderOfRuns(store, summaries)) {
                if (ladder->memory)
                    page.memory_ladder = std::move(ladder->memory);
                else
                    page.ladder = std::move(ladder->summary);
            }
        } catch (const StoreError&) {
            // a plan this build cannot read: the page shows the runs without the judged ladder
        }
    } else {
        page.title = std::to_string(page.runs.size()) + " runs compared";
    }
    return page;
}

std::vector<std::string> comparisonMissing(const ComparisonPage& page) {
    std::vector<std::string> out;
    const auto* baseline = [&]() -> const ComparedRun* {
        for (const auto& r : page.runs)
            if (r.summary.id == page.baseline_id) return &r;
        return nullptr;
    }();
    if (baseline && !baseline->summary.train_time_s)
        out.push_back("The baseline " + runLabel(baseline->summary) + " has no training time (" + baseline->summary.status +
                      "), so no speedups can be computed; choose another baseline.");
    for (const auto& r : page.runs) {
        const RunSummary& s = r.summary;
        const std::string failure = s.failure_message.substr(0, s.failure_message.find('\n'));   // without the suggestion
        if (s.status != "completed")
            out.push_back(runLabel(s) + " is " + s.status + (failure.empty() ? "" : " (" + failure + ")") +
                          ": it shows what it stored" + (s.train_time_s ? "." : ", without a training time or speedup."));
        else if (!s.test_accuracy)
            out.push_back(runLabel(s) + " has no test accuracy; its best validation accuracy is shown.");
        if (r.stored_steps == 0 && r.unreadable.empty()) out.push_back(runLabel(s) + " logged no training steps.");
        out.insert(out.end(), r.unreadable.begin(), r.unreadable.end());
    }
    return out;
}

std::string comparisonPageData(const ComparisonPage& page) {
    const ComparedRun* baseline = nullptr;
    for (const auto& r : page.runs)
        if (r.summary.id == page.baseline_id) baseline = &r;
    std::string runs;
    for (size_t i = 0; i < page.runs.size(); ++i) {
        const ComparedRun& r = page.runs[i];
        const RunSummary& s = r.summary;
        html::NumberArray step, epoch, wall, loss, lr, sps;
        for (const auto& m : r.steps) {
            step.addInteger(m.global_step);
            epoch.add(static_cast<double>(m.epoch) +
                      (m.batches_per_epoch > 0 ? static_cast<double>(m.batch) / static_cast<double>(m.batches_per_epoch) : 0.0));
            wall.add(m.elapsed_s);
            loss.add(m.loss);
            lr.add(m.lr);
            sps.add(m.samples_per_sec);
        }
        json epochs = {{"step", json::array()}, {"epoch", json::array()}, {"wall", json::array()},
                       {"val_loss", json::array()}, {"val_acc", json::array()}};
        double elapsed = 0.0;
        for (const auto& e : r.epochs) {
            elapsed += e.epoch_time_s;
            epochs["step"].push_back(e.global_step);
            epochs["epoch"].push_back(e.epoch + 1);
            epochs["wall"].push_back(elapsed);
            epochs["val_loss"].push_back(e.val_loss);
            epochs["val_acc"].push_back(e.val_accuracy);
        }
        std::optional<double> up;
        if (baseline) up = speedup(baseline->summary, s);
        const auto mean = meanBreakdown(r.epochs);
        json breakdown = nullptr, memory = nullptr;
        if (mean) {
            breakdown = json::array();
            for (const auto& p : breakdownParts(*mean)) breakdown.push_back(p.value);
        }
        if (r.memory && !r.memory->device.empty()) {
            memory = json::array();
            for (const auto& p : memoryParts(*r.memory)) memory.push_back(p.value);
        }
        const auto accuracy = s.test_accuracy ? s.test_accuracy : s.best_val_accuracy;
        json meta = {{"id", s.id}, {"label", runLabel(s)}, {"status", s.status},
                     {"time", s.train_time_s ? json(*s.train_time_s) : json(nullptr)},
                     {"speedup", up ? json(*up) : json(nullptr)},
                     {"accuracy", accuracy ? json(*accuracy) : json(nullptr)},
                     {"accuracy_kind", s.test_accuracy ? "test" : "val"},
                     {"stored_steps", r.stored_steps}, {"kept_steps", r.steps.size()},
                     {"epochs", epochs}, {"breakdown", breakdown}, {"memory", memory}};
        std::string text = meta.dump(-1, ' ', false, json::error_handler_t::replace);
        text.pop_back();   // add the step columns before the closing brace
        text += ",\"steps\":{\"step\":" + step.json() + ",\"epoch\":" + epoch.json() + ",\"wall\":" + wall.json() +
                ",\"loss\":" + loss.json() + ",\"lr\":" + lr.json() + ",\"sps\":" + sps.json() + "}}";
        runs += (i ? "," : "") + text;
    }
    json parts = json::array(), memory_parts = json::array();
    for (const auto& p : breakdownParts(StepBreakdown{})) parts.push_back({{"key", p.key}, {"label", p.label}});
    std::vector<const MemoryBreakdown*> memories;
    memories.reserve(page.runs.size());
    for (const auto& r : page.runs) memories.push_back(r.memory && !r.memory->device.empty() ? &*r.memory : nullptr);
    const auto memory_labels = memoryPartLabels(memories);
    const auto memory_keys = memoryParts(MemoryBreakdown{});
    for (size_t i = 0; i < memory_keys.size(); ++i)
        memory_parts.push_back({{"key", memory_keys[i].key}, {"label", memory_labels[i]}});
    size_t baseline_index = 0;
    for (size_t i = 0; i < page.runs.size(); ++i)
        if (page.runs[i].summary.id == page.baseline_id) baseline_index = i;
    return "{\"kind\":\"comparison\",\"baseline\":" + std::to_string(baseline_index) +
           ",\"point_cap\":" + std::to_string(page.point_cap) + ",\"sweep_kind\":" + html::jsonString(page.sweep_kind) +
           ",\"parts\":" + parts.dump() + ",\"memory_parts\":" + memory_parts.dump() + ",\"runs\":[" + runs + "]}";
}

}  // namespace hearth::report
