// Reading a run for its report page, what the page lacks, and the data its charts draw.
#include "storage/report/RunPage.h"

#include "engine/data/images/ImageFolderScan.h"
#include "engine/metrics/RunProfile.h"
#include "storage/report/HtmlPage.h"
#include "storage/report/PngImage.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>

namespace hearth::report {
namespace {

using nlohmann::json;

// Why a run has less than a completed one, as the end of a sentence ("... before testing").
std::string endedHow(const std::string& status) {
    if (status == "failed") return "the run failed";
    if (status == "stopped") return "the run was stopped";
    if (status == "interrupted") return "the run was interrupted (its process ended without finishing it)";
    if (status == "running") return "the run is still running";
    return "the run ended";
}

bool hasValidation(const RunPage& page) {
    if (page.run.started.val_size > 0) return true;
    return std::any_of(page.run.epochs.begin(), page.run.epochs.end(),
                       [](const EpochMetrics& e) { return e.val_loss != 0.0 || e.val_accuracy != 0.0; });
}

json breakdownJson(const std::vector<EpochMetrics>& epochs) {
    const auto mean = meanBreakdown(epochs);
    if (!mean) return nullptr;
    json parts = json::array();
    for (const auto& p : breakdownParts(*mean)) parts.push_back({{"key", p.key}, {"label", p.label}});
    json rows = json::array();
    const auto values = [](const StepBreakdown& b) {
        json v = json::array();
        for (const auto& p : breakdownParts(b)) v.push_back(p.value);
        return v;
    };
    // The run's mean first, then each profiled epoch (up to 12; the mean covers the rest).
    const bool warmup_left_out = std::any_of(epochs.begin(), epochs.end(),
                                             [](const EpochMetrics& e) { return e.epoch > 0 && e.breakdown.profiled > 0; });
    rows.push_back({{"label", warmup_left_out ? "mean (epoch 1 left out)" : "mean"}, {"values", values(*mean)}});
    int shown = 0;
    for (const auto& e : epochs) {
        if (e.breakdown.profiled <= 0 || ++shown > 12) continue;
        rows.push_back({{"label", "epoch " + std::to_string(e.epoch + 1)}, {"values", values(e.breakdown)}});
    }
    return {{"parts", parts}, {"rows", rows}, {"step_ms", mean->step_ms}};
}

json memoryJson(const std::optional<MemoryBreakdown>& memory) {
    if (!memory || memory->device.empty()) return nullptr;
    json parts = json::array();
    for (const auto& p : memoryParts(*memory))
        parts.push_back({{"key", p.key}, {"label", p.label}, {"bytes", p.value}});
    return {{"device", memory->device}, {"parts", parts}, {"peak_bytes", memory->peak_bytes},
            {"offloaded_bytes", memory->offloaded_bytes}};
}

}  // namespace

RunPage loadRunPage(const RunStore& store, int64_t run_id) {
    RunPage page;
    page.generated_from = store.path();
    auto summary = store.run(run_id);
    if (!summary) throw StoreError("No run #" + std::to_string(run_id) + " in '" + store.path() + "'.");
    page.run.summary = std::move(*summary);
    // Each part on its own: a damaged part leaves a note, and the rest of the run still shows.
    const auto attempt = [&page](const std::string& what, const auto& read) {
        try {
            read();
        } catch (const std::exception& e) {
            page.unreadable.push_back(what + " could not be read: " + e.what());
        }
    };
    attempt("The run's start record (effective settings, environment, class names)", [&] {
        if (auto started = store.runStarted(run_id)) page.run.started = std::move(*started);
    });
    attempt("The logged steps", [&] { page.steps = store.steps(run_id); });
    attempt("The epochs", [&] { page.run.epochs = store.epochs(run_id); });
    attempt("The validation report", [&] { page.run.val = store.report(run_id, "val"); });
    attempt("The test report", [&] { page.run.test = store.report(run_id, "test"); });
    attempt("The artifacts", [&] { page.run.artifacts = store.artifacts(run_id); });
    attempt("The per-process records", [&] { page.run.ranks = store.ranks(run_id); });
    attempt("The memory breakdown", [&] { page.run.memory = store.memoryBreakdown(run_id); });
    attempt("The device samples", [&] { page.run.devices = summarizeDevices(store.deviceSamples(run_id)); });

    page.samples_split = page.run.test ? "test" : page.run.val ? "val" : "test";
    attempt("The per-sample predictions", [&] {
        auto predictions = store.predictions(run_id, page.samples_split);
        page.predictions = static_cast<int64_t>(predictions.size());
        std::vector<Prediction> wrong;
        for (const auto& p : predictions)
            if (p.predicted != p.true_label) wrong.push_back(p);
        page.misclassified = static_cast<int64_t>(wrong.size());
        std::stable_sort(wrong.begin(), wrong.end(), [](const auto& a, const auto& b) { return a.confidence > b.confidence; });
        if (wrong.size() > kReportSampleCount) wrong.resize(kReportSampleCount);
        for (const auto& p : wrong) page.samples.push_back({p, std::nullopt, {}, {}});
    });
    return page;
}

std::vector<std::string> missingParts(const RunPage& page) {
    const RunSummary& s = page.run.summary;
    const std::string how = endedHow(s.status);
    const bool completed = s.status == "completed";
    std::vector<std::string> out;
    const EnvironmentInfo& env = page.run.started.environment;
    if (env.hearth_version.empty() && env.libtorch_version.empty())
        out.push_back("No environment, effective settings or class names: " +
                      (completed ? std::string("they were not stored") : how + " before training started") + ".");
    if (page.steps.empty())
        out.push_back("No logged training steps, so no step curves: " +
                      (completed ? std::string("none were stored") : how + " before its first logged step") + ".");
    if (page.run.epochs.empty())
        out.push_back("No finished epoch, so no validation curve and no epoch table" +
                      (completed ? std::string(".") : ": " + how + " during its first epoch."));
    if (!page.run.test) {
        if (completed && page.run.started.test_size == 0 && page.run.started.train_size > 0)
            out.push_back("No test report: the run had no test split.");
        else
            out.push_back("No test report: " + (completed ? std::string("none was stored") : how + " before testing") +
                          (page.run.val ? "; the classification report below is the validation split's." : "."));
    }
    if (!page.run.test && !page.run.val) out.push_back("No classification report or confusion matrix.");
    if ((page.run.test || page.run.val) && page.predictions == 0)
        out.push_back("No per-sample predictions were stored for the " + page.samples_split +
                      " split, so no misclassified samples are shown.");
    if (!page.samples_note.empty()) out.push_back(page.samples_note);
    if (!page.steps.empty() && !meanBreakdown(page.run.epochs))
        out.push_back("No step-time breakdown: no micro-batch of a finished epoch was profiled "
                      "(trainer.profile_every_n_steps is 0, or the run stopped during its first epoch).");
    if (!page.steps.empty() && (!page.run.memory || page.run.memory->device.empty()))
        out.push_back("No memory breakdown: it is measured when training ends (or the run was stored by an older Hearth).");
    if (!hasValidation(page) && !page.run.epochs.empty()) out.push_back("No validation split: no validation curve.");
    out.insert(out.end(), page.unreadable.begin(), page.unreadable.end());
    return out;
}

std::string runPageData(const RunPage& page) {
    const auto& steps = page.steps;
    html::NumberArray step, loss, accuracy, lr, sps, step_ms, wait_ms;
    for (auto* a : {&step, &loss, &accuracy, &lr, &sps, &step_ms, &wait_ms}) a->reserve(steps.size());
    for (const auto& s : steps) {
        step.addInteger(s.global_step);
        loss.add(s.loss);
        accuracy.add(s.accuracy);
        lr.add(s.lr);
        sps.add(s.samples_per_sec);
        step_ms.add(s.step_time_ms);
        wait_ms.add(s.data_wait_ms);
    }
    std::string out = "{\"kind\":\"run\",\"id\":" + std::to_string(page.run.summary.id) +
                      ",\"steps\":{\"n\":" + std::to_string(steps.size()) + ",\"step\":" + step.json() +
                      ",\"loss\":" + loss.json() + ",\"acc\":" + accuracy.json() + ",\"lr\":" + lr.json() +
                      ",\"sps\":" + sps.json() + ",\"step_ms\":" + step_ms.json() + ",\"wait_ms\":" + wait_ms.json() + "}";
    json epochs = {{"step", json::array()}, {"epoch", json::array()}, {"train_loss", json::array()},
                   {"train_acc", json::array()}, {"val_loss", json::array()}, {"val_acc", json::array()}};
    for (const auto& e : page.run.epochs) {
        epochs["step"].push_back(e.global_step);
        epochs["epoch"].push_back(e.epoch + 1);
        epochs["train_loss"].push_back(e.train_loss);
        epochs["train_acc"].push_back(e.train_accuracy);
        epochs["val_loss"].push_back(e.val_loss);
        epochs["val_acc"].push_back(e.val_accuracy);
    }
    epochs["has_val"] = hasValidation(page);
    json rest = {{"epochs", epochs}, {"breakdown", breakdownJson(page.run.epochs)}, {"memory", memoryJson(page.run.memory)}};
    // nlohmann writes non-finite numbers as null, which the charts read as gaps.
    const std::string tail = rest.dump(-1, ' ', false, json::error_handler_t::replace);
    return out + "," + tail.substr(1);   // merge the two objects: drop the second's "{"
}

std::string runPageTitle(const RunSummary& summary) { return "Run #" + std::to_string(summary.id) + " " + summary.name; }

void addImageFiles(RunPage& page, const std::vector<std::string>& files) {
    constexpr std::streamoff kMaxBytes = 4 << 20;
    int64_t outside = 0, unreadable = 0;
    for (auto& sample : page.samples) {
        const int64_t i = sample.prediction.index;
        if (i < 0 || i >= static_cast<int64_t>(files.size())) {
            ++outside;
            continue;
        }
        const std::string& path = files[static_cast<size_t>(i)];
        sample.text = path;
        std::ifstream in(path, std::ios::binary | std::ios::ate);
        const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
        if (size <= 0 || size > kMaxBytes) {
            ++unreadable;
            continue;
        }
        in.seekg(0);
        std::string bytes(static_cast<size_t>(size), '\0');
        in.read(bytes.data(), size);
        const bool png = bytes.rfind("\x89PNG", 0) == 0, jpeg = bytes.rfind("\xFF\xD8\xFF", 0) == 0;
        if (!in || (!png && !jpeg)) {
            ++unreadable;
            continue;
        }
        sample.image_url = std::string("data:image/") + (png ? "png" : "jpeg") + ";base64," + base64(bytes);
    }
    if (outside > 0)
        page.samples_note = std::to_string(outside) + " sample(s) lie beyond the " + std::to_string(files.size()) +
                            " images of the folder now: it is not the folder the run used.";
    else if (unreadable > 0)
        page.samples_note = std::to_string(unreadable) + " sample image(s) cannot be shown: missing, unreadable or "
                                                         "over 4 MiB.";
}

void addImageFolderFiles(RunPage& page, const std::string& root, bool test) {
    const ImageFolderLayout layout = scanImageFolder(root);
    std::vector<std::string> files;
    for (const auto& f : sourceFilesOf(layout, test)) files.push_back(f.path);
    addImageFiles(page, files);
}

}  // namespace hearth::report
