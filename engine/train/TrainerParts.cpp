#include "engine/train/TrainerParts.h"

#include "engine/callbacks/BestCheckpoint.h"
#include "engine/callbacks/DeviceStatsMonitor.h"
#include "engine/callbacks/EarlyStopping.h"
#include "engine/callbacks/SafetyCheckpoint.h"
#include "engine/data/Augment.h"
#include "engine/monitor/DeviceMonitor.h"

namespace hearth {

TrainerParts defaultTrainerParts(const ExperimentConfig& config, torch::Device device,
                                 const std::string& artifacts_dir) {
    TrainerParts parts;
    parts.strategy = createStrategy(config.trainer, device);
    parts.task = std::make_unique<ClassificationTask>();
    if (const auto peak = devicePeakFlops(parts.strategy->device(), config.trainer.precision, config.trainer.tf32))
        parts.peak_flops = peak->tflops * 1e12;
    // First: its baseline is taken before any other callback starts, and it samples every batch.
    parts.callbacks.push_back(std::make_shared<DeviceStatsMonitor>(parts.strategy->device()));
    parts.callbacks.push_back(std::make_shared<BestCheckpoint>(config.trainer.checkpoint, artifacts_dir));
    // After the checkpoint: the epoch that ends the fit has already been considered as the best.
    if (config.trainer.early_stopping.monitor != "none")
        parts.callbacks.push_back(std::make_shared<EarlyStopping>(config.trainer.early_stopping));
    // Data-parallel: on every rank (saving a state is a collective), rank 0 alone writes.
    if (config.trainer.safety_checkpoint.keep_last > 0 && (!artifacts_dir.empty() || parts.strategy->worldSize() > 1))
        parts.callbacks.push_back(std::make_shared<SafetyCheckpoint>(config.trainer.safety_checkpoint, artifacts_dir));
    return parts;
}

LoaderOptions trainLoaderOptions(const ExperimentConfig& config, const Strategy& strategy) {
    LoaderOptions options = strategy.loaderOptions(config.trainer, true, config.seed);
    if (auto augment = std::make_shared<ImageAugment>(config.data.augment); augment->active())
        options.augment = std::move(augment);
    // Only text samples differ in length; other data keeps the plain shuffled plan.
    options.bucket_by_length = config.data.bucket_by_length && isTextKind(config.data.kind);
    options.resident = config.data.on_device;
    return options;
}

torch::Tensor TrainingStep::microBatch(const Batch& batch, int64_t group_size, bool closes_group,
                                       MetricsLogger& metrics, const std::function<void(Section)>& after_phase) {
    torch::Tensor loss = computeMicroBatch(batch, group_size, closes_group, metrics, after_phase);
    metrics.count(batch.size());
    return loss;
}

torch::Tensor TrainingStep::computeMicroBatch(const Batch& batch, int64_t group_size, bool closes_group,
                                              MetricsLogger& metrics, const std::function<void(Section)>& after_phase) {
    torch::Tensor loss;
    {
        ScopedSection section(profiler_, Section::Forward);
        const torch::Tensor output = strategy_.forward(model_, batch);
        loss = task_.loss(output, batch);
        metrics.accumulate(loss, task_.predict(output.detach()), task_.targets(batch));
    }
    if (after_phase) after_phase(Section::Forward);
    {
        ScopedSection section(profiler_, Section::Backward);
        strategy_.backward(group_size == 1 ? loss : loss / static_cast<double>(group_size), closes_group);
    }
    if (after_phase) after_phase(Section::Backward);
    return loss;
}

void TrainingStep::optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) {
    ScopedSection section(profiler_, Section::OptimizerStep);
    strategy_.optimizerStep(optimizer, clip_val);
}

}  // namespace hearth
