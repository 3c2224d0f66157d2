#pragma once
// A classifier the user defined in PyTorch and saved as TorchScript (torch.jit.script or
// torch.jit.trace, then torch.jit.save): model.name=torchscript, model.path=FILE.pt. The scripted
// module runs as it was written; its parameters and buffers are registered with this module (the
// same tensors), so the optimizer, device placement, precision, checkpoints, resume and memory
// accounting treat it as any built-in model, and train()/eval() reach the scripted module.
// Its forward takes one tensor (images [B, C, H, W] or table rows [B, features]) or two (text:
// input_ids and attention_mask), found from its schema, and returns logits [B, classes].
// A scripted or traced nn.Sequential taking one tensor has blocks: its children, each child with
// parameters closing a block (the parameter-less ones before it, activations and flattens, run in
// its block; the ones after the last, in the last block). The pipeline cuts it between them and
// ZeRO-3 gathers it block by block (its forward then runs the children in turn between the block
// hooks, as the Sequential's own forward would).

#include "engine/models/ModelRegistry.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <string>
#include <vector>

namespace hearth {

class TorchScriptClassifierImpl final : public ClassifierImpl {
public:
    explicit TorchScriptClassifierImpl(const torch::jit::Module& module);  // a handle: not copied

    torch::Tensor forward(torch::Tensor x) override;
    torch::Tensor forwardBatch(const Batch& batch) override;
    void train(bool on = true) override;
    std::vector<std::vector<torch::Tensor>> blockParameters() override;
    std::vector<std::vector<torch::Tensor>> blockBuffers() override;
    bool cutsAtBlocks() const override { return !blocks_.empty(); }
    torch::Tensor forwardStage(const Batch& batch, torch::Tensor x, size_t begin, size_t end, bool head) override;
    // "__torch__.torch.nn.modules.container.Sequential": the scripted class, as the file names it.
    std::string scriptedType() const;
    std::vector<std::string> notes() const override { return notes_; }

    // "forward(input: Tensor) -> Tensor" as the file declares it.
    std::string forwardSignature() const;
    // The forward's arguments after self: 1 (one input tensor) or 2 (input_ids, attention_mask).
    size_t forwardArity() const;
    // The scripted module with the weights it holds now (the trained ones), as torch.jit.save
    // writes it: what `hearth-cli export --format torchscript` produces and torch.jit.load reads.
    void saveScripted(const std::string& path) const;
    void addNote(std::string note) { notes_.push_back(std::move(note)); }

private:
    torch::Tensor runBlocks(torch::Tensor x, size_t begin, size_t end, BlockHooks* hooks);

    mutable torch::jit::Module module_;
    std::vector<std::vector<torch::jit::Module>> blocks_;   // the Sequential's children, by block
    std::vector<std::string> notes_;
};
TORCH_MODULE(TorchScriptClassifier);

// The module file as LibTorch reads it, on the CPU. Throws ConfigError("model.path", ...) naming what
// the file is instead (not a PyTorch file, a torch.save file, saved by a newer PyTorch).
torch::jit::Module loadTorchScriptModule(const std::string& path);

// Loads model.path and checks it against the data before any training: a file that is not
// TorchScript (a state_dict or a pickled module from torch.save: how to script it), one saved by a
// newer PyTorch than this LibTorch reads, no trainable parameters, forward arguments that do not
// fit the data kind, or an output that is not [batch, input.num_classes] on a batch of zeros.
// Throws ConfigError("model.path", ...).
std::shared_ptr<ClassifierImpl> loadTorchScriptClassifier(const std::string& path, const ModelInput& input);

}  // namespace hearth
