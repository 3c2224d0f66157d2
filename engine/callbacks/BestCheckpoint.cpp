#include "engine/callbacks/BestCheckpoint.h"

#include "engine/strategy/Strategy.h"
#include "engine/train/TrainingState.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

namespace hearth {
namespace {

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

// The model's parameters and buffers, copied to the host.
NamedTensors hostCopy(const torch::nn::Module& model) {
    torch::NoGradGuard no_grad;
    const auto host = torch::TensorOptions().device(torch::kCPU);
    NamedTensors out;
    for (const auto& p : model.named_parameters()) out.emplace_back(p.key(), p.value().detach().to(host, false, true));
    for (const auto& b : model.named_buffers()) out.emplace_back(b.key(), b.value().detach().to(host, false, true));
    return out;
}

// Named tensors copied into the model's own (onto its device).
void copyInto(const NamedTensors& tensors, torch::nn::Module& model) {
    torch::NoGradGuard no_grad;
    auto params = model.named_parameters();
    auto buffers = model.named_buffers();
    for (const auto& [name, tensor] : tensors) {
        if (auto* p = params.find(name)) {
            p->copy_(tensor);
        } else if (auto* b = buffers.find(name)) {
            b->copy_(tensor);
        }
    }
}

// best.pt's model part (read on the host) copied into the model's own tensors.
void copyFromFile(const std::string& file, torch::nn::Module& model) {
    torch::serialize::InputArchive archive;
    archive.load_from(file, torch::Device(torch::kCPU));
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    copyModelTensors(model_archive, model);
}

}  // namespace

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
    state_.clear();
    const WeightsAccess weights(ctx.strategy(), /*writes=*/false);
    // Every rank takes part (a sharded optimizer gathers its shares); rank 0 alone writes.
    const std::string file = ctx.strategy().isGlobalZero() ? path() : std::string();
    if (!file.empty()) std::filesystem::create_directories(directory_);
    ctx.strategy().saveCheckpoint(file, model, &ctx.optimizer());
    on_disk_ = !file.empty();
    if (!on_disk_) {
        state_ = hostCopy(model);
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
    {
        const WeightsAccess weights(ctx.strategy(), /*writes=*/true);
        restore(ctx.model());
    }
    ctx.log(LogLine::Level::Info, "testing the best checkpoint (epoch " + std::to_string(best_epoch_ + 1) + ", " +
                                      config_.monitor + ")");
}

void BestCheckpoint::restore(torch::nn::Module& model) const {
    if (on_disk_) {
        copyFromFile(path(), model);
        return;
    }
    copyInto(state_, model);
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
    on_disk_ = false;
    const std::string file = path();
    std::error_code ec;
    if (!best_ || file.empty() || !std::filesystem::exists(file, ec)) {
        if (best_) ctx.log(LogLine::Level::Warning, "the best checkpoint's weights were not kept (no best.pt): the "
                                                    "test uses the best epoch after resuming, or the last");
        best_.reset();   // the next validated epoch becomes the best
        return;
    }
    const WeightsAccess weights(ctx.strategy(), /*writes=*/true);   // every rank, before they part
    if (ctx.strategy().isGlobalZero()) {
        on_disk_ = true;  // the rank that writes best.pt reads it back before the test
        return;
    }
    // Another rank keeps a host copy, as it did before the interruption: best.pt's model part, read
    // through the model itself (whose own tensors, the resumed ones, are put back afterwards).
    auto& model = ctx.model();
    const NamedTensors current = hostCopy(model);
    copyFromFile(file, model);
    state_ = hostCopy(model);
    copyInto(current, model);
}

}  // namespace hearth
