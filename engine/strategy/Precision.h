#pragma once
// Precision: the object through which forward, backward and the optimizer step pass, as in
// Lightning's precision plugins. 32-true does nothing special; bf16-mixed runs the forward
// under bf16 autocast (CPU or CUDA); 16-mixed runs it under CUDA fp16 autocast and owns a
// GradScaler (refused with bf16, which needs no scaling).

#include "engine/data/Batch.h"
#include "engine/models/ModelRegistry.h"
#include "engine/strategy/GradScaler.h"

#include <memory>
#include <optional>
#include <string>

namespace hearth {

class Precision final {
public:
    // name: 32-true | 16-mixed | bf16-mixed. Throws ConfigError("trainer.precision") when the
    // device cannot honour it. scaler_options apply to 16-mixed only.
    Precision(const std::string& name, torch::Device device, GradScalerOptions scaler_options = {});

    // The model's output for `batch` in float32 (upcast after autocast so the loss is computed in
    // full precision). The tensor form runs a batch whose only field is "input".
    torch::Tensor forward(ClassifierImpl& model, const Batch& batch) const;
    torch::Tensor forward(ClassifierImpl& model, const torch::Tensor& inputs) const;
    // Backward of loss (scaled under 16-mixed).
    void backward(const torch::Tensor& loss);
    // Clip the gradient norm to clip_val if given (unscaled first under 16-mixed), then step
    // (skipped on inf/nan under 16-mixed; takeSkippedSteps counts them). With sum_across_ranks (an
    // optimizer sharded over ranks, ZeRO) the inf check and the clipping norm cover every rank's
    // shard: all ranks skip together and clip by the global norm.
    void optimizerStep(torch::optim::Optimizer& optimizer, std::optional<double> clip_val,
                       const SumAcrossRanks& sum_across_ranks = {});
    // Steps the scaler skipped since the last call (0 without one; a host sync with one).
    int64_t takeSkippedSteps() { return scaler_ ? scaler_->takeSkippedSteps() : 0; }

    const std::string& name() const { return name_; }
    bool autocasts() const { return autocast_dtype_.has_value(); }
    std::optional<torch::ScalarType> autocastDtype() const { return autocast_dtype_; }   // none: 32-true
    bool scalesLoss() const { return scaler_ != nullptr; }
    GradScaler* scaler() { return scaler_.get(); }   // 16-mixed only; null otherwise
    double lossScale() const;      // 0 when not scaling (host sync otherwise)
    std::string describe() const;  // "bf16-mixed (CPU autocast)"

private:
    std::string name_;
    torch::Device device_;
    std::optional<torch::ScalarType> autocast_dtype_;
    std::unique_ptr<GradScaler> scaler_;
};

}  // namespace hearth
