#pragma once
// Stand-in for a header Debian's libtorch-dev does not ship: c10d/reducer.hpp (LibTorch 1.13)
// includes it only for two names. It is on the include path of engine/dist/C10d.cpp alone, and
// only for LibTorch 1.13 (the PyTorch wheel ships the real header).
#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>

namespace torch::distributed::autograd {

class DistAutogradContext {
public:
    using GradCallback = std::function<bool(at::Tensor&)>;
};
using ContextPtr = std::shared_ptr<DistAutogradContext>;

}  // namespace torch::distributed::autograd
