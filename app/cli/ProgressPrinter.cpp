#include "ProgressPrinter.h"

#include "storage/report/RunReport.h"

#include <cmath>
#include <string>

namespace hearth::cli {

std::string formatDuration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return "?";
    const long long total = std::llround(seconds);
    char buf[32];
    if (total >= 3600)
        std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", total / 3600, (total / 60) % 60, total % 60);
    else
        std::snprintf(buf, sizeof buf, "%02lld:%02lld", total / 60, total % 60);
    return buf;
}

ProgressPrinter::ProgressPrinter(std::FILE* out, bool interactive) : out_(out), interactive_(interactive) {}

void ProgressPrinter::onEvent(const Event& event) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::visit(
        [this](const auto& e) {
            using T = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<T, EvalReport>) {
                if (e.split == "test") test_report_ = e;
            } else if constexpr (std::is_same_v<T, RunFinished>) {
                finished_ = e;
            }
            if (!out_) return;   // silent: collect only
            if constexpr (std::is_same_v<T, RunStarted>) onStarted(e);
            else if constexpr (std::is_same_v<T, StepMetrics>) onStep(e);
            else if constexpr (std::is_same_v<T, EpochMetrics>) onEpoch(e);
            else if constexpr (std::is_same_v<T, RunFinished>) onFinished(e);
            else if constexpr (std::is_same_v<T, RunFailed>) onFailed(e);
            else if constexpr (std::is_same_v<T, LogLine>) onLog(e);
        },
        event);
}

void ProgressPrinter::onStarted(const RunStarted& e) {
    max_epochs_ = e.max_epochs;
    epoch_start_ = Clock::now();
    std::fprintf(out_, "Run '%s' on %s: %lld train / %lld val / %lld test samples, %lld classes\n",
                 e.run_name.c_str(), e.device.c_str(), static_cast<long long>(e.train_size),
                 static_cast<long long>(e.val_size), static_cast<long long>(e.test_size),
                 static_cast<long long>(e.class_names.size()));
    std::fprintf(out_, "Model: %lld parameters\n", static_cast<long long>(e.parameter_count));
    for (const auto& line : e.model_summary) std::fprintf(out_, "  %s\n", line.c_str());
    std::fprintf(out_, "Effective settings:");
    for (const auto& [key, value] : e.effective) std::fprintf(out_, "\n  %-34s %s", key.c_str(), value.c_str());
    std::fprintf(out_, "\n");
    std::fflush(out_);
}

void ProgressPrinter::onStep(const StepMetrics& e) {
    if (e.epoch != current_epoch_) {
        current_epoch_ = e.epoch;
        last_printed_decile_ = -1;
    }
    const double n = static_cast<double>(e.batch);
    const double total = static_cast<double>(std::max<int64_t>(e.batches_per_epoch, 1));
    const double elapsed = std::chrono::duration<double>(Clock::now() - epoch_start_).count();
    const double rate = elapsed > 0 ? n / elapsed : 0.0;
    const double remaining = rate > 0 ? (total - n) / rate : NAN;
    const double fraction = n / total;

    if (!interactive_) {   // piped: a line every 10% keeps logs readable
        const auto decile = static_cast<int64_t>(fraction * 10);
        if (decile == last_printed_decile_ || e.batch == e.batches_per_epoch) return;
        last_printed_decile_ = decile;
    }
    constexpr int kWidth = 20;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, ' ');
    std::fprintf(out_, "%sEpoch %lld/%lld: %3.0f%%|%s| %lld/%lld [%s<%s, %.1fit/s, %.0f samples/s, loss=%.4f%s]%s",
                 interactive_ ? "\r\033[K" : "", static_cast<long long>(e.epoch) + 1,
                 static_cast<long long>(max_epochs_), fraction * 100.0, bar.c_str(), static_cast<long long>(e.batch),
                 static_cast<long long>(e.batches_per_epoch), formatDuration(elapsed).c_str(),
                 formatDuration(remaining).c_str(), rate, e.samples_per_sec, e.loss,
                 e.loss_scale > 0 ? (", scale=" + std::to_string(static_cast<long long>(e.loss_scale))).c_str() : "",
                 interactive_ ? "" : "\n");
    live_line_open_ = interactive_;
    std::fflush(out_);
}

void ProgressPrinter::endLiveLine() {
    if (live_line_open_) {
        std::fprintf(out_, "\n");
        live_line_open_ = false;
    }
}

void ProgressPrinter::onEpoch(const EpochMetrics& e) {
    endLiveLine();
    std::fprintf(
        out_,
        "Epoch %lld/%lld: train loss %.4f acc %.4f | val loss %.4f acc %.4f%s | %s, %.0f samples/s, "
        "data wait %.1f%%%s\n",
        static_cast<long long>(e.epoch) + 1, static_cast<long long>(max_epochs_), e.train_loss, e.train_accuracy,
        e.val_loss, e.val_accuracy, e.is_best ? " (best)" : "", formatDuration(e.epoch_time_s).c_str(),
        e.samples_per_sec, e.data_wait_share * 100.0,
        e.skipped_steps > 0 ? (", " + std::to_string(e.skipped_steps) + " steps skipped (inf/NaN)").c_str() : "");
    std::fflush(out_);
    epoch_start_ = Clock::now();
}

void ProgressPrinter::onFinished(const RunFinished& e) {
    endLiveLine();
    if (test_report_) {
        std::fprintf(out_, "\nTest set (best checkpoint), loss %.4f:\n\n%s\n", test_report_->loss,
                     test_report_->report.toText().c_str());
        std::fprintf(out_, "Confusion matrix (rows: true, columns: predicted):\n%s\n",
                     test_report_->report.confusionText().c_str());
    }
    std::fprintf(out_, "%s after %lld epoch(s): training %s, total %s, %.0f samples/s, peak memory %s",
                 e.status == "completed" ? "Completed" : "Stopped", static_cast<long long>(e.epochs_completed),
                 formatDuration(e.train_time_s).c_str(), formatDuration(e.total_time_s).c_str(), e.samples_per_sec,
                 formatBytes(e.peak_memory_bytes).c_str());
    if (e.tflops >= 0.0) std::fprintf(out_, ", %s", report::formatCompute(e.tflops, e.mfu).c_str());
    if (e.status == "completed") std::fprintf(out_, ", test accuracy %.4f", e.test_accuracy);
    std::fprintf(out_, "\n");
    if (!e.stop_reason.empty()) std::fprintf(out_, "Ended before the last epoch: %s\n", e.stop_reason.c_str());
    std::fflush(out_);
}

void ProgressPrinter::onFailed(const RunFailed& e) {
    endLiveLine();
    std::fprintf(out_, "error: %s\n", e.message.c_str());
    if (!e.suggestion.empty()) std::fprintf(out_, "hint: %s\n", e.suggestion.c_str());
    std::fflush(out_);
}

void ProgressPrinter::onLog(const LogLine& e) {
    if (e.level == LogLine::Level::Debug) return;
    endLiveLine();
    const char* prefix = e.level == LogLine::Level::Warning ? "warning: " : e.level == LogLine::Level::Error ? "error: " : "";
    std::fprintf(out_, "%s%s\n", prefix, e.text.c_str());
    std::fflush(out_);
}

}  // namespace hearth::cli
