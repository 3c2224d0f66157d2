#pragma once
// Task: what a model's output means. It computes the loss and the predictions from the output
// and the batch, so the loop never names a loss function or a label field. Classification
// (cross-entropy over logits [B, C], the "label" field, argmax predictions) is the one task now.

#include "engine/data/Batch.h"

#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>

namespace hearth {

class Task {
public:
    virtual ~Task() = default;
    virtual std::string name() const = 0;
    // The batch's loss: its mean over samples.
    virtual torch::Tensor loss(const torch::Tensor& output, const Batch& batch) const = 0;
    // Each sample's loss, [B] (evaluation adds them up, once per sample across ranks).
    virtual torch::Tensor sampleLosses(const torch::Tensor& output, const Batch& batch) const = 0;
    // The true targets of the batch, int64 [B].
    virtual const torch::Tensor& targets(const Batch& batch) const = 0;
    // The predicted class per sample, int64 [B] (cheap: what the training metrics use).
    virtual torch::Tensor predict(const torch::Tensor& output) const = 0;
    // Predicted class and its probability per sample (per-sample predictions of the test split).
    virtual std::pair<torch::Tensor, torch::Tensor> predictWithConfidence(const torch::Tensor& output) const = 0;
};

class ClassificationTask final : public Task {
public:
    std::string name() const override { return "classification"; }
    torch::Tensor loss(const torch::Tensor& output, const Batch& batch) const override;
    torch::Tensor sampleLosses(const torch::Tensor& output, const Batch& batch) const override;
    const torch::Tensor& targets(const Batch& batch) const override { return batch.label(); }
    torch::Tensor predict(const torch::Tensor& output) const override;
    std::pair<torch::Tensor, torch::Tensor> predictWithConfidence(const torch::Tensor& output) const override;
};

}  // namespace hearth
