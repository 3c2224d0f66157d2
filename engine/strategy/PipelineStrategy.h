#pragma once
// PipelineStrategy (trainer.strategy pipeline: model parallel, GPipe): the model cut between its
// blocks into one stage per process, consecutive blocks each, the first stage also running the
// stem (ResNet's first convolution, a transformer's embeddings) and the last the head. The cuts
// balance the stages' forward FLOPs (ClassifierImpl::partFlops; their parameter counts for a model
// without a FLOP count): the slowest stage sets the pipeline's pace.
// A process holds only its stage's parameters (the others' storage is freed), its gradients and
// its optimizer state. Every process reads the same batches (trainer.batch_size is the batch one
// optimizer step sees, not a per-device share); a batch is cut into trainer.pipeline.micro_batches
// micro-batches that flow through the stages one after another: stage s receives a
// micro-batch's activations from stage s - 1 over c10d point to point (Gloo on CPU, NCCL on
// GPUs), runs its blocks and sends the result on, so that while it works on micro-batch m the
// stage before it works on m + 1. Backward runs the other way once every micro-batch is through
// (GPipe's schedule): the last stage backpropagates the loss, each stage sends the gradient of
// its input to the stage before it. The last stage's logits are broadcast to every process, so
// the loss, metrics and predictions every process records are the same. The time a stage waits
// for its neighbours is its communication wait; the schedule's bubble is (S - 1) / (M + S - 1)
// of a step for S stages and M micro-batches.
// BatchNorm sees micro-batches, not the whole batch (as in GPipe); dropout draws per stage.

#include "engine/strategy/DistributedStrategy.h"

#include <memory>
#include <vector>

namespace hearth {

// Where S stages cut blocks of these costs, the first stage also carrying `first_extra` and the
// last `last_extra`: S + 1 block indices, 0 first and the block count last, each stage at least one
// block, the largest stage's cost as small as it can be (ties: the earliest cut). Throws
// ConfigError (trainer.pipeline.stages) for more stages than blocks.
std::vector<size_t> balancedStageBounds(const std::vector<double>& block_costs, double first_extra, double last_extra,
                                        size_t stages);

class PipelineStrategy final : public DistributedStrategy {
public:
    // stage_blocks: the blocks of each stage as trainer.pipeline.stage_blocks gives them; empty: balanced.
    PipelineStrategy(std::shared_ptr<dist::ProcessGroup> group, torch::Device device, const std::string& precision,
                     int64_t micro_batches, std::vector<int64_t> stage_blocks = {});

    std::string name() const override { return "pipeline"; }
    std::string describe() const override;

    // Starts every stage from rank 0's weights, keeps this stage's parameters and frees the rest.
    // Throws ConfigError for a model that cannot be cut (cutsAtBlocks), fewer blocks than stages,
    // or stage_blocks that do not add up to the model's blocks.
    void setupModel(ClassifierImpl& model, bool channels_last) override;
    // The optimizer over this stage's parameters.
    std::unique_ptr<torch::optim::Optimizer> setupOptimizer(const OptimizerConfig& config,
                                                            ClassifierImpl& model) override;
    // Every batch of every split on every process (no DistributedSampler shares).
    LoaderOptions loaderOptions(const TrainerConfig& trainer, bool shuffle, uint64_t seed) const override;
    bool shardsData() const override { return false; }
    // The batch through every stage, micro-batch by micro-batch; the logits on every process (the
    // last stage's carry its graph).
    torch::Tensor forward(ClassifierImpl& model, const Batch& batch) override;
    // Each stage's buffers are its own: rank 0's copies of the others' are stale.
    void beforeEvaluation() override {}
    // The last stage backpropagates `loss`; every stage then passes its input's gradient back.
    void backward(const torch::Tensor& loss, bool closes_group) override;
    void optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val) override;
    void zeroGrad(torch::optim::Optimizer& optimizer) override;
    // Each stage's parameters and buffers broadcast from their process to every process.
    void gatherWeights() override;
    void releaseWeights(bool changed) override;

    size_t firstBlock() const { return begin_; }
    size_t endBlock() const { return end_; }

protected:
    bool shardsOptimizer() const override { return true; }

private:
    bool isFirst() const { return rank() == 0; }
    bool isLast() const { return rank() + 1 == worldSize(); }
    torch::Tensor receiveActivation(int micro);
    std::unique_ptr<dist::ProcessGroup::Pending> sendActivation(const torch::Tensor& activation, int micro);
    torch::Tensor shareLogits(const torch::Tensor& logits);   // the last stage's, on every process

    int64_t micro_batches_;
    std::vector<int64_t> stage_blocks_;
    size_t blocks_ = 0;
    size_t begin_ = 0, end_ = 0;                              // this stage's blocks
    double cost_share_ = 0.0;                                 // this stage's share of the cost the cuts balanced
    bool costs_are_flops_ = false;                            // else parameter counts
    bool has_stem_ = false, has_head_ = false;                // parameters before the first block, after the last
    std::vector<std::vector<torch::Tensor>> stage_params_;    // every stage's parameters (detached)
    std::vector<std::vector<torch::Tensor>> stage_buffers_;   // and buffers
    std::vector<torch::Tensor> mine_;                         // this stage's trainable parameters
    std::vector<std::pair<torch::Tensor, size_t>> others_;    // the other stages' parameters, freed: storage bytes
    // The training forward's micro-batches whose backward is to come: each stage input (a leaf
    // that collects its gradient) and output.
    std::vector<torch::Tensor> inputs_, outputs_;
    int weights_held_ = 0;
};

}  // namespace hearth
