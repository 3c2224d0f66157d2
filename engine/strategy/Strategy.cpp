#include "engine/strategy/Strategy.h"

#include "engine/TorchCompat.h"
#ifdef HEARTH_WITH_C10D
#include "engine/dist/Rendezvous.h"
#include "engine/strategy/DdpStrategy.h"
#include "engine/strategy/PipelineStrategy.h"
#include "engine/strategy/Zero2Strategy.h"
#include "engine/strategy/Zero3Strategy.h"
#endif
#include "engine/config/NoEffectRules.h"
#include "engine/strategy/CheckpointFile.h"
#include "engine/optim/Optimizers.h"

#include <chrono>
#include <cmath>
#include <exception>

namespace hearth {
namespace {

// Stores channels_last copies of 4-D weights, so convolutions run NHWC end to end.
void toChannelsLast(torch::nn::Module& model) {
    torch::NoGradGuard no_grad;
    for (auto& p : model.parameters()) {
        if (p.dim() == 4) {
            p.set_data(p.data().contiguous(at::MemoryFormat::ChannelsLast));
        }
    }
}

}  // namespace

Strategy::Strategy(std::unique_ptr<Precision> precision) : precision_(std::move(precision)) {}

Strategy::~Strategy() = default;

void Strategy::setupModel(ClassifierImpl& model, bool channels_last) {
    model.to(device());
    channels_last_ = channels_last && model.isConvolutional();
    if (channels_last_) {
        toChannelsLast(model);
    }
    first_bad_step_ = torch::zeros({1}, torch::TensorOptions().dtype(torch::kInt64).device(device()));
}

std::unique_ptr<torch::optim::Optimizer> Strategy::setupOptimizer(const OptimizerConfig& config,
                                                                  ClassifierImpl& model) {
    return createOptimizer(config, model.parameters());
}

LoaderOptions Strategy::loaderOptions(const TrainerConfig& t, bool shuffle, uint64_t seed) const {
    LoaderOptions o;
    o.batch_size = t.batch_size;
    o.shuffle = shuffle;
    o.seed = seed;
    o.num_workers = t.num_workers;
    o.prefetch_factor = t.prefetch_factor;
    o.persistent_workers = t.persistent_workers;
    o.pin_memory = t.pin_memory;
    o.device = device();
    // On a GPU images travel as uint8 and are normalised there; with pinned memory the loader
    // copies each next batch on a copy stream while the step computes. Elsewhere toDevice() copies.
    o.raw_inputs = device().is_cuda();
    o.copy_to_device = device().is_cuda() && t.pin_memory;
    o.rank = rank();
    o.world_size = worldSize();
    return o;
}

Batch Strategy::toDevice(const Batch& batch, bool pinned) const {
    // Fields already there (the loader's device batches) are not copied again.
    Batch out = onDevice(batch, device(), pinned);
    if (!channels_last_) return out;
    // Images (float [B, C, H, W]) follow the weights' NHWC layout.
    return out.map([](const std::string&, const torch::Tensor& t) {
        return t.dim() == 4 && t.is_floating_point() ? t.contiguous(at::MemoryFormat::ChannelsLast) : t;
    });
}

torch::Tensor Strategy::forward(ClassifierImpl& model, const Batch& batch) {
    return precision_->forward(model, batch);
}

void Strategy::backward(const torch::Tensor& loss, bool /*closes_group*/) {
    precision_->backward(loss);
}

void Strategy::optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) {
    precision_->optimizerStep(optimizer, clip_val);
    zeroGrad(optimizer);
}

void Strategy::zeroGrad(torch::optim::Optimizer& optimizer) {
    compat::clearGradients(optimizer, grads_to_none_);
}

void Strategy::reduceSum(std::vector<double>& /*values*/) const {}

bool Strategy::watchLoss(const torch::Tensor& loss, int64_t step) {
    if (precision_->scalesLoss()) {
        return false;
    }
    if (loss.device().is_cpu()) {
        // Reading a CPU scalar costs nothing, and failing at once names the exact step.
        if (std::isfinite(loss.item<double>())) {
            return false;
        }
        if (first_bad_step_.item<int64_t>() == 0) {
            first_bad_step_.fill_(step);
        }
        return true;
    }
    // On an accelerator: recorded on the device without a sync.
    torch::NoGradGuard no_grad;
    first_bad_step_.masked_fill_(firstNonFinite(loss), step);
    return false;
}

torch::Tensor Strategy::firstNonFinite(const torch::Tensor& loss) const {
    return torch::logical_and(torch::logical_not(torch::isfinite(loss.detach())), first_bad_step_.eq(0));
}

void Strategy::watchLossOnDevice(const torch::Tensor& loss, const torch::Tensor& step) {
    if (precision_->scalesLoss()) return;
    torch::NoGradGuard no_grad;
    // where(), not masked_fill_ with a tensor value (which reads the value on the host).
    first_bad_step_.copy_(torch::where(firstNonFinite(loss), step, first_bad_step_));
}

int64_t Strategy::firstNonFiniteStep() {
    if (precision_->scalesLoss() || !first_bad_step_.defined()) {
        return 0;
    }
    return first_bad_step_.item<int64_t>();
}

void Strategy::saveCheckpoint(const std::string& path, const torch::nn::Module& model,
                              torch::optim::Optimizer* optimizer) const {
    if (!path.empty()) saveCheckpointFile(path, model, optimizer);
}

void Strategy::loadCheckpoint(const std::string& path, torch::nn::Module& model) const {
    loadCheckpointFile(path, model);
}

SingleDeviceStrategy::SingleDeviceStrategy(torch::Device device, const std::string& precision)
    : Strategy(std::make_unique<Precision>(precision, device)), device_(device) {}

std::string SingleDeviceStrategy::describe() const {
    return "single device (" + device_.str() + ")";
}

WeightsAccess::WeightsAccess(Strategy& strategy, bool writes)
    : strategy_(strategy), writes_(writes), exceptions_(std::uncaught_exceptions()) {
    strategy_.gatherWeights();
}

WeightsAccess::~WeightsAccess() {
    strategy_.releaseWeights(writes_ && std::uncaught_exceptions() == exceptions_);
}

namespace {

std::unique_ptr<Strategy> createFor(const TrainerConfig& trainer, torch::Device device) {
    // validate() says why; this guards callers that skip it.
    if (trainer.offload_optimizer && !shardsOptimizerState(trainer.strategy)) {
        throw ConfigError("trainer.offload_optimizer", "needs a sharded optimizer: trainer.strategy zero1, zero2 or zero3");
    }
    if (trainer.strategy == "auto") {
        if (trainer.devices.value_or(1) * trainer.num_nodes != 1) {
            throw ConfigError("trainer.devices", "several devices need a distributed strategy (trainer.strategy=ddp)");
        }
        return std::make_unique<SingleDeviceStrategy>(device, trainer.precision);
    }
    if (trainer.strategy == "ddp" || trainer.strategy == "zero1" || trainer.strategy == "zero2" ||
        trainer.strategy == "zero3" || trainer.strategy == "pipeline") {
#ifdef HEARTH_WITH_C10D
        // The launcher's world (torchrun, srun, Hearth's own), else a world of one on this host.
        dist::DistEnv env;
        try {
            if (auto launched = dist::readDistEnv()) env = *launched;
        } catch (const std::invalid_argument& e) {
            throw ConfigError("trainer.strategy", e.what());
        }
        // The launcher decides the world; a device count that contradicts it is a mistake.
        if (trainer.devices && *trainer.devices > 1 && *trainer.devices != env.local_world_size) {
            throw ConfigError("trainer.devices", "is " + std::to_string(*trainer.devices) + " but " +
                                                     std::to_string(env.local_world_size) +
                                                     " processes were started on this machine");
        }
        if (trainer.num_nodes > 1 && env.world_size != env.local_world_size * trainer.num_nodes) {
            throw ConfigError("trainer.num_nodes", "is " + std::to_string(trainer.num_nodes) + " but the launcher "
                                                   "started " + std::to_string(env.world_size) + " processes in all, " +
                                                   std::to_string(env.local_world_size) + " on this node");
        }
        dist::GroupOptions group;
        group.backend = trainer.ddp.backend == "auto" ? (device.is_cuda() ? "nccl" : "gloo") : trainer.ddp.backend;
        group.timeout = std::chrono::seconds(trainer.ddp.timeout_s);
        if (device.is_cuda()) {
            // One GPU per local rank; over Gloo ranks may share GPUs (validate() refuses it for NCCL).
            const int64_t gpus = std::max<int64_t>(static_cast<int64_t>(torch::cuda::device_count()), 1);
            device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank % gpus));
        }
        auto group_of_ranks = dist::ProcessGroup::join(env, group);
        std::unique_ptr<DistributedStrategy> strategy;
        if (trainer.strategy == "zero2") {
            auto zero2 = std::make_unique<Zero2Strategy>(std::move(group_of_ranks), device, trainer.precision);
            zero2->setReduceBucketBytes(static_cast<int64_t>(trainer.ddp.bucket_cap_mb * 1024 * 1024));
            strategy = std::move(zero2);
        } else if (trainer.strategy == "pipeline") {
            strategy = std::make_unique<PipelineStrategy>(std::move(group_of_ranks), device, trainer.precision,
                                                          trainer.pipeline.micro_batches, trainer.pipeline.stage_blocks);
        } else if (trainer.strategy == "zero3") {
            strategy = std::make_unique<Zero3Strategy>(std::move(group_of_ranks), device, trainer.precision,
                                                       trainer.fsdp.blocks_per_unit, trainer.fsdp.prefetch);
        } else {
            dist::ReducerOptions reducer;
            reducer.bucket_cap_mb = trainer.ddp.bucket_cap_mb;
            reducer.find_unused_parameters = trainer.ddp.find_unused_parameters;
            reducer.gradient_as_bucket_view = trainer.ddp.gradient_as_bucket_view;
            strategy = std::make_unique<DdpStrategy>(std::move(group_of_ranks), device, trainer.precision, reducer,
                                                     /*shard_optimizer=*/trainer.strategy == "zero1");
        }
        strategy->setOffloadOptimizer(trainer.offload_optimizer);
        return strategy;
#else
        throw ConfigError("trainer.strategy", trainer.strategy + " needs PyTorch's distributed engine (c10d), which "
                                              "this build of Hearth does not have; use auto");
#endif
    }
    throw ConfigError("trainer.strategy", "'" + trainer.strategy + "' is not available in this version of Hearth; "
                                          "use auto, ddp, zero1, zero2, zero3 or pipeline");
}

}  // namespace

std::unique_ptr<Strategy> createStrategy(const TrainerConfig& trainer, torch::Device device) {
    auto strategy = createFor(trainer, device);
    strategy->setGradsToNone(trainer.set_grads_to_none);
    return strategy;
}

}  // namespace hearth
