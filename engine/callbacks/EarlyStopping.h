#pragma once
// EarlyStopping: the callback that ends a fit when a validation metric stops improving, as
// Lightning's EarlyStopping: after `patience` validated epochs in a row without an improvement
// larger than min_delta over the best value so far, or at once when the metric is not finite.
// The fit then ends as completed (the best checkpoint is tested), with the reason stored.

#include "engine/callbacks/Callback.h"
#include "engine/config/ExperimentConfig.h"

#include <optional>
#include <string>

namespace hearth {

class EarlyStopping final : public Callback {
public:
    // Throws ConfigError for an unknown monitor or mode (monitor "none" is not a callback).
    explicit EarlyStopping(EarlyStoppingConfig config);

    void onValidationEnd(TrainerContext& ctx, EpochEnd& epoch) override;

    // The decision for one validated epoch (0-based): the reason to stop, or nothing.
    std::optional<std::string> observe(double value, int64_t epoch);
    bool lowerIsBetter() const { return lower_is_better_; }

    std::string stateKey() const override { return "early_stopping"; }
    std::string stateJson() const override;   // {"best", "best_epoch", "epochs_without_improvement"}
    void loadState(TrainerContext& ctx, const std::string& json) override;

private:
    EarlyStoppingConfig config_;
    bool lower_is_better_ = true;
    std::optional<double> best_;
    int64_t best_epoch_ = -1;
    int64_t epochs_without_improvement_ = 0;
};

}  // namespace hearth
