// profiler_overhead: what the step-time breakdown costs per micro-batch. The Trainer brackets
// six sections per micro-batch and opens and closes a group per optimizer step; this drives the
// StepProfiler (wall clock, as on the CPU) through the same calls, profiled and not, and prints
// the cost per micro-batch next to the fastest step Hearth's presets take, as a share of it.
// Usage: profiler_overhead [--every N] [--step-ms MS]
#include "engine/monitor/StepProfiler.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace hearth;

int main(int argc, char** argv) {
    int64_t every = 10;
    double step_ms = 1.15;  // the default MLP's measured step on this CPU (hearth-cli show)
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::strcmp(argv[i], "--every") == 0) every = std::atoll(argv[i + 1]);
        if (std::strcmp(argv[i], "--step-ms") == 0) step_ms = std::atof(argv[i + 1]);
    }
    const int64_t groups = 2'000'000;
    StepProfiler profiler(every, -1);
    const auto start = std::chrono::steady_clock::now();
    for (int64_t g = 0; g < groups; ++g) {
        profiler.beginGroup();
        for (const Section s : {Section::DataWait, Section::HostToDevice, Section::Forward, Section::Backward,
                                Section::OptimizerStep}) {
            profiler.begin(s);
            profiler.end(s);
        }
        profiler.endGroup(1);
        if (g % 50 == 49) {  // a logged step: one sync and one read of the interval
            profiler.begin(Section::Sync);
            profiler.end(Section::Sync);
            (void)profiler.takeInterval();
        }
    }
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
                      static_cast<double>(groups);
    const StepBreakdown b = profiler.takeEpoch(false);
    std::printf("profile_every_n_steps=%lld: %.1f ns per micro-batch (%lld of %lld profiled); "
                "%.4f%% of a %.2f ms step\n",
                static_cast<long long>(every), ns, static_cast<long long>(b.profiled), static_cast<long long>(groups),
                100.0 * ns / (step_ms * 1e6), step_ms);
    return 0;
}
