#include "engine/train/Checkpoint.h"

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

std::optional<CheckpointSaved> BestCheckpoint::offer(double value, int64_t epoch, const torch::nn::Module& model,
                                                     torch::optim::Optimizer& optimizer) {
    improved_last_ = isBetter(value);
    if (!improved_last_) {
        return std::nullopt;
    }
    return keep(value, epoch, model, optimizer);
}

std::optional<CheckpointSaved> BestCheckpoint::offerAlways(int64_t epoch, const torch::nn::Module& model,
                                                           torch::optim::Optimizer& optimizer) {
    improved_last_ = true;
    return keep(0.0, epoch, model, optimizer);
}

std::optional<CheckpointSaved> BestCheckpoint::keep(double value, int64_t epoch, const torch::nn::Module& model,
                                                    torch::optim::Optimizer& optimizer) {
    best_ = value;
    best_epoch_ = epoch;
    torch::NoGradGuard no_grad;
    state_.clear();
    for (const auto& p : model.named_parameters()) {
        state_.emplace_back(p.key(), p.value().detach().clone());
    }
    for (const auto& b : model.named_buffers()) {
        state_.emplace_back(b.key(), b.value().detach().clone());
    }
    if (directory_.empty()) {
        return std::nullopt;
    }
    std::filesystem::create_directories(directory_);
    const std::string file = path();
    saveCheckpointFile(file, model, &optimizer);
    CheckpointSaved saved;
    saved.path = file;
    saved.epoch = epoch;
    saved.monitor = config_.monitor;
    saved.value = value;
    saved.bytes = static_cast<int64_t>(std::filesystem::file_size(file));
    return saved;
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

void saveCheckpointFile(const std::string& path, const torch::nn::Module& model, torch::optim::Optimizer* optimizer) {
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive model_archive;
    model.save(model_archive);
    archive.write("model", model_archive);
    if (optimizer) {
        torch::serialize::OutputArchive optimizer_archive;
        optimizer->save(optimizer_archive);
        archive.write("optimizer", optimizer_archive);
    }
    archive.save_to(path);
}

void loadCheckpointFile(const std::string& path, torch::nn::Module& model) {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    model.load(model_archive);
}

}  // namespace hearth
