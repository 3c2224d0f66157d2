#pragma once
// Models by name: registry name -> factory(options, input shape, class count).

#include "engine/config/ExperimentConfig.h"
#include "engine/data/Batch.h"
#include "engine/models/BlockHooks.h"
#include "engine/models/ModelFlops.h"

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace hearth {

// Every model maps a batch to logits [B, num_classes]. forwardBatch() picks the inputs it
// takes from the batch's named tensors: by default "input" (float [B, ...sampleShape]) through
// forward(); a text model reads "input_ids" and "attention_mask" instead.
class ClassifierImpl : public torch::nn::Module {
public:
    virtual torch::Tensor forward(torch::Tensor x) = 0;
    virtual torch::Tensor forwardBatch(const Batch& batch) { return forward(batch.input()); }
    virtual bool isConvolutional() const { return false; }
    // Activation checkpointing per block (encoder layer, conv block, hidden layer): each block keeps
    // only its input and recomputes the rest in backward. Applies in training with grad mode on.
    void setGradientCheckpointing(bool on) { checkpointing_ = on; }
    bool gradientCheckpointing() const { return checkpointing_; }
    bool checkpointsNow() const { return checkpointing_ && is_training() && torch::GradMode::is_enabled(); }
    // What the user should know about how the model was built (weights loaded, heads initialised).
    virtual std::vector<std::string> notes() const { return {}; }
    // The model's blocks in forward order (conv block, hidden layer, residual block, encoder
    // layer), each with its parameters; the ones outside every block (stem, embeddings, head) are
    // in none. Empty: a model without blocks (TorchScript). forward() calls the hooks set here
    // around each of these blocks (ZeRO-3's gathering); nullptr: none.
    virtual std::vector<std::vector<torch::Tensor>> blockParameters() { return {}; }
    void setBlockHooks(BlockHooks* hooks) { block_hooks_ = hooks; }
    BlockHooks* blockHooks() const { return block_hooks_; }
    // Each block's buffers (BatchNorm's running statistics), in blockParameters() order.
    virtual std::vector<std::vector<torch::Tensor>> blockBuffers() { return {}; }
    // The parameters and buffers outside every block that run before the first one (the stem:
    // ResNet's first convolution and its BatchNorm, a transformer's embeddings); the others outside
    // every block are the head's.
    virtual std::vector<torch::Tensor> stemParameters() { return {}; }
    virtual std::vector<torch::Tensor> stemBuffers() { return {}; }
    // Pipeline stages (trainer.strategy pipeline): the model cut between its blocks. forwardStage
    // runs the stem on the batch's inputs when `begin` is 0 (`x` unused), else takes `x`, block
    // begin - 1's output; then blocks [begin, end), then the head when `head`. What a block needs
    // besides `x` (a transformer's attention mask) it reads from `batch`, which every stage has.
    // The built-in models can be cut (cutsAtBlocks()), and a TorchScript nn.Sequential.
    virtual bool cutsAtBlocks() const { return false; }
    virtual torch::Tensor forwardStage(const Batch& batch, torch::Tensor x, size_t begin, size_t end, bool head);
    // The model FLOPs of a forward pass by part (ModelFlops.h); unknown (all zero, no blocks) for a
    // model without a count.
    virtual PartFlops partFlops() const { return {}; }
    ForwardFlops forwardFlops() const { return partFlops().total(); }

private:
    bool checkpointing_ = false;
    BlockHooks* block_hooks_ = nullptr;
};

struct ModelInput {
    std::vector<int64_t> sample_shape;   // e.g. {1, 28, 28} or {num_features}
    int64_t num_classes = 0;
    // Text data (DataSplits::text): the tokenizer's vocabulary, tokens per sample, padding id.
    int64_t vocab_size = 0;
    int64_t max_length = 0;
    int64_t pad_id = 0;
};

using ModelFactory = std::function<std::shared_ptr<ClassifierImpl>(const ModelConfig&, const ModelInput&)>;

std::vector<std::string> modelNames();
// Throws ConfigError("model.name", ...) for an unknown name or options the model cannot use.
std::shared_ptr<ClassifierImpl> createModel(const ModelConfig& config, const ModelInput& input);

int64_t parameterCount(const torch::nn::Module& model);
// One line per leaf layer: "conv1  Conv2d(1, 32, kernel_size=[3, 3])  320 params".
std::vector<std::string> modelSummary(const torch::nn::Module& model);

}  // namespace hearth
