#pragma once
// Batch: the named tensors of one mini-batch, of any dtype, one row per sample: "input" and
// "label" for images and tables; "input_ids", "attention_mask" and "label" for text. A Task
// reads the label it needs, a model the inputs it takes; the loop only moves batches around.
// `indices` (host int64) name the samples in the dataset the loader iterates.
// Images may travel raw (uint8) with their normalisation pending (`raw_input`): the loader keeps
// them so on the host and the device that trains normalises them (see normalized()).

#include <torch/torch.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hearth {

// x/255 normalised as (x/255 - mean) / std: one formula wherever it runs (the dataset's own
// batches, loader workers, the training device), so every path gives the same floats.
struct PixelNormalization {
    double mean = 0.0;
    double std = 1.0;
    // Per channel when set (colour images: ImageNet's 0.485/0.456/0.406 and 0.229/0.224/0.225);
    // channels are dimension -3 of the raw tensor.
    std::vector<double> channel_mean, channel_std;
    torch::Tensor apply(const torch::Tensor& raw) const;   // uint8 -> float32, on raw's device
};

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
        out.raw_input = raw_input;
        out.fields_.reserve(fields_.size());
        for (const auto& [name, tensor] : fields_) out.fields_.emplace_back(name, fn(name, tensor));
        return out;
    }

    torch::Tensor indices;  // int64 [B], on the host
    // Set: "input" holds raw uint8 pixels still to be normalised this way.
    std::optional<PixelNormalization> raw_input;

private:
    std::vector<std::pair<std::string, torch::Tensor>> fields_;
};

// The batch cut into `parts` consecutive runs of rows (as tensor_split: sizes differ by at most
// one; fewer parts when the batch has fewer rows), every field and the indices alike; views.
std::vector<Batch> split(const Batch& batch, int64_t parts);
// Page-locked copies of every field (so host->device copies can run asynchronously).
Batch pinned(const Batch& batch);
// Every field on `device` (non_blocking for pinned sources); indices stay on the host. Raw
// inputs stay raw (copiedTo) or are normalised there (onDevice).
Batch copiedTo(const Batch& batch, torch::Device device, bool non_blocking);
Batch onDevice(const Batch& batch, torch::Device device, bool non_blocking);
// The batch with a pending normalisation applied where its input is (unchanged otherwise).
Batch normalized(Batch batch);
// A small host tensor on `device` without blocking the host: staged through pinned memory on
// CUDA (a pageable copy would synchronise with the device); itself on the CPU.
torch::Tensor toDeviceAsync(const torch::Tensor& host, torch::Device device);

}  // namespace hearth
