#pragma once
// Strategy: how a step runs on the hardware, as in Lightning's strategies. It owns device
// placement and the Precision object; runs backward, gradient clipping, the optimizer step and
// zeroing gradients; reduces metrics across ranks; makes every rank agree on stopping; and
// writes and reads checkpoints. The Trainer's loop calls only this interface, so distributed
// strategies (DDP, ZeRO) plug in without touching it. SingleDeviceStrategy is the one today.

#include "engine/config/ExperimentConfig.h"
#include "engine/data/Loader.h"
#include "engine/dist/CommStats.h"
#include "engine/models/ModelRegistry.h"
#include "engine/strategy/Precision.h"

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hearth {

class Strategy {
public:
    explicit Strategy(std::unique_ptr<Precision> precision);
    virtual ~Strategy();
    Strategy(const Strategy&) = delete;
    Strategy& operator=(const Strategy&) = delete;

    virtual std::string name() const = 0;      // "single device"
    virtual std::string describe() const = 0;  // what the effective settings show
    virtual torch::Device device() const = 0;  // this rank's device
    virtual int64_t rank() const { return 0; }
    virtual int64_t worldSize() const { return 1; }
    virtual std::string backend() const { return ""; }  // the process group's ("gloo"); "" alone
    bool isGlobalZero() const { return rank() == 0; }
    Precision& precision() { return *precision_; }
    const Precision& precision() const { return *precision_; }

    // Places the model on the device; channels_last stores convolution weights NHWC (convolutional
    // models only). Call once, before setupOptimizer.
    virtual void setupModel(ClassifierImpl& model, bool channels_last);
    bool channelsLast() const { return channels_last_; }
    // The optimizer over the parameters this rank steps.
    virtual std::unique_ptr<torch::optim::Optimizer> setupOptimizer(const OptimizerConfig& config,
                                                                    ClassifierImpl& model);
    // Loader options for one split: this rank's shard of every epoch (DistributedSampler's
    // split), pinned staging when the device wants it; on a GPU, raw uint8 images and (pinned)
    // copies the loader overlaps with the step. Other loaders hand out host batches and toDevice()
    // copies them.
    virtual LoaderOptions loaderOptions(const TrainerConfig& trainer, bool shuffle, uint64_t seed) const;
    // A loader batch on the device, normalised there if it came raw, images in the model's
    // memory layout.
    virtual Batch toDevice(const Batch& batch, bool pinned) const;

    // The model's output for a batch (under the precision's autocast; float32 logits).
    virtual torch::Tensor forward(ClassifierImpl& model, const Batch& batch);
    // Before an evaluation pass (validation, test), on every rank: the model every rank evaluates
    // is the one a checkpoint keeps (data parallel: rank 0's buffers, as a training forward takes).
    virtual void beforeEvaluation() {}
    // closes_group: this micro-batch ends an accumulation group, so gradients are synchronised
    // now (a distributed strategy skips the allreduce on the others, as DDP's no_sync does).
    virtual void backward(const torch::Tensor& loss, bool closes_group);
    // Unscales, clips to clip_val, steps (a 16-mixed step may be skipped: takeSkippedSteps
    // counts them), then zeroes the gradients.
    virtual void optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val);
    // Optimizer steps skipped since the last call (the loss scaler's, counted on the device: a
    // host sync under 16-mixed, so the Trainer asks at its logged steps only).
    virtual int64_t takeSkippedSteps() { return precision_->takeSkippedSteps(); }
    // Drops the gradients accumulated so far (a stop inside an accumulation group): sets them to
    // none, or zeroes them in place with setGradsToNone(false) (trainer.set_grads_to_none).
    virtual void zeroGrad(torch::optim::Optimizer& optimizer);
    void setGradsToNone(bool on) { grads_to_none_ = on; }
    bool gradsToNone() const { return grads_to_none_; }

    // Sums each value over all ranks, in place (single device: nothing to do).
    virtual void reduceSum(std::vector<double>& values) const;
    // True on every rank when any rank asks to stop.
    virtual bool agreeToStop(bool local) const { return local; }
    // Whether each rank reads its own share of every split (DistributedSampler's; all of it alone),
    // so metrics and predictions go through reduceSum and gatherRows; false where every rank reads
    // every sample and sees the same outputs (the pipeline's stages).
    virtual bool shardsData() const { return true; }
    // Whether each rank's optimizer holds only its own share of the state (zero1, zero2, zero3):
    // a training state then keeps every rank's share.
    virtual bool shardsOptimizer() const { return false; }
    // The model's weights were replaced in place (a resume): a strategy that keeps its own copy of
    // them (zero2's master slice) takes them again.
    virtual void weightsReplaced() {}
    // Model-wide reads and writes of the weights outside a step (the best checkpoint, training
    // states, the finders' snapshots) happen between these, called by every rank at the same
    // point (WeightsAccess): zero3, which keeps only a shard of each parameter between steps,
    // gathers them all first and, after a write (`changed`), takes its shards from them again.
    // Calls nest. Nothing to do for the other strategies.
    virtual void gatherWeights() {}
    virtual void releaseWeights(bool /*changed*/) {}
    // Where this rank's synchronised steps spent their time (nothing measured on one device).
    virtual dist::CommStats commStats() const { return {}; }
    // The tensors kept for the gradients for the whole fit, allocated when the model was set up
    // (DDP's reducer buckets): the memory breakdown counts them as gradients (each storage once:
    // with gradient_as_bucket_view the gradients are views of them) and leaves them out of what
    // the process held before its first step.
    virtual std::vector<torch::Tensor> gradientBuffers() const { return {}; }
    // Every rank's rows (any count per rank, same trailing shape and dtype), in rank order, on
    // the host: how sharded evaluation collects its predictions. One device: {rows}.
    virtual std::vector<torch::Tensor> gatherRows(const torch::Tensor& rows) const { return {rows}; }

    // Watches the loss of optimizer step `step` (1-based) for NaN/inf. Returns true when it knows
    // now that the loss is not finite; otherwise the check is recorded on the device and read by
    // firstNonFiniteStep() (one sync, when metrics are read anyway). Not watched under 16-mixed,
    // whose GradScaler skips such steps by design.
    virtual bool watchLoss(const torch::Tensor& loss, int64_t step);
    virtual int64_t firstNonFiniteStep();  // 0 when every watched loss was finite
    // watchLoss inside a captured step: `step` (int64 [1] on the device) holds the optimizer step's
    // number, written before each replay. Never a sync.
    void watchLossOnDevice(const torch::Tensor& loss, const torch::Tensor& step);

    // Checkpoint files, readable by every rank. Called on every rank at the same point: `path` is
    // where this rank writes (empty: nowhere; only rank 0 writes). Strategies that shard the
    // optimizer gather every rank's share into rank 0's file.
    virtual void saveCheckpoint(const std::string& path, const torch::nn::Module& model,
                                torch::optim::Optimizer* optimizer) const;
    virtual void loadCheckpoint(const std::string& path, torch::nn::Module& model) const;

protected:
    std::unique_ptr<Precision> precision_;
    bool channels_last_ = false;
    bool grads_to_none_ = true;
    torch::Tensor first_bad_step_;  // int64 [1] on the device, 0 until a non-finite loss
    // Where this loss is the first non-finite one (bool [1] on the device).
    torch::Tensor firstNonFinite(const torch::Tensor& loss) const;
};

// The model's whole weights readable (and writable: `writes`) while this lives. Released without
// taking the weights back when an exception leaves the scope (the run is failing).
class WeightsAccess {
public:
    WeightsAccess(Strategy& strategy, bool writes);
    ~WeightsAccess();
    WeightsAccess(const WeightsAccess&) = delete;
    WeightsAccess& operator=(const WeightsAccess&) = delete;

private:
    Strategy& strategy_;
    bool writes_;
    int exceptions_;
};

// One device: cpu, or cuda:N.
class SingleDeviceStrategy final : public Strategy {
public:
    // Throws ConfigError("trainer.precision") when the device cannot run `precision`.
    SingleDeviceStrategy(torch::Device device, const std::string& precision);
    std::string name() const override { return "single device"; }
    std::string describe() const override;
    torch::Device device() const override { return device_; }

private:
    torch::Device device_;
};

// The strategy trainer.strategy asks for on `device`: auto = one device; ddp, zero1, zero2, zero3 and
// pipeline join the launcher's process group (torchrun / srun / Hearth's variables; a world of one
// without them).
std::unique_ptr<Strategy> createStrategy(const TrainerConfig& trainer, torch::Device device);

}  // namespace hearth
