#include "engine/callbacks/EarlyStopping.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace hearth {
namespace {

std::string number(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", v);
    return text;
}

}  // namespace

EarlyStopping::EarlyStopping(EarlyStoppingConfig config) : config_(std::move(config)) {
    if (config_.monitor != "val_loss" && config_.monitor != "val_acc")
        throw ConfigError("trainer.early_stopping.monitor", "use none, val_loss or val_acc, got '" + config_.monitor + "'");
    if (config_.mode == "auto") {
        lower_is_better_ = config_.monitor == "val_loss";
    } else if (config_.mode == "min" || config_.mode == "max") {
        lower_is_better_ = config_.mode == "min";
    } else {
        throw ConfigError("trainer.early_stopping.mode", "use auto, min or max, got '" + config_.mode + "'");
    }
}

std::optional<std::string> EarlyStopping::observe(double value, int64_t epoch) {
    if (!std::isfinite(value))
        return "early stopping: " + config_.monitor + " is " + number(value) + " at epoch " + std::to_string(epoch + 1);
    if (config_.stop_at && (lower_is_better_ ? value <= *config_.stop_at : value >= *config_.stop_at))
        return "reached " + config_.monitor + " " + number(value) + " (trainer.early_stopping.stop_at " +
               number(*config_.stop_at) + ") at epoch " + std::to_string(epoch + 1);
    const bool improved = !best_ || (lower_is_better_ ? value < *best_ - config_.min_delta
                                                      : value > *best_ + config_.min_delta);
    if (improved) {
        best_ = value;
        best_epoch_ = epoch;
        epochs_without_improvement_ = 0;
        return std::nullopt;
    }
    if (++epochs_without_improvement_ < config_.patience) return std::nullopt;
    return "early stopping: " + config_.monitor + " did not " + (lower_is_better_ ? "fall" : "rise") +
           (config_.min_delta > 0.0 ? " by more than " + number(config_.min_delta) : std::string()) + " for " +
           std::to_string(epochs_without_improvement_) + " epoch(s); best " + number(*best_) + " at epoch " +
           std::to_string(best_epoch_ + 1);
}

void EarlyStopping::onValidationEnd(TrainerContext& ctx, EpochEnd& epoch) {
    if (!epoch.has_val) return;
    const double value = config_.monitor == "val_loss" ? epoch.val_loss : epoch.val_accuracy;
    if (auto reason = observe(value, ctx.state().epoch)) ctx.finishEarly(*reason);
}

std::string EarlyStopping::stateJson() const {
    nlohmann::json j;
    j["best"] = best_ ? nlohmann::json(*best_) : nlohmann::json(nullptr);
    j["best_epoch"] = best_epoch_;
    j["epochs_without_improvement"] = epochs_without_improvement_;
    return j.dump();
}

void EarlyStopping::loadState(TrainerContext& /*ctx*/, const std::string& json) {
    const auto j = nlohmann::json::parse(json);
    best_ = j.at("best").is_null() ? std::nullopt : std::optional<double>(j.at("best").get<double>());
    best_epoch_ = j.at("best_epoch").get<int64_t>();
    epochs_without_improvement_ = j.at("epochs_without_improvement").get<int64_t>();
}

}  // namespace hearth
