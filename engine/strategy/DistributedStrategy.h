#pragma once
// DistributedStrategy: what every data-parallel strategy over a c10d process group shares, one
// process per device: rank 0's buffers (BatchNorm statistics) broadcast before each training
// forward (Python DDP's broadcast_buffers) and each evaluation pass (every rank evaluates the
// model a checkpoint keeps), metrics summed across ranks, stop requests and
// non-finite losses agreed by every rank at the same point of the loop (no rank left waiting in
// a collective), and evaluation rows gathered from every rank. DdpStrategy (ddp, zero1),
// Zero2Strategy and Zero3Strategy build on it.

#include "engine/dist/C10d.h"
#include "engine/strategy/Strategy.h"

#include <functional>
#include <memory>

namespace hearth {

class DistributedStrategy : public Strategy {
public:
    // Throws ConfigError("trainer.precision") when the device cannot run `precision`.
    DistributedStrategy(std::shared_ptr<dist::ProcessGroup> group, torch::Device device, const std::string& precision);
    ~DistributedStrategy() override;

    torch::Device device() const override { return device_; }
    int64_t rank() const override { return group_->rank(); }
    int64_t worldSize() const override { return group_->worldSize(); }
    std::string backend() const override { return group_->backend(); }

    // Collects the model's buffers and trainable parameters (in order).
    void setupModel(ClassifierImpl& model, bool channels_last) override;
    // Broadcasts rank 0's buffers before a training forward, and before an evaluation pass (a
    // rank's own BatchNorm statistics from its last training batches are not the checkpoint's).
    torch::Tensor forward(ClassifierImpl& model, const Batch& batch) override;
    void beforeEvaluation() override { broadcastBuffers(); }
    void reduceSum(std::vector<double>& values) const override;
    bool agreeToStop(bool local) const override;
    bool watchLoss(const torch::Tensor& loss, int64_t step) override;
    int64_t firstNonFiniteStep() override;
    std::vector<torch::Tensor> gatherRows(const torch::Tensor& rows) const override;
    // Every rank's rows (same trailing shape, any count) on rank 0, in rank order; empty elsewhere.
    std::vector<torch::Tensor> gatherRowsToRoot(const torch::Tensor& rows) const;
    // zero2, zero3: their collectives' time per optimizer step (timeCollective); DdpStrategy has
    // c10d's own timings instead.
    dist::CommStats commStats() const override;
    // trainer.offload_optimizer (zero1, zero2, zero3): the optimizer over this rank's share steps
    // in host memory (OffloadedOptimizer). Set before setupOptimizer.
    void setOffloadOptimizer(bool on) { offload_ = on; }
    bool offloadsOptimizer() const { return offload_; }
    // The model's weights were written (a resume, a restored snapshot, the best checkpoint): an
    // offloaded optimizer's host copies follow them.
    void weightsReplaced() override;
    void releaseWeights(bool changed) override;
    // zero1/zero2: every rank's optimizer share, gathered into rank 0's file.
    void saveCheckpoint(const std::string& path, const torch::nn::Module& model,
                        torch::optim::Optimizer* optimizer) const override;

protected:
    // Rank 0's buffers onto every rank (Python DDP's broadcast_buffers; nothing in a world of one).
    void broadcastBuffers();
    // Before a training forward that will be followed by a synchronised backward (the Reducer's
    // bookkeeping for ddp); buffers are already broadcast.
    virtual void beforeTrainingForward() {}
    // Sums a tensor over the ranks in place (for the loss scaler and sharded clipping); staged
    // through the host when the tensor lives elsewhere.
    SumAcrossRanks sumAcrossRanks() const;
    std::string groupDescription() const;  // "gloo, rank 0 of 2 (cpu)"
    // Checks that every rank built the same trainable parameters (throws naming the rank that did
    // not), then broadcasts rank 0's parameters and buffers: the sharded strategies' start.
    void takeRankZerosWeights();
    // The optimizer over the tensors this rank steps (its share; zero2's and zero3's master
    // slices): in host memory with trainer.offload_optimizer.
    std::unique_ptr<torch::optim::Optimizer> shardOptimizer(const OptimizerConfig& config,
                                                            const std::vector<torch::Tensor>& tensors);
    // ", optimizer offloaded to pinned host memory" (or to separate host tensors on a CPU run); "".
    std::string offloadDescription() const;
    // Runs `collective` and counts its wall time (nothing overlaps it) towards commStats(); a
    // sharded strategy calls stepTimed() once per optimizer step.
    void timeCollective(const std::function<void()>& collective);
    void stepTimed() { ++timed_steps_; }
    // `tensors` (or their gradients, zeros where one has none) end to end, zero-padded to `size`
    // elements, in the tensors' dtype on this rank's device: what zero2 and zero3 slice.
    torch::Tensor flattenPadded(const std::vector<torch::Tensor>& tensors, int64_t size, bool grads) const;

    std::shared_ptr<dist::ProcessGroup> group_;
    torch::Device device_;
    std::vector<torch::Tensor> buffers_;
    std::vector<torch::Tensor> params_;  // every trainable parameter, in model.parameters() order

private:
    bool offload_ = false;
    std::function<void()> follow_device_;   // the offloaded optimizer's host copies follow the device's
    double comm_ms_total_ = 0.0;
    int64_t timed_steps_ = 0;
};

}  // namespace hearth
