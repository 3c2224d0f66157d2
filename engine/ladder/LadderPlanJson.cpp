// The plan's names, its JSON form and the steps' references: torch-free (hearth_engine_api), so the
// store's readers can read and judge a sweep's plan without the training engine.
#include "engine/ladder/LadderPlan.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace hearth {

size_t ladderReferenceStep(const std::vector<LadderStep>& steps, size_t k) {
    if (k < steps.size() && steps[k].alone) return 0;
    size_t ref = 0;
    for (size_t i = 1; i < k && i < steps.size(); ++i)
        if (steps[i].kept) ref = i;
    return ref;
}

std::optional<LadderGoal> ladderGoalFromName(const std::string& name) {
    if (name == "epochs") return LadderGoal::Epochs;
    if (name == "accuracy") return LadderGoal::Accuracy;
    return std::nullopt;
}

std::string ladderGoalName(LadderGoal goal) {
    return goal == LadderGoal::Accuracy ? "accuracy" : "epochs";
}

std::optional<double> timeToAccuracy(const std::vector<EpochMetrics>& epochs, double target) {
    double seconds = 0.0;
    for (const auto& e : epochs) {
        seconds += e.epoch_time_s;
        if (e.val_accuracy >= target) return seconds;
    }
    return std::nullopt;
}

std::optional<LadderOrder> ladderOrderFromName(const std::string& name) {
    if (name == "cumulative") return LadderOrder::Cumulative;
    if (name == "alone") return LadderOrder::Alone;
    return std::nullopt;
}

std::string ladderOrderName(LadderOrder order) {
    return order == LadderOrder::Alone ? "alone" : "cumulative";
}

std::string ladderPlanJson(const LadderPlan& plan, const std::vector<LadderStep>& steps) {
    nlohmann::json j;
    j["order"] = ladderOrderName(plan.order);
    j["repeats"] = plan.repeats;
    j["rungs"] = plan.rungs ? nlohmann::json(*plan.rungs) : nlohmann::json(nullptr);
    j["target_batch"] = plan.target_batch ? nlohmann::json(*plan.target_batch) : nlohmann::json(nullptr);
    j["loader_workers"] = plan.loader_workers;
    j["goal"] = ladderGoalName(plan.goal);
    j["cap_epochs"] = plan.cap_epochs;
    j["accuracy_target"] = plan.accuracy_target ? nlohmann::json(*plan.accuracy_target) : nlohmann::json(nullptr);
    j["device_memory_bytes"] =
        plan.device_memory_bytes ? nlohmann::json(*plan.device_memory_bytes) : nlohmann::json(nullptr);
    auto& list = j["steps"] = nlohmann::json::array();
    for (const auto& s : steps) {
        nlohmann::json step{{"label", s.label}, {"short_name", s.short_name}, {"change", s.change},
                            {"optional", s.optional}, {"alone", s.alone}, {"kept", s.kept}};
        if (s.prediction) step["prediction"] = nlohmann::json::parse(footprintJson(*s.prediction));
        if (!s.not_run.empty()) step["not_run"] = s.not_run;
        list.push_back(std::move(step));
    }
    return j.dump();
}

StoredLadderPlan ladderPlanFromJson(const std::string& text) {
    StoredLadderPlan out;
    try {
        const auto j = nlohmann::json::parse(text);
        out.plan.order = ladderOrderFromName(j.at("order").get<std::string>()).value_or(LadderOrder::Cumulative);
        out.plan.repeats = j.at("repeats").get<int64_t>();
        if (!j.at("rungs").is_null()) out.plan.rungs = j.at("rungs").get<std::vector<std::string>>();
        if (!j.at("target_batch").is_null()) out.plan.target_batch = j.at("target_batch").get<int64_t>();
        out.plan.loader_workers = j.value("loader_workers", int64_t(2));
        out.plan.goal = ladderGoalFromName(j.value("goal", std::string("epochs"))).value_or(LadderGoal::Epochs);
        out.plan.cap_epochs = j.value("cap_epochs", int64_t(0));
        if (j.contains("accuracy_target") && !j.at("accuracy_target").is_null())
            out.plan.accuracy_target = j.at("accuracy_target").get<double>();
        if (j.contains("device_memory_bytes") && !j.at("device_memory_bytes").is_null())
            out.plan.device_memory_bytes = j.at("device_memory_bytes").get<int64_t>();
        for (const auto& s : j.at("steps")) {
            LadderStep step;
            step.label = s.at("label").get<std::string>();
            step.short_name = s.at("short_name").get<std::string>();
            step.change = s.at("change").get<std::string>();
            step.optional = s.value("optional", false);
            step.alone = s.value("alone", false);
            step.kept = s.value("kept", true);
            if (s.contains("prediction")) step.prediction = footprintFromJson(s.at("prediction").dump());
            step.not_run = s.value("not_run", std::string());
            out.steps.push_back(std::move(step));
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("not a ladder plan: ") + e.what());
    }
    return out;
}

}  // namespace hearth
