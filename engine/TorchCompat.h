#pragma once
// TorchCompat: the one place where Hearth's engine bridges LibTorch 1.13 (Debian) and 2.x
// (PyTorch wheel): autocast API, zero_grad semantics, CPU GradScaler kernels, feature flags.

#include <torch/torch.h>
#include <torch/version.h>

#include <ATen/autocast_mode.h>

#include <dlfcn.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

// One comparable number: 113 for 1.13, 211 for 2.11 (never branch on PATCH; Debian reports 0).
#define HEARTH_TORCH_VERSION (TORCH_VERSION_MAJOR * 100 + TORCH_VERSION_MINOR)

// c10::Allocator: allocate() is const in 1.13 and not in 2.x, where copy_data() (for copy-on-write
// storages) is also pure virtual. Checked against 1.13 and 2.11; the boundary is 2.3.
#if HEARTH_TORCH_VERSION >= 203
#define HEARTH_ALLOCATOR_ALLOCATE_CONST
#define HEARTH_ALLOCATOR_HAS_COPY_DATA 1
#else
#define HEARTH_ALLOCATOR_ALLOCATE_CONST const
#define HEARTH_ALLOCATOR_HAS_COPY_DATA 0
#endif

namespace hearth::compat {

// CPU autocast accepts float16 only from 2.4 on; 1.13 supports bf16 only on CPU.
inline constexpr bool kCpuFp16Autocast = HEARTH_TORCH_VERSION >= 204;
// The fused GradScaler kernels gained CPU implementations in 2.3 (CUDA-only before).
inline constexpr bool kCpuAmpKernels = HEARTH_TORCH_VERSION >= 203;
// The fused optimizer kernels (_fused_adam_, _fused_adamw_, _fused_sgd_, with grad_scale and
// found_inf) exist on CUDA and CPU from 2.4; 1.13 has only a CUDA Adam prototype, unused here.
inline constexpr bool kFusedOptimizers = HEARTH_TORCH_VERSION >= 204;

#if HEARTH_TORCH_VERSION >= 204
// 2.4+: device-generic autocast API (the per-device spellings are deprecated and warn).
inline bool autocastEnabled(c10::DeviceType device) {
    return at::autocast::is_autocast_enabled(device);
}
inline void setAutocastEnabled(c10::DeviceType device, bool on) {
    at::autocast::set_autocast_enabled(device, on);
}
inline at::ScalarType autocastDtype(c10::DeviceType device) {
    return at::autocast::get_autocast_dtype(device);
}
inline void setAutocastDtype(c10::DeviceType device, at::ScalarType t) {
    at::autocast::set_autocast_dtype(device, t);
}
#else
// 1.13 .. 2.3: one function pair per device type.
inline bool autocastEnabled(c10::DeviceType device) {
    return device == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
inline void setAutocastEnabled(c10::DeviceType device, bool on) {
    if (device == c10::DeviceType::CUDA) {
        at::autocast::set_enabled(on);
    } else {
        at::autocast::set_cpu_enabled(on);
    }
}
inline at::ScalarType autocastDtype(c10::DeviceType device) {
    return device == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                           : at::autocast::get_autocast_cpu_dtype();
}
inline void setAutocastDtype(c10::DeviceType device, at::ScalarType t) {
    if (device == c10::DeviceType::CUDA) {
        at::autocast::set_autocast_gpu_dtype(t);
    } else {
        at::autocast::set_autocast_cpu_dtype(t);
    }
}
#endif

// RAII equivalent of Python's `with torch.autocast(device, dtype)`. Autocast state is
// thread-local, so the guard must live on the thread that runs the forward pass. Leaving the
// outermost guard clears the cast cache, so stale low-precision weight copies never outlive
// an optimizer step.
class AutocastGuard {
public:
    AutocastGuard(c10::DeviceType device, at::ScalarType dtype, bool cache_enabled = true)
        : device_(device),
          prev_enabled_(autocastEnabled(device)),
          prev_dtype_(autocastDtype(device)),
          prev_cache_(at::autocast::is_autocast_cache_enabled()) {
        setAutocastEnabled(device_, true);
        setAutocastDtype(device_, dtype);
        at::autocast::increment_nesting();
        at::autocast::set_autocast_cache_enabled(cache_enabled);
    }
    ~AutocastGuard() {
        if (at::autocast::decrement_nesting() == 0) {
            at::autocast::clear_cache();
        }
        setAutocastEnabled(device_, prev_enabled_);
        setAutocastDtype(device_, prev_dtype_);
        at::autocast::set_autocast_cache_enabled(prev_cache_);
    }
    AutocastGuard(const AutocastGuard&) = delete;
    AutocastGuard& operator=(const AutocastGuard&) = delete;

private:
    c10::DeviceType device_;
    bool prev_enabled_;
    at::ScalarType prev_dtype_;
    bool prev_cache_;
};

// The intra-op thread count, for LibTorch and for the BLAS under it. Debian's LibTorch computes
// its matrix products in OpenBLAS, whose pthread build keeps a pool of its own (one thread per
// core) that torch::set_num_threads does not reach: trainer.num_threads=1 still ran every large
// GEMM on all cores, and two ddp processes on two cores ran four spinning threads. The wheel's
// MKL follows set_num_threads itself; there the OpenBLAS symbol is absent and nothing more is done.
inline void setIntraOpThreads(int threads) {
    torch::set_num_threads(threads);
    using SetBlasThreads = void (*)(int);
    static const auto set_blas = reinterpret_cast<SetBlasThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    if (set_blas) set_blas(threads);
}

// The intra-op thread count a run gets by default, one rule in both versions: one thread per
// physical core this process may use. 2.x's LibTorch counts them itself (cpuinfo); Debian's 1.13
// halves the logical CPU count on x86, assuming two hyperthreads per core, which on a machine
// with one thread per core (many VMs) leaves half the cores idle. `thread_variable_set`:
// OMP_NUM_THREADS or MKL_NUM_THREADS is set, and wins in both (LibTorch reads it). Call before
// any thread count is set.
inline int defaultIntraOpThreads(int64_t physical_cores, bool thread_variable_set) {
#if HEARTH_TORCH_VERSION >= 200
    (void)physical_cores;
    (void)thread_variable_set;
    return torch::get_num_threads();
#else
    if (thread_variable_set || physical_cores <= 0) return torch::get_num_threads();
    return static_cast<int>(physical_cores);
#endif
}

// Drops every gradient (set_to_none semantics) in both versions: 1.13's Optimizer::zero_grad()
// zeroes in place while 2.x's default sets None. Undefined grads also let the GradScaler and
// clipping skip parameters that took no part in the step. With set_to_none false the gradients
// are zeroed in place and keep their memory (1.13's and PyTorch's set_to_none=False).
inline void clearGradients(torch::optim::Optimizer& optimizer, bool set_to_none = true) {
    torch::NoGradGuard no_grad;
    for (auto& group : optimizer.param_groups()) {
        for (auto& p : group.params()) {
            if (!p.grad().defined()) continue;
            if (set_to_none) {
                p.mutable_grad() = torch::Tensor();
            } else {
                p.mutable_grad().zero_();
            }
        }
    }
}

// The key of an optimizer's per-parameter state: the TensorImpl address as a string in 1.13, the
// address itself in 2.x (whichever the build's Optimizer::state() map is keyed by).
template <class Impl>  // c10::TensorImpl; a template so that only the build's branch is compiled
auto optimizerStateKey(const Impl* impl) {
    using Key = typename std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;
    if constexpr (std::is_same_v<Key, std::string>) {
        std::ostringstream text;  // what 1.13's c10::guts::to_string writes for a pointer
        text << static_cast<const void*>(impl);
        return text.str();
    } else {
        return static_cast<Key>(const_cast<Impl*>(impl));
    }
}
inline auto optimizerStateKey(const torch::Tensor& p) {
    return optimizerStateKey(p.unsafeGetTensorImpl());
}

}  // namespace hearth::compat

namespace hearth::compat {

// Multi-head attention over q, k, v [B, H, T, D] with `keep` (bool, broadcastable to
// [B, H, T, T]; true = attend; undefined = attend everywhere). 2.x: the fused
// scaled_dot_product_attention (flash kernels on CUDA need an undefined keep; memory-efficient
// ones take a mask); 1.13 has none, so softmax(q kᵀ / √D) v written out.
inline torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const torch::Tensor& keep, double dropout_p) {
#if HEARTH_TORCH_VERSION >= 200
    return at::scaled_dot_product_attention(q, k, v, keep.defined() ? std::optional<at::Tensor>(keep) : std::nullopt,
                                            dropout_p, /*is_causal=*/false);
#else
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    auto scores = torch::matmul(q * scale, k.transpose(-2, -1));
    if (keep.defined()) scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
    auto probs = torch::softmax(scores, -1);
    if (dropout_p > 0.0) probs = torch::dropout(probs, dropout_p, /*train=*/true);
    return torch::matmul(probs, v);
#endif
}

}  // namespace hearth::compat
