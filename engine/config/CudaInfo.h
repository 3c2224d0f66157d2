#pragma once
// The CUDA stack LibTorch was built with and the facts of each CUDA device. Implemented in
// CudaInfo.cpp, compiled only when HEARTH_WITH_CUDA; callers guard their use with that macro.

#include <cstdint>
#include <string>

namespace hearth {

struct CudaStackVersions {
    std::string cuda;     // CUDA runtime LibTorch was built with, e.g. "13.0"
    std::string cudnn;    // e.g. "9.19.0"; empty when LibTorch has no cuDNN
    std::string nccl;     // e.g. "2.28.9"; empty when LibTorch has no NCCL
    int driver_cuda = 0;  // CUDA version the installed driver supports (13000), 0: no driver
};

struct CudaDeviceFacts {
    std::string name;
    int64_t total_bytes = 0;
    int major = 0;  // compute capability
    int minor = 0;
};

CudaStackVersions cudaStackVersions();
CudaDeviceFacts cudaDeviceFacts(int64_t device);

}  // namespace hearth
