#include "engine/train/RandomState.h"

#include "engine/TorchCompat.h"

#include <ATen/Context.h>
#include <ATen/core/Generator.h>

#include <mutex>

namespace hearth {
namespace {

int64_t cudaCount() {
    return torch::cuda::is_available() ? static_cast<int64_t>(torch::cuda::device_count()) : 0;
}

}  // namespace

torch::Tensor generatorState(torch::Device device) {
    auto generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    return generator.get_state();
}

void setGeneratorState(torch::Device device, const torch::Tensor& state) {
    auto generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
}

torch::Tensor cpuRngState() {
    return generatorState(torch::kCPU);
}

void setCpuRngState(const torch::Tensor& state) {
    setGeneratorState(torch::kCPU, state);
}

torch::Tensor deviceRngState(torch::Device device) {
    return device.is_cuda() ? generatorState(device) : torch::Tensor();
}

void setDeviceRngState(torch::Device device, const torch::Tensor& state) {
    if (device.is_cuda() && state.defined()) setGeneratorState(device, state);
}

RandomStateGuard::RandomStateGuard() : cpu_(cpuRngState()), threads_(torch::get_num_threads()) {
    for (int64_t i = 0; i < cudaCount(); ++i)
        cuda_.push_back(generatorState(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(i))));
}

RandomStateGuard::~RandomStateGuard() {
    try {
        setCpuRngState(cpu_);
        for (size_t i = 0; i < cuda_.size(); ++i)
            setGeneratorState(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(i)), cuda_[i]);
        compat::setIntraOpThreads(threads_);
    } catch (...) {
        // A destructor must not throw; the next run re-seeds anyway.
    }
}

}  // namespace hearth
