#pragma once
// Zero2Strategy (trainer.strategy zero2, DeepSpeed's ZeRO stage 2): gradients and optimizer state
// sharded across ranks. The trainable parameters are laid end to end in one flat vector, padded
// to a multiple of the world size and cut into equal slices; rank r owns slice r. During every
// backward the gradients are taken a bucket at a time (trainer.ddp.bucket_cap_mb), as soon as
// every parameter of the bucket has its gradient (a hook after each parameter's gradient
// accumulation, as DDP's Reducer; buckets still waiting when backward ends, an unused
// parameter's, go then): each bucket's part of every slice summed onto its owner (a reduce per
// owner) and averaged into the owner's gradient shard, and the bucket's gradients freed while
// backward goes on, so the whole model's gradients never exist at once and no full-size copy of
// them is made; the owner's optimizer steps a master copy of its slice (in
// the parameters' precision); then every rank gathers the updated slices into the model. Between
// steps a rank holds about 1/world of the gradients and of the optimizer state. Clipping uses
// the global norm, and under 16-mixed the loss scaler's inf check agrees across ranks.

#include "engine/strategy/DistributedStrategy.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

namespace hearth {

class Zero2Strategy final : public DistributedStrategy {
public:
    Zero2Strategy(std::shared_ptr<dist::ProcessGroup> group, torch::Device device, const std::string& precision);
    ~Zero2Strategy() override;

    std::string name() const override { return "zero2"; }
    std::string describe() const override;

    // Broadcasts rank 0's parameters and buffers and lays out the slices.
    void setupModel(ClassifierImpl& model, bool channels_last) override;
    // The optimizer over this rank's master slice (elementwise optimizers only: sgd, adam, adamw,
    // adagrad treat each element alone, so a slice steps exactly as the whole would).
    std::unique_ptr<torch::optim::Optimizer> setupOptimizer(const OptimizerConfig& config,
                                                            ClassifierImpl& model) override;
    void backward(const torch::Tensor& loss, bool closes_group) override;
    void optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) override;
    void zeroGrad(torch::optim::Optimizer& optimizer) override;

    int64_t flatSize() const { return flat_size_; }    // trainable elements
    int64_t sliceSize() const { return slice_size_; }  // elements each rank owns (padded)

    void weightsReplaced() override;
    // The size of the buckets the gradients are reduced in (trainer.ddp.bucket_cap_mb).
    void setReduceBucketBytes(int64_t bytes) { reduce_bucket_bytes_ = std::max<int64_t>(bytes, 1); }

protected:
    bool shardsOptimizer() const override { return true; }

private:
    torch::Tensor flatten() const;  // the parameters end to end, padded
    void releaseGrads(size_t first, size_t last);
    // The buckets backward reduces in: parameters [first, last), flat elements [start, end).
    struct Bucket {
        size_t first, last;
        int64_t start, end;
    };
    std::vector<Bucket> buckets() const;
    void scatterParameters(const torch::Tensor& flat);
    // Backward's reduction: a hook on every parameter's gradient accumulator marks it ready; a
    // bucket whose parameters are all ready is copied out, freed and its reduces started (at most
    // two buckets in flight: the oldest is finished first).
    void watchGradients();
    void gradientReady(size_t param);
    void launch(size_t bucket);
    void finishOldest();
    struct InFlight {
        std::vector<std::unique_ptr<dist::ProcessGroup::Pending>> reduces;  // one per owner in the bucket
        std::optional<size_t> mine;  // which of them sums onto this rank
        int64_t shard_offset = 0;    // where that part goes in this rank's shard
    };

    int64_t flat_size_ = 0;
    int64_t slice_size_ = 0;
    int64_t reduce_bucket_bytes_ = int64_t{25} * 1024 * 1024;
    torch::Tensor master_;  // [slice_size_] leaf: this rank's slice, its grad the shard
    std::vector<Bucket> plan_;          // buckets(), planned when the optimizer is set up
    std::vector<size_t> bucket_of_;     // parameter -> its bucket in plan_
    std::vector<size_t> waiting_;       // per bucket: parameters still without their gradient this backward
    std::vector<char> ready_, launched_;
    std::deque<InFlight> flight_;
    bool in_backward_ = false;
    std::mutex mutex_;                  // hooks run on autograd's thread for the device
    std::vector<std::pair<std::shared_ptr<void>, uintptr_t>> hooks_;   // gradient accumulators, hook keys
};

}  // namespace hearth
