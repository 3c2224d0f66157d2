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
    // Pipeline stages (trainer.strategy pipeline): the model cut between its blocks. forwardStage
    // runs blocks [begin, end) on `x` (the model's input when begin is 0, else block begin - 1's
    // output), then the head when `head`. Only a model whose parameters outside its blocks are all
    // in its head can be cut (the CNN and the MLP: cutsAtBlocks()); the others throw.
    virtual bool cutsAtBlocks() const { return false; }
    virtual torch::Tensor forwardStage(torch::Tensor x, size_t begin, size_t end, bool head);
    // The model FLOPs of a forward pass (ModelFlops.h); unknown (all zero) for a model without a count.
    virtual ForwardFlops forwardFlops() const { return {}; }

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
