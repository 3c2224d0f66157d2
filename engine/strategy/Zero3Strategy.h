#pragma once
// Zero3Strategy (trainer.strategy zero3: DeepSpeed's ZeRO stage 3, FSDP's full sharding): the
// parameters, their gradients and the optimizer state sharded across ranks. The trainable
// parameters are grouped in units: one per block of the model (ClassifierImpl::blockParameters: a
// conv block, a hidden layer, a residual block, an encoder layer) and a root unit for the rest
// (stem, embeddings, head); trainer.fsdp.blocks_per_unit puts that many consecutive blocks in one
// unit (FSDP's wrapping granularity: fewer, larger collectives for more memory). Each unit is laid end to end, padded to a multiple of the world size
// and cut into equal slices; rank r keeps slice r of every unit in its master vector, which its
// optimizer steps (in the parameters' precision: float32 master shards under mixed precision).
// Between steps the parameters' own storage is freed (their shapes stay): a rank holds about
// 1/world of the parameters, gradients and optimizer state.
//
// In a step a block's parameters are all-gathered just before the block runs and freed after it;
// the block's output carries a gradient hook that gathers them again before the block's backward
// and hands the gradients of the block after it (whose backward has finished by then) to their
// owners with one reduce-scatter, freeing those gradients and parameters. The root unit lives
// from the start of forward to the end of backward. Gradient checkpointing composes: the
// recomputation runs after the hook has gathered the block. Model-wide reads and writes of the
// weights (checkpoints, training states, the finders' snapshots) go through gatherWeights().
// With trainer.fsdp.prefetch the next unit's gather (the one after in forward, the one before in
// backward) starts as soon as a unit has its parameters, and runs while that unit computes (on
// Gloo's worker threads, on NCCL's stream). A unit's gradient reduce-scatter always runs while the
// backward of the unit before it computes, and is finished before the next one starts (one
// unit's gradients in flight at most) or at the end of backward.

#include "engine/models/BlockHooks.h"
#include "engine/strategy/DistributedStrategy.h"

namespace hearth {

class Zero3Strategy final : public DistributedStrategy, private BlockHooks {
public:
    Zero3Strategy(std::shared_ptr<dist::ProcessGroup> group, torch::Device device, const std::string& precision,
                  int64_t blocks_per_unit = 1, bool prefetch = true);
    // Unhooks the model, which must outlive this (every caller holds it by shared_ptr). Its
    // parameters stay freed: the weights live on in best.pt and the training states.
    ~Zero3Strategy() override;

    std::string name() const override { return "zero3"; }
    std::string describe() const override;

    // Broadcasts rank 0's weights, groups the parameters in units, keeps this rank's slices and
    // frees the parameters' storage; hooks the model's blocks.
    void setupModel(ClassifierImpl& model, bool channels_last) override;
    // The optimizer over this rank's master slices (every optimizer Hearth has is elementwise).
    std::unique_ptr<torch::optim::Optimizer> setupOptimizer(const OptimizerConfig& config,
                                                            ClassifierImpl& model) override;
    torch::Tensor forward(ClassifierImpl& model, const Batch& batch) override;
    void backward(const torch::Tensor& loss, bool closes_group) override;
    void optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) override;
    void zeroGrad(torch::optim::Optimizer& optimizer) override;
    void gatherWeights() override;
    void releaseWeights(bool changed) override;

protected:
    bool shardsOptimizer() const override { return true; }

private:
    struct Unit {
        std::vector<torch::Tensor> params;
        std::vector<size_t> bytes;   // each parameter's storage when whole
        int64_t numel = 0;
        int64_t slice = 0;           // elements per rank (padded)
        int64_t offset = 0;          // of this rank's slice in master_
        bool whole = false;          // the parameters hold their values now
        // A training forward ran it: its gradients go to their owners once its backward is done.
        // Set the same way on every rank, so every rank runs the same collectives.
        bool pending = false;
    };

    void beforeBlock(size_t index) override;
    torch::Tensor afterBlock(size_t index, torch::Tensor output) override;
    void beforeUnitBackward(size_t unit);
    size_t unitOf(size_t block) const { return 1 + block / blocks_per_unit_; }
    bool endsUnit(size_t block) const { return (block + 1) % blocks_per_unit_ == 0 || block + 1 == blocks_; }
    void gather(size_t unit);
    void prefetch(size_t unit);             // starts gather(unit)'s collective
    void dropPrefetch();                    // waits for a prefetch nobody took
    void release(Unit& unit);
    // Starts the reduce-scatter of the unit's gradients (this rank's slice of their sum) and frees
    // them; the previous one in flight is finished first, so at most one unit's are held.
    void reduceGradients(size_t unit);
    void finishReduce();                    // adds the reduce in flight into master_'s gradient
    void takeShards();                      // master_ from the whole parameters (after a write)

    size_t blocks_per_unit_ = 1;
    bool prefetch_enabled_ = true;
    std::unique_ptr<dist::ProcessGroup::Pending> prefetched_;   // in flight, for unit prefetched_unit_
    std::unique_ptr<dist::ProcessGroup::Pending> reducing_;     // a unit's reduce-scatter in flight
    size_t reducing_unit_ = 0;
    size_t prefetched_unit_ = 0;
    size_t blocks_ = 0;                     // the model's blocks
    std::vector<Unit> units_;               // [0]: the root unit, then the model's blocks' units in order
    torch::Tensor master_;                  // every unit's slice end to end; its grad the shards'
    ClassifierImpl* model_ = nullptr;
    bool tracking_backward_ = false;        // a training forward whose backward will follow
    int weights_held_ = 0;                  // gatherWeights() depth
};

}  // namespace hearth
