#pragma once
// Batch: the named tensors of one mini-batch, of any dtype, one row per sample: "input" and
// "label" for images and tables; "input_ids", "attention_mask" and "label" for text. A Task
// reads the label it needs, a model the inputs it takes; the loop only moves batches around.
// `indices` (host int64) name the samples in the dataset the loader iterates.

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

namespace hearth {

class Batch {
public:
    static constexpr const char* kInput = "input";
    static constexpr const char* kLabel = "label";

    Batch() = default;
    // The classification batch of features or images.
    Batch(torch::Tensor inputs, torch::Tensor labels, torch::Tensor indices);

    bool has(const std::string& name) const;
    // Throws std::out_of_range naming the missing field and the fields present.
    const torch::Tensor& at(const std::string& name) const;
    void set(const std::string& name, torch::Tensor tensor);  // adds or replaces
    const std::vector<std::pair<std::string, torch::Tensor>>& fields() const { return fields_; }

    const torch::Tensor& input() const { return at(kInput); }
    const torch::Tensor& label() const { return at(kLabel); }
    int64_t size() const;  // rows (0 for an empty batch)

    // Every field through `fn` (pinning, device copies, layouts); indices stay as they are.
    template <typename Fn>
    Batch map(Fn&& fn) const {
        Batch out;
        out.indices = indices;
        out.fields_.reserve(fields_.size());
        for (const auto& [name, tensor] : fields_) out.fields_.emplace_back(name, fn(name, tensor));
        return out;
    }

    torch::Tensor indices;  // int64 [B], on the host

private:
    std::vector<std::pair<std::string, torch::Tensor>> fields_;
};

// Page-locked copies of every field (so host->device copies can run asynchronously).
Batch pinned(const Batch& batch);
// Every field on `device` (non_blocking for pinned sources); indices stay on the host.
Batch onDevice(const Batch& batch, torch::Device device, bool non_blocking);

}  // namespace hearth
