#pragma once
// Profiler: the loop brackets each part of a training step once, through this interface, so a
// step-time breakdown can be measured without touching the loop. Off by default: the loop holds
// a null Profiler* and a ScopedSection then costs one pointer test.

#include <array>
#include <chrono>
#include <cstdint>

namespace hearth {

// The parts of one micro-batch, in the order the loop runs them.
enum class Section {
    DataWait,      // waiting for the loader's next batch
    HostToDevice,  // the batch's copy to the training device
    Forward,       // model forward and loss
    Backward,      // backward of the (scaled) loss
    OptimizerStep, // unscale, clip, step, zero gradients (once per accumulation group)
    Sync,          // reading metrics back to the host (the step-metric interval's one sync)
};
inline constexpr int kSectionCount = 6;
const char* sectionName(Section section);  // "data_wait", "host_to_device", ...

class Profiler {
public:
    virtual ~Profiler() = default;
    virtual void begin(Section section) = 0;
    virtual void end(Section section) = 0;
    // An accumulation group (the micro-batches of one optimizer step) starts, before its first
    // batch is fetched; it ends after its optimizer step, having had `micro_batches`.
    virtual void beginGroup() {}
    virtual void endGroup(int64_t micro_batches) { (void)micro_batches; }
};

// Brackets a scope; nothing at all happens without a profiler.
class ScopedSection {
public:
    ScopedSection(Profiler* profiler, Section section) : profiler_(profiler), section_(section) {
        if (profiler_) profiler_->begin(section_);
    }
    ~ScopedSection() {
        if (profiler_) profiler_->end(section_);
    }
    ScopedSection(const ScopedSection&) = delete;
    ScopedSection& operator=(const ScopedSection&) = delete;

private:
    Profiler* profiler_;
    Section section_;
};

// Host wall-clock time and count per section. Asynchronous device work is attributed to the
// section that waits for it (a CUDA-event profiler can replace this one behind the same interface).
class WallClockProfiler final : public Profiler {
public:
    struct Totals {
        double ms = 0.0;
        int64_t count = 0;
    };
    void begin(Section section) override { started_[index(section)] = Clock::now(); }
    void end(Section section) override {
        auto& t = totals_[index(section)];
        t.ms += std::chrono::duration<double, std::milli>(Clock::now() - started_[index(section)]).count();
        ++t.count;
    }
    const Totals& totals(Section section) const { return totals_[index(section)]; }
    void reset() { totals_ = {}; }

private:
    using Clock = std::chrono::steady_clock;
    static size_t index(Section s) { return static_cast<size_t>(s); }
    std::array<Clock::time_point, kSectionCount> started_{};
    std::array<Totals, kSectionCount> totals_{};
};

inline const char* sectionName(Section section) {
    switch (section) {
        case Section::DataWait: return "data_wait";
        case Section::HostToDevice: return "host_to_device";
        case Section::Forward: return "forward";
        case Section::Backward: return "backward";
        case Section::OptimizerStep: return "optimizer_step";
        case Section::Sync: return "sync";
    }
    return "?";
}

}  // namespace hearth
