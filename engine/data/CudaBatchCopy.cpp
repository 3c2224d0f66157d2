// CUDA-only: batch copies on a side stream (see CudaBatchCopy.h).

#include "engine/data/CudaBatchCopy.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <optional>

namespace hearth {

struct CudaBatchCopy::Impl {
    c10::DeviceIndex device;
    c10::cuda::CUDAStream stream;
    at::cuda::CUDAEvent copied;
    std::optional<Batch> batch;

    explicit Impl(c10::DeviceIndex d) : device(d), stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, d)) {}
};

CudaBatchCopy::CudaBatchCopy(int64_t device)
    : impl_(std::make_unique<Impl>(static_cast<c10::DeviceIndex>(device))) {}

CudaBatchCopy::~CudaBatchCopy() = default;

void CudaBatchCopy::start(const Batch& host) {
    Impl& d = *impl_;
    // Everything the copy allocates belongs to the copy stream's pool, so it waits for nothing
    // on the compute stream; the pinned source is kept until the copy is done (LibTorch's host
    // allocator records the copy on this stream).
    c10::cuda::CUDAStreamGuard guard(d.stream);
    d.batch = onDevice(host, torch::Device(torch::kCUDA, d.device), /*non_blocking=*/true);
    d.copied.record(d.stream);
}

bool CudaBatchCopy::pending() const { return impl_->batch.has_value(); }

Batch CudaBatchCopy::take() {
    Impl& d = *impl_;
    const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(d.device);
    d.copied.block(current);
    Batch out = std::move(*d.batch);
    d.batch.reset();
    // Allocated on the copy stream, used on the compute stream: their memory is not reused by the
    // next copy until the compute stream has passed this point.
    for (const auto& field : out.fields()) {
        const torch::Tensor& t = field.second;
        if (t.defined() && t.is_cuda()) c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), current);
    }
    return out;
}

void CudaBatchCopy::drop() { impl_->batch.reset(); }

}  // namespace hearth
