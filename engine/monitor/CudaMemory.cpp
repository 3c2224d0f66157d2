// CUDA-only: caching allocator statistics and device properties (see LIBTORCH_COMPAT.md §4).
// Compiled only when HEARTH_WITH_CUDA; never against Debian's CPU LibTorch.

#include "engine/monitor/CudaMemory.h"

#include "engine/config/CudaInfo.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>

#include <cstdio>

namespace hearth {

CudaMemoryStats cudaMemoryStats(int64_t device) {
    const auto dev = static_cast<c10::DeviceIndex>(device);
    // Index 0 of every StatArray is the aggregate over the small and large pools; not naming
    // StatType keeps this compiling after its namespace moved in 2.x.
    const auto st = c10::cuda::CUDACachingAllocator::getDeviceStats(dev);
    CudaMemoryStats out;
    out.allocated_bytes = st.allocated_bytes[0].current;
    out.allocated_peak_bytes = st.allocated_bytes[0].peak;
    out.reserved_bytes = st.reserved_bytes[0].current;
    out.reserved_peak_bytes = st.reserved_bytes[0].peak;
    c10::cuda::CUDAGuard guard(dev);
    size_t free_b = 0, total_b = 0;
    C10_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    out.free_bytes = static_cast<int64_t>(free_b);
    out.total_bytes = static_cast<int64_t>(total_b);
    return out;
}

void resetCudaPeakStats(int64_t device) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device));
}

void releaseCudaCache() {
    c10::cuda::CUDACachingAllocator::emptyCache();
}

std::string cudaDeviceName(int64_t device) {
    return cudaDeviceFacts(device).name;
}

std::string cudaPciBusId(int64_t device) {
    const cudaDeviceProp* p = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(device));
    char text[32] = {};
    std::snprintf(text, sizeof text, "%08X:%02X:%02X.0", static_cast<unsigned>(p->pciDomainID),
                  static_cast<unsigned>(p->pciBusID), static_cast<unsigned>(p->pciDeviceID));
    return text;
}

bool cudaDeviceSupportsBf16(int64_t device) {
    return cudaDeviceFacts(device).major >= 8;  // compute capability 8.0 (Ampere) and newer
}

}  // namespace hearth
