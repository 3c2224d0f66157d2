#include "engine/train/Task.h"

namespace hearth {

torch::Tensor ClassificationTask::loss(const torch::Tensor& output, const Batch& batch) const {
    return torch::nn::functional::cross_entropy(output, batch.label());
}

torch::Tensor ClassificationTask::sampleLosses(const torch::Tensor& output, const Batch& batch) const {
    namespace F = torch::nn::functional;
    return F::cross_entropy(output, batch.label(), F::CrossEntropyFuncOptions().reduction(torch::kNone));
}

torch::Tensor ClassificationTask::predict(const torch::Tensor& output) const {
    return output.argmax(1);
}

std::pair<torch::Tensor, torch::Tensor> ClassificationTask::predictWithConfidence(const torch::Tensor& output) const {
    const auto top = torch::softmax(output, 1).max(1);
    return {std::get<1>(top), std::get<0>(top)};
}

}  // namespace hearth
