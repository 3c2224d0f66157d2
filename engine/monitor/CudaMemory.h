#pragma once
// CUDA device facts and caching-allocator statistics. Implemented in CudaMemory.cpp, which is
// compiled only when HEARTH_WITH_CUDA (the Torch package provides torch_cuda); callers guard
// their use with the same macro.

#include <cstdint>
#include <string>

namespace hearth {

struct CudaMemoryStats {
    int64_t allocated_bytes = 0;  // caching allocator: live tensors
    int64_t allocated_peak_bytes = 0;
    int64_t reserved_bytes = 0;  // caching allocator: held from the driver
    int64_t reserved_peak_bytes = 0;
    int64_t free_bytes = 0;  // cudaMemGetInfo
    int64_t total_bytes = 0;
};

CudaMemoryStats cudaMemoryStats(int64_t device);
void resetCudaPeakStats(int64_t device);
void releaseCudaCache();
std::string cudaDeviceName(int64_t device);
// "00000000:3B:00.0": how NVML finds the same device (CUDA and NVML number devices differently).
std::string cudaPciBusId(int64_t device);
bool cudaDeviceSupportsBf16(int64_t device);  // compute capability >= 8.0

}  // namespace hearth
