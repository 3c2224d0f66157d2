#include "engine/callbacks/SafetyCheckpoint.h"

#include "engine/strategy/Strategy.h"
#include "engine/train/TrainingState.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace hearth {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

int64_t stepOf(const std::string& file) {
    return trainingStateStep(file);
}

std::string megabytes(int64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
    return text;
}

}  // namespace

SafetyCheckpoint::SafetyCheckpoint(SafetyCheckpointConfig config, std::string directory)
    : config_(config), directory_(std::move(directory)) {}

void SafetyCheckpoint::onFitStart(TrainerContext& ctx) {
    last_save_ = Clock::now();
    // Rank 0 has a folder or not; every rank learns which (one collective, data-parallel only).
    const Strategy& strategy = ctx.strategy();
    enabled_ = strategy.worldSize() > 1 ? strategy.agreeToStop(writes(ctx)) : !directory_.empty();
    // States already here (a resumed run's): pruned with the new ones, oldest first.
    kept_ = writes(ctx) ? trainingStatesIn(directory_) : std::vector<std::string>{};
    std::reverse(kept_.begin(), kept_.end());
    last_step_ = kept_.empty() ? -1 : stepOf(kept_.back());
    attempted_ = {-1, last_step_};
}

void SafetyCheckpoint::loadState(TrainerContext& ctx, const std::string&) {
    const int64_t resumed_at = ctx.state().global_step;
    last_step_ = resumed_at;
    attempted_ = {ctx.state().epoch, resumed_at};
    if (!writes(ctx)) return;
    std::vector<std::string> kept;
    CheckpointSaved gone;   // no new file: the record of the deleted ones
    gone.kind = "state";
    for (const auto& path : kept_) {
        std::error_code ec;
        if (stepOf(path) <= resumed_at)
            kept.push_back(path);
        else if (fs::remove(path, ec))
            gone.removed.push_back(path);
    }
    kept_ = std::move(kept);
    if (!gone.removed.empty()) ctx.emit(gone);
}

bool SafetyCheckpoint::writes(TrainerContext& ctx) const {
    return ctx.strategy().isGlobalZero() && !directory_.empty();
}

bool SafetyCheckpoint::due(TrainerContext& ctx) const {
    const int64_t step = ctx.state().global_step;
    if (step <= std::max<int64_t>(last_step_, 0)) return false;
    if (config_.every_n_steps > 0 && step - std::max<int64_t>(last_step_, 0) >= config_.every_n_steps) return true;
    return config_.every_n_minutes > 0.0 &&
           std::chrono::duration<double>(Clock::now() - last_save_).count() >= config_.every_n_minutes * 60.0;
}

void SafetyCheckpoint::onTrainBatchEnd(TrainerContext& ctx) {
    if (!enabled_ || !ctx.canSaveState()) return;
    // A stop saves in onTrainStopped, which the Trainer calls wherever a stop ends the fit.
    bool wanted = due(ctx);
    if (ctx.strategy().worldSize() > 1) wanted = ctx.strategy().agreeToStop(wanted);
    if (wanted) save(ctx, /*on_stop=*/false);
}

void SafetyCheckpoint::onTrainStopped(TrainerContext& ctx) {
    if (!enabled_) return;
    save(ctx, /*on_stop=*/true);
    if (writes(ctx) && last_step_ != ctx.state().global_step) {
        const std::string from = last_step_ >= 0 ? "optimizer step " + std::to_string(last_step_)
                                                 : "the start (no training state was saved)";
        const int64_t group = std::max<int64_t>(ctx.config().trainer.accumulate_grad_batches, 1);
        const std::string where = ctx.state().batch_in_epoch % group != 0 ? "stopped inside an accumulation group"
                                                                          : "no training state could be saved here";
        ctx.log(LogLine::Level::Warning, where + ": a resume continues from " + from);
    }
}

void SafetyCheckpoint::save(TrainerContext& ctx, bool on_stop) {
    const int64_t step = ctx.state().global_step;
    // Every rank takes this decision alike: a collective follows. A stop after an epoch's
    // validation is a new point at the same step: its state replaces the one saved at the
    // epoch's end (same file).
    const std::pair<int64_t, int64_t> point{ctx.state().epoch, step};
    if (point == attempted_ || step == 0 || !ctx.canSaveState()) return;
    attempted_ = point;
    const bool writer = writes(ctx);
    const std::string path = writer ? (fs::path(directory_) / trainingStateFileName(step)).string() : std::string();
    const auto start = Clock::now();
    try {
        std::error_code ec;
        if (writer) fs::create_directories(directory_, ec);
        ctx.saveState(path);
        if (!writer) {                      // this rank's part went to rank 0
            last_save_ = Clock::now();
            last_step_ = step;
            return;
        }
    } catch (const TrainingStateError& e) {
        // Training goes on without its safety net rather than failing over it.
        ctx.log(LogLine::Level::Warning, std::string("safety checkpoint not written: ") + e.what());
        last_save_ = Clock::now();
        return;
    }
    last_save_ = Clock::now();
    last_step_ = step;
    if (std::find(kept_.begin(), kept_.end(), path) == kept_.end()) kept_.push_back(path);
    CheckpointSaved saved;
    saved.kind = "state";
    saved.path = path;
    saved.epoch = ctx.state().epoch;
    std::error_code ec;
    saved.bytes = static_cast<int64_t>(fs::file_size(path, ec));
    const size_t keep = static_cast<size_t>(std::max<int64_t>(config_.keep_last, 1));
    while (kept_.size() > keep) {
        if (fs::remove(kept_.front(), ec)) saved.removed.push_back(kept_.front());
        kept_.erase(kept_.begin());
    }
    ctx.emit(saved);
    const double ms = std::chrono::duration<double, std::milli>(last_save_ - start).count();
    ctx.log(on_stop ? LogLine::Level::Info : LogLine::Level::Debug,
            "training state saved at optimizer step " + std::to_string(step) + " (" + megabytes(saved.bytes) + ", " +
                std::to_string(static_cast<int64_t>(ms)) + " ms)" + (on_stop ? ": a resume continues from here" : ""));
}

}  // namespace hearth
