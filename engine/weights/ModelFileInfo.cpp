#include "engine/weights/ModelFileInfo.h"

#include "engine/models/TorchScriptModel.h"

#include <sstream>

namespace hearth {
namespace {

// "__torch__.torch.nn.modules.conv.Conv2d" -> "Conv2d"; "__torch__.Net" -> "Net".
std::string shortType(const torch::jit::Module& m) {
    const auto name = m.type()->name();
    if (!name) return "module";
    const std::string q = name->qualifiedName();
    const auto dot = q.rfind('.');
    return dot == std::string::npos ? q : q.substr(dot + 1);
}

std::string thousands(int64_t n) {
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

}  // namespace

std::string describeTorchScriptFile(const std::string& path) {
    torch::jit::Module module = loadTorchScriptModule(path);
    int64_t trainable = 0, frozen = 0, tensors = 0, buffers = 0, buffer_values = 0;
    for (const auto& p : module.named_parameters(/*recurse=*/true)) {
        ++tensors;
        (p.value.requires_grad() ? trainable : frozen) += p.value.numel();
    }
    for (const auto& b : module.named_buffers(/*recurse=*/true)) {
        ++buffers;
        buffer_values += b.value.numel();
    }
    std::ostringstream s;
    s << "TorchScript module " << shortType(module) << ": " << thousands(trainable + frozen) << " parameters in "
      << tensors << " tensors (" << thousands(trainable) << " trainable";
    if (frozen > 0) s << ", " << thousands(frozen) << " frozen";
    s << "), " << buffers << " buffers (" << thousands(buffer_values) << " values)\n";
    std::string children;
    int64_t n = 0;
    for (const auto& child : module.named_children()) {
        if (n++ < 12) children += (children.empty() ? "" : ", ") + child.name + " (" + shortType(child.value) + ")";
    }
    if (n > 12) children += ", ... " + std::to_string(n - 12) + " more";
    s << "submodules: " << (children.empty() ? "none" : children) << "\n";
    s << TorchScriptClassifierImpl(module).forwardSignature() << "\n";
    return s.str();
}

}  // namespace hearth
