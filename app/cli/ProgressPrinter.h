#pragma once
// ProgressPrinter: the CLI's EventSink. A tqdm-like live line per epoch on a terminal (a line
// every ~10% when piped), a summary line per epoch, and the test report at the end.

#include "engine/events/Events.h"

#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>

namespace hearth::cli {

class ProgressPrinter final : public EventSink {
public:
    // out == nullptr: print nothing, only collect the test report and the outcome.
    ProgressPrinter(std::FILE* out, bool interactive);
    void onEvent(const Event& event) override;

    const std::optional<EvalReport>& testReport() const { return test_report_; }
    const std::optional<RunFinished>& finished() const { return finished_; }

private:
    using Clock = std::chrono::steady_clock;
    void onStarted(const RunStarted& e);
    void onStep(const StepMetrics& e);
    void onEpoch(const EpochMetrics& e);
    void onFinished(const RunFinished& e);
    void onFailed(const RunFailed& e);
    void onLog(const LogLine& e);
    void endLiveLine();

    std::FILE* out_;
    bool interactive_;
    std::mutex mutex_;
    int64_t max_epochs_ = 0;
    int64_t batch_size_hint_ = 0;
    Clock::time_point epoch_start_;
    int64_t current_epoch_ = -1;
    int64_t last_printed_decile_ = -1;
    bool live_line_open_ = false;
    std::optional<EvalReport> test_report_;
    std::optional<RunFinished> finished_;
};

// "1:02:03", "04:05" like tqdm.
std::string formatDuration(double seconds);

}  // namespace hearth::cli
