// CUDA-only: versions of the CUDA stack inside LibTorch and device properties.
// Compiled only when HEARTH_WITH_CUDA; never against Debian's CPU LibTorch.

#include "engine/config/CudaInfo.h"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <cuda_runtime_api.h>
#include <torch/csrc/cuda/nccl.h>

namespace hearth {
namespace {

std::string dotted(long major, long minor, long patch = -1) {
    std::string s = std::to_string(major) + "." + std::to_string(minor);
    return patch < 0 ? s : s + "." + std::to_string(patch);
}

}  // namespace

CudaStackVersions cudaStackVersions() {
    CudaStackVersions v;
    const auto& hooks = at::detail::getCUDAHooks();
    const long cudart = hooks.versionCUDART();  // 13000 for 13.0
    v.cuda = dotted(cudart / 1000, (cudart % 1000) / 10);
    if (hooks.hasCuDNN()) {
        const long cudnn = hooks.versionCuDNN();  // 91900 for 9.19.0 (cuDNN 9 packs 3 digits below the major)
        v.cudnn = dotted(cudnn / 10000, (cudnn % 10000) / 100, cudnn % 100);
    }
    const std::uint64_t nccl = torch::cuda::nccl::version();  // major << 32 | minor << 16 | patch
    if (nccl != 0) {
        v.nccl = dotted(static_cast<long>(nccl >> 32), static_cast<long>((nccl >> 16) & 0xffff),
                        static_cast<long>(nccl & 0xffff));
    }
    int driver = 0;
    if (cudaDriverGetVersion(&driver) == cudaSuccess) {
        v.driver_cuda = driver;  // 0 when no driver is installed
    }
    return v;
}

CudaDeviceFacts cudaDeviceFacts(int64_t device) {
    const auto* props = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(device));
    CudaDeviceFacts f;
    f.name = props->name;
    f.total_bytes = static_cast<int64_t>(props->totalGlobalMem);
    f.major = props->major;
    f.minor = props->minor;
    return f;
}

}  // namespace hearth
