#pragma once
// CUDA events around the sections of a profiled step, read back without synchronising: the
// events of a step are read once the device has passed them (cudaEventQuery), normally by the
// time the next profiled step starts. Implemented in CudaTimer.cpp, compiled only when
// HEARTH_WITH_CUDA; callers guard their use with the same macro.

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace hearth {

class CudaTimer {
public:
    static constexpr int kMarks = 16;  // event slots per step
    struct Step {
        std::array<double, kMarks> at_ms{};  // each mark's time after the step's first mark
        std::array<bool, kMarks> recorded{};
        int64_t tag = 0;
    };

    explicit CudaTimer(int64_t device);
    ~CudaTimer();
    CudaTimer(const CudaTimer&) = delete;
    CudaTimer& operator=(const CudaTimer&) = delete;

    void beginStep(int64_t tag);  // opens a step (its marks are recorded on the current stream)
    void mark(int slot);          // records event `slot` of the open step
    void endStep();
    // Steps whose events have all completed (wait: synchronise on the rest first), oldest first.
    std::vector<Step> collect(bool wait);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hearth
