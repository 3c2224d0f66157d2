// CUDA-only: event timing of profiled steps (see CudaTimer.h).

#include "engine/monitor/CudaTimer.h"

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <deque>

namespace hearth {

namespace {

struct PendingStep {
    std::array<cudaEvent_t, CudaTimer::kMarks> events{};
    std::array<bool, CudaTimer::kMarks> recorded{};
    int last = -1;  // the slot recorded last
    int first = -1;
    int64_t tag = 0;
};

}  // namespace

struct CudaTimer::Impl {
    c10::DeviceIndex device = 0;
    std::deque<PendingStep> pending;
    std::vector<std::array<cudaEvent_t, kMarks>> free_sets;
    bool open = false;

    std::array<cudaEvent_t, kMarks> takeSet() {
        if (!free_sets.empty()) {
            auto set = free_sets.back();
            free_sets.pop_back();
            return set;
        }
        std::array<cudaEvent_t, kMarks> set{};
        for (auto& e : set) C10_CUDA_CHECK(cudaEventCreate(&e));
        return set;
    }
};

CudaTimer::CudaTimer(int64_t device) : impl_(std::make_unique<Impl>()) {
    impl_->device = static_cast<c10::DeviceIndex>(device);
}

CudaTimer::~CudaTimer() {
    c10::cuda::CUDAGuard guard(impl_->device);
    for (auto& p : impl_->pending) impl_->free_sets.push_back(p.events);
    for (auto& set : impl_->free_sets) {
        for (auto& e : set) cudaEventDestroy(e);
    }
}

void CudaTimer::beginStep(int64_t tag) {
    PendingStep step;
    step.events = impl_->takeSet();
    step.tag = tag;
    impl_->pending.push_back(step);
    impl_->open = true;
}

void CudaTimer::mark(int slot) {
    if (!impl_->open || slot < 0 || slot >= kMarks) return;
    auto& step = impl_->pending.back();
    const auto stream = c10::cuda::getCurrentCUDAStream(impl_->device);
    C10_CUDA_CHECK(cudaEventRecord(step.events[static_cast<size_t>(slot)], stream.stream()));
    step.recorded[static_cast<size_t>(slot)] = true;
    if (step.first < 0) step.first = slot;
    step.last = slot;
}

void CudaTimer::endStep() { impl_->open = false; }

std::vector<CudaTimer::Step> CudaTimer::collect(bool wait) {
    std::vector<Step> done;
    c10::cuda::CUDAGuard guard(impl_->device);
    while (!impl_->pending.empty()) {
        auto& p = impl_->pending.front();
        if (impl_->open && impl_->pending.size() == 1) break;  // still being recorded
        if (p.last >= 0) {
            cudaEvent_t last = p.events[static_cast<size_t>(p.last)];
            if (wait) {
                C10_CUDA_CHECK(cudaEventSynchronize(last));
            } else {
                const cudaError_t state = cudaEventQuery(last);
                if (state == cudaErrorNotReady) {
                    (void)cudaGetLastError();  // clear the "not ready" it leaves behind
                    break;
                }
                C10_CUDA_CHECK(state);
            }
            Step s;
            s.tag = p.tag;
            cudaEvent_t first = p.events[static_cast<size_t>(p.first)];
            for (int i = 0; i < kMarks; ++i) {
                if (!p.recorded[static_cast<size_t>(i)]) continue;
                float ms = 0.0F;
                C10_CUDA_CHECK(cudaEventElapsedTime(&ms, first, p.events[static_cast<size_t>(i)]));
                s.at_ms[static_cast<size_t>(i)] = static_cast<double>(ms);
                s.recorded[static_cast<size_t>(i)] = true;
            }
            done.push_back(s);
        }
        impl_->free_sets.push_back(p.events);
        impl_->pending.pop_front();
    }
    return done;
}

}  // namespace hearth
