#include "engine/models/TorchScriptModel.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace hearth {
namespace {

// nn::Module names may not contain '.': "features.0.weight" is registered as "features__0__weight".
std::string registeredName(const std::string& dotted) {
    std::string out;
    for (const char c : dotted) {
        if (c == '.') {
            out += "__";
        } else {
            out += c;
        }
    }
    return out;
}

std::string shapeText(const torch::Tensor& t) {
    std::ostringstream s;
    s << t.sizes();
    return s.str();
}

// The first bytes of a file: a TorchScript or torch.save zip starts "PK"; a legacy torch.save
// pickle starts with the pickle protocol byte 0x80.
std::string leadingBytes(const std::string& path, size_t n) {
    std::ifstream in(path, std::ios::binary);
    std::string bytes(n, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(n));
    bytes.resize(static_cast<size_t>(in.gcount()));
    return bytes;
}

std::string lastLine(const std::string& text) {
    size_t end = text.find_last_not_of(" \n");
    if (end == std::string::npos) return text;
    const size_t start = text.rfind('\n', end);
    return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

const char* kHowToScript =
    "; in PyTorch save the model itself as TorchScript: torch.jit.save(torch.jit.script(model), 'model.pt') "
    "(or torch.jit.trace(model, example_input) for a model that scripting cannot read)";

}  // namespace

torch::jit::Module loadTorchScriptModule(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw ConfigError("model.path", "'" + path + "' is not a file (a TorchScript module saved by torch.jit.save)");
    try {
        return torch::jit::load(path, torch::kCPU);
    } catch (const c10::Error& e) {
        const std::string what = e.what_without_backtrace();
        const std::string head = leadingBytes(path, 2);
        if (head.size() < 2 || (head != "PK" && static_cast<unsigned char>(head[0]) != 0x80))
            throw ConfigError("model.path", "'" + path + "' is not a PyTorch file (TorchScript modules are zip "
                                            "archives written by torch.jit.save)");
        if (what.find("version") != std::string::npos && what.find("support") != std::string::npos)
            throw ConfigError("model.path", "'" + path + "' was saved by a newer PyTorch than this build's LibTorch " +
                                                TORCH_VERSION + " reads; save it with PyTorch " + TORCH_VERSION +
                                                " or older (or use Hearth's cuda build, LibTorch 2.x)");
        throw ConfigError("model.path", "'" + path + "' is not a TorchScript module: it looks like a torch.save file "
                                        "(a state_dict or a pickled module), which holds weights without the code "
                                        "that runs them" + std::string(kHowToScript));
    }
}

TorchScriptClassifierImpl::TorchScriptClassifierImpl(const torch::jit::Module& module) : module_(module) {
    // The same tensors, registered here: parameters keep requires_grad as saved (a frozen layer
    // stays frozen); buffers (BatchNorm's running statistics) move and save with the model.
    for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
        register_parameter(registeredName(p.name), p.value, p.value.requires_grad());
    }
    for (const auto& b : module_.named_buffers(/*recurse=*/true)) {
        register_buffer(registeredName(b.name), b.value);
    }
    const std::string type = scriptedType();
    const std::string sequential = "torch.nn.modules.container.Sequential";
    if (forwardArity() != 1 || type.size() < sequential.size() ||
        type.compare(type.size() - sequential.size(), sequential.size(), sequential) != 0)
        return;
    std::vector<torch::jit::Module> pending;
    for (const auto& child : module_.named_children()) {
        pending.push_back(child.value);
        if (child.value.parameters(/*recurse=*/true).size() == 0) continue;
        blocks_.push_back(std::move(pending));
        pending.clear();
    }
    if (!pending.empty() && !blocks_.empty())
        blocks_.back().insert(blocks_.back().end(), pending.begin(), pending.end());
}

std::string TorchScriptClassifierImpl::scriptedType() const {
    const auto name = module_.type()->name();
    return name ? name->qualifiedName() : std::string();
}

namespace {

// Per block, the tensors `of` lists for each of its children (parameters or buffers).
template <class Of>
std::vector<std::vector<torch::Tensor>> perBlock(const std::vector<std::vector<torch::jit::Module>>& blocks, Of of) {
    std::vector<std::vector<torch::Tensor>> out;
    for (const auto& block : blocks) {
        out.emplace_back();
        for (const auto& child : block)
            for (const auto& t : of(child)) out.back().push_back(t);
    }
    return out;
}

}  // namespace

std::vector<std::vector<torch::Tensor>> TorchScriptClassifierImpl::blockParameters() {
    return perBlock(blocks_, [](const torch::jit::Module& m) { return m.parameters(/*recurse=*/true); });
}

std::vector<std::vector<torch::Tensor>> TorchScriptClassifierImpl::blockBuffers() {
    return perBlock(blocks_, [](const torch::jit::Module& m) { return m.buffers(/*recurse=*/true); });
}

torch::Tensor TorchScriptClassifierImpl::runBlocks(torch::Tensor x, size_t begin, size_t end, BlockHooks* hooks) {
    for (size_t i = begin; i < end && i < blocks_.size(); ++i) {
        x = runBlock(hooks, i, [&] {
            for (auto& child : blocks_[i]) x = child.forward({x}).toTensor();
            return x;
        });
    }
    return x;
}

torch::Tensor TorchScriptClassifierImpl::forwardStage(const Batch& batch, torch::Tensor x, size_t begin, size_t end,
                                                      bool /*head*/) {
    return runBlocks(begin == 0 ? batch.input() : x, begin, end, nullptr);
}

size_t TorchScriptClassifierImpl::forwardArity() const {
    const auto& args = module_.get_method("forward").function().getSchema().arguments();
    return args.empty() ? 0 : args.size() - 1;  // less self
}

std::string TorchScriptClassifierImpl::forwardSignature() const {
    std::ostringstream s;
    s << module_.get_method("forward").function().getSchema();
    std::string text = s.str();
    // "forward(__torch__.Net self, Tensor input) -> Tensor": the file's own class name is noise.
    const auto self = text.find(" self, ");
    if (self != std::string::npos) text.erase(text.find('(') + 1, self + 7 - text.find('(') - 1);
    return text;
}

torch::Tensor TorchScriptClassifierImpl::forward(torch::Tensor x) {
    // Under block hooks (ZeRO-3) the Sequential's children one after another, between the hooks.
    if (blockHooks() && !blocks_.empty()) return runBlocks(std::move(x), 0, blocks_.size(), blockHooks());
    return module_.forward({std::move(x)}).toTensor();
}

torch::Tensor TorchScriptClassifierImpl::forwardBatch(const Batch& batch) {
    if (forwardArity() == 1) return forward(batch.input());
    const torch::Tensor& ids = batch.at("input_ids");
    // A batch without padding carries no mask; the scripted forward still takes one.
    const torch::Tensor mask = batch.has("attention_mask") ? batch.at("attention_mask") : torch::ones_like(ids);
    return module_.forward({ids, mask}).toTensor();
}

void TorchScriptClassifierImpl::train(bool on) {
    ClassifierImpl::train(on);
    module_.train(on);
}

void TorchScriptClassifierImpl::saveScripted(const std::string& path) const {
    // The registered tensors are the module's own: it holds the trained weights. Saved from the CPU.
    torch::jit::Module copy = module_.clone();
    copy.to(torch::kCPU);
    copy.eval();
    copy.save(path);
}

std::shared_ptr<ClassifierImpl> loadTorchScriptClassifier(const std::string& path, const ModelInput& input) {
    auto model = std::make_shared<TorchScriptClassifierImpl>(loadTorchScriptModule(path));
    int64_t trainable = 0, frozen = 0;
    for (const auto& p : model->parameters()) (p.requires_grad() ? trainable : frozen) += p.numel();
    if (trainable == 0)
        throw ConfigError("model.path", "'" + path + "' has no trainable parameters" +
                                            (frozen ? " (every parameter has requires_grad=False)" : "") +
                                            "; Hearth trains a module's parameters");
    const bool text = input.vocab_size > 0;
    const size_t arity = model->forwardArity();
    const std::string signature = model->forwardSignature();
    if (text && arity != 2)
        throw ConfigError("model.path", "its forward is " + signature + " but text data gives two tensors: "
                                        "forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor");
    if (!text && arity != 1)
        throw ConfigError("model.path", "its forward is " + signature + " but this data gives one tensor (" +
                                        (input.sample_shape.size() == 3 ? "images [batch, channels, height, width]"
                                                                        : "table rows [batch, features]") +
                                        "): forward(self, input: Tensor) -> Tensor");
    // One batch of two zero samples, in eval mode (no running statistics change), no gradients.
    torch::Tensor output;
    {
        torch::NoGradGuard no_grad;
        model->eval();
        try {
            if (text) {
                // The tokenizer's highest id in one row: an embedding smaller than the vocabulary
                // fails here, not in the middle of the first epoch.
                const int64_t length = std::max<int64_t>(input.max_length, 2);
                Batch batch;
                auto ids = torch::full({2, length}, input.pad_id, torch::kInt64);
                ids[0].fill_(input.vocab_size - 1);
                batch.set("input_ids", ids);
                batch.set("attention_mask", torch::ones({2, length}, torch::kInt64));
                output = model->forwardBatch(batch);
            } else {
                std::vector<int64_t> shape{2};
                shape.insert(shape.end(), input.sample_shape.begin(), input.sample_shape.end());
                output = model->forward(torch::zeros(shape));
            }
        } catch (const std::exception& e) {
            // The interpreter's message is a TorchScript traceback; its last line says what failed.
            throw ConfigError("model.path", "its forward failed on a batch of this data (" + signature + "): " +
                                                lastLine(e.what()) +
                                                (text ? " (token ids go up to " + std::to_string(input.vocab_size - 1) +
                                                            " and samples have " + std::to_string(input.max_length) +
                                                            " tokens: does the model's embedding hold the tokenizer's "
                                                            "vocabulary and enough positions?)"
                                                      : ""));
        }
        model->train();
    }
    if (output.dim() != 2 || output.size(0) != 2 || output.size(1) != input.num_classes)
        throw ConfigError("model.path", "its forward returns " + shapeText(output) + " for a batch of 2, but the data has " +
                                            std::to_string(input.num_classes) + " classes: it must return logits [2, " +
                                            std::to_string(input.num_classes) + "]");
    if (!output.is_floating_point())
        throw ConfigError("model.path", "its forward returns " + std::string(c10::toString(output.scalar_type())) +
                                            " values; it must return floating-point logits");
    model->addNote("TorchScript " + path + ": " + signature + ", " + std::to_string(trainable) +
                   " trainable parameters" + (frozen ? ", " + std::to_string(frozen) + " frozen" : ""));
    return model;
}

}  // namespace hearth
