#pragma once
// TrainingError: training cannot go on (non-finite loss, ...); carries what to try instead.

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

namespace hearth {

class TrainingError : public std::runtime_error {
public:
    TrainingError(const std::string& message, std::string suggestion)
        : std::runtime_error(message), suggestion_(std::move(suggestion)) {}
    const std::string& suggestion() const noexcept { return suggestion_; }

private:
    std::string suggestion_;
};

// The loss became NaN or infinite at optimizer step `step` (1-based) of the fit.
inline TrainingError nonFiniteLossError(int64_t step, int64_t steps_per_epoch, double lr, const std::string& precision) {
    const int64_t epoch = (step - 1) / (steps_per_epoch > 0 ? steps_per_epoch : 1);
    std::ostringstream msg;
    msg << "loss became NaN or infinite at epoch " << epoch + 1 << " step " << step << " (lr " << lr << ", precision "
        << precision << ")";
    return TrainingError(msg.str(),
                         "lower optimizer.lr, set trainer.gradient_clip_val (e.g. 1.0), or check the "
                         "input data for NaN/inf values");
}

}  // namespace hearth
