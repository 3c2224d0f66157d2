#include "engine/train/Checkpoint.h"

#include "engine/strategy/Strategy.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

namespace hearth {

BestCheckpoint::BestCheckpoint(CheckpointConfig config, std::string directory)
    : config_(std::move(config)), directory_(std::move(directory)) {
    if (config_.monitor != "val_acc" && config_.monitor != "val_loss") {
        throw ConfigError("trainer.checkpoint.monitor", "use val_acc or val_loss, got '" + config_.monitor + "'");
    }
    if (config_.mode != "max" && config_.mode != "min") {
        throw ConfigError("trainer.checkpoint.mode", "use max or min, got '" + config_.mode + "'");
    }
}

bool BestCheckpoint::isBetter(double value) const {
    if (std::isnan(value)) {
        return false;
    }
    if (!best_) {
        return true;
    }
    return config_.mode == "max" ? value > *best_ : value < *best_;
}

std::string BestCheckpoint::path() const {
    return directory_.empty() ? std::string() : (std::filesystem::path(directory_) / "best.pt").string();
}

void BestCheckpoint::onValidationEnd(TrainerContext& ctx, EpochEnd& epoch) {
    if (!epoch.has_val) {
        // Without a validation split every epoch replaces the snapshot: the last epoch wins.
        epoch.is_best = true;
        keep(ctx, 0.0);
        return;
    }
    const double value = config_.monitor == "val_loss" ? epoch.val_loss : epoch.val_accuracy;
    epoch.is_best = isBetter(value);
    if (epoch.is_best) {
        keep(ctx, value);
    }
}

void BestCheckpoint::keep(TrainerContext& ctx, double value) {
    best_ = value;
    best_epoch_ = ctx.state().epoch;
    ctx.state().best_value = best_;
    ctx.state().best_epoch = best_epoch_;
    const auto& model = ctx.model();
    {
        torch::NoGradGuard no_grad;
        state_.clear();
        for (const auto& p : model.named_parameters()) {
            state_.emplace_back(p.key(), p.value().detach().clone());
        }
        for (const auto& b : model.named_buffers()) {
            state_.emplace_back(b.key(), b.value().detach().clone());
        }
    }
    // Every rank takes part (a sharded optimizer gathers its shares); rank 0 alone writes.
    const std::string file = ctx.strategy().isGlobalZero() ? path() : std::string();
    if (!file.empty()) std::filesystem::create_directories(directory_);
    ctx.strategy().saveCheckpoint(file, model, &ctx.optimizer());
    if (file.empty()) {
        return;
    }
    CheckpointSaved saved;
    saved.path = file;
    saved.epoch = best_epoch_;
    saved.monitor = config_.monitor;
    saved.value = value;
    saved.bytes = static_cast<int64_t>(std::filesystem::file_size(file));
    ctx.emit(saved);
}

void BestCheckpoint::onTestStart(TrainerContext& ctx) {
    if (!hasState()) {
        return;
    }
    restore(ctx.model());
    ctx.log(LogLine::Level::Info, "testing the best checkpoint (epoch " + std::to_string(best_epoch_ + 1) + ", " +
                                      config_.monitor + ")");
}

void BestCheckpoint::restore(torch::nn::Module& model) const {
    if (state_.empty()) {
        return;
    }
    torch::NoGradGuard no_grad;
    auto params = model.named_parameters();
    auto buffers = model.named_buffers();
    for (const auto& [name, tensor] : state_) {
        if (auto* p = params.find(name)) {
            p->copy_(tensor);
        } else if (auto* b = buffers.find(name)) {
            b->copy_(tensor);
        }
    }
}

std::string BestCheckpoint::stateJson() const {
    nlohmann::json j;
    j["best"] = best_ ? nlohmann::json(*best_) : nlohmann::json(nullptr);
    j["best_epoch"] = best_epoch_;
    return j.dump();
}

void BestCheckpoint::loadState(TrainerContext& ctx, const std::string& json) {
    const auto j = nlohmann::json::parse(json);
    best_ = j.at("best").is_null() ? std::nullopt : std::optional<double>(j.at("best").get<double>());
    best_epoch_ = j.at("best_epoch").get<int64_t>();
    state_.clear();
    const std::string file = path();
    std::error_code ec;
    if (!best_ || file.empty() || !std::filesystem::exists(file, ec)) {
        if (best_) ctx.log(LogLine::Level::Warning, "the best checkpoint's weights were not kept (no best.pt): the "
                                                    "test uses the best epoch after resuming, or the last");
        best_.reset();   // the next validated epoch becomes the best
        return;
    }
    // The snapshot as it was: best.pt's model part, read through the model itself (whose own
    // tensors, the resumed ones, are put back afterwards).
    auto& model = ctx.model();
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> current;
    for (const auto& t : model.parameters()) current.push_back(t.detach().clone());
    for (const auto& t : model.buffers()) current.push_back(t.detach().clone());
    loadCheckpointFile(file, model);
    for (const auto& p : model.named_parameters()) state_.emplace_back(p.key(), p.value().detach().clone());
    for (const auto& b : model.named_buffers()) state_.emplace_back(b.key(), b.value().detach().clone());
    size_t i = 0;
    for (auto& t : model.parameters()) t.copy_(current[i++]);
    for (auto& t : model.buffers()) t.copy_(current[i++]);
}

}  // namespace hearth
