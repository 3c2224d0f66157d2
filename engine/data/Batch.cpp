#include "engine/data/Batch.h"

#include <algorithm>
#include <stdexcept>

namespace hearth {

Batch::Batch(torch::Tensor inputs, torch::Tensor labels, torch::Tensor indices_) : indices(std::move(indices_)) {
    fields_.emplace_back(kInput, std::move(inputs));
    fields_.emplace_back(kLabel, std::move(labels));
}

bool Batch::has(const std::string& name) const {
    for (const auto& field : fields_) {
        if (field.first == name) return true;
    }
    return false;
}

const torch::Tensor& Batch::at(const std::string& name) const {
    for (const auto& field : fields_) {
        if (field.first == name) return field.second;
    }
    std::string present;
    for (const auto& field : fields_) present += (present.empty() ? "" : ", ") + field.first;
    throw std::out_of_range("the batch has no field '" + name + "' (it has: " +
                            (present.empty() ? std::string("none") : present) + ")");
}

void Batch::set(const std::string& name, torch::Tensor tensor) {
    for (auto& field : fields_) {
        if (field.first == name) {
            field.second = std::move(tensor);
            return;
        }
    }
    fields_.emplace_back(name, std::move(tensor));
}

int64_t Batch::size() const {
    if (indices.defined()) return indices.numel();
    return fields_.empty() || fields_.front().second.dim() == 0 ? 0 : fields_.front().second.size(0);
}

std::vector<Batch> split(const Batch& batch, int64_t parts) {
    const int64_t rows = batch.size();
    parts = std::max<int64_t>(1, std::min(parts, std::max<int64_t>(rows, 1)));
    std::vector<Batch> out(static_cast<size_t>(parts));
    for (const auto& [name, tensor] : batch.fields()) {
        const auto pieces = tensor.tensor_split(parts, 0);
        for (size_t i = 0; i < out.size(); ++i) out[i].set(name, pieces[i]);
    }
    const auto indices = batch.indices.defined() ? batch.indices.tensor_split(parts, 0) : std::vector<torch::Tensor>{};
    for (size_t i = 0; i < out.size(); ++i) {
        if (!indices.empty()) out[i].indices = indices[i];
        out[i].raw_input = batch.raw_input;
    }
    return out;
}

Batch pinned(const Batch& batch) {
    return batch.map([](const std::string&, const torch::Tensor& t) { return t.pin_memory(); });
}

torch::Tensor PixelNormalization::apply(const torch::Tensor& raw) const {
    torch::Tensor x = raw.to(torch::kFloat32).div_(255.0);
    if (channel_mean.empty()) return x.sub_(mean).div_(std);
    // One in-place op per channel: no small tensor of statistics to copy to the device.
    for (size_t c = 0; c < channel_mean.size(); ++c)
        x.select(-3, static_cast<int64_t>(c)).sub_(channel_mean[c]).div_(channel_std[c]);
    return x;
}

Batch copiedTo(const Batch& batch, torch::Device device, bool non_blocking) {
    const auto target = torch::TensorOptions().device(device);
    return batch.map([&](const std::string&, const torch::Tensor& t) { return t.to(target, non_blocking); });
}

Batch onDevice(const Batch& batch, torch::Device device, bool non_blocking) {
    return normalized(copiedTo(batch, device, non_blocking));
}

Batch normalized(Batch batch) {
    if (!batch.raw_input) return batch;
    batch.set(Batch::kInput, batch.raw_input->apply(batch.input()));
    batch.raw_input.reset();
    return batch;
}

torch::Tensor toDeviceAsync(const torch::Tensor& host, torch::Device device) {
    if (device.is_cpu()) return host;
    return host.pin_memory().to(torch::TensorOptions().device(device), /*non_blocking=*/true);
}

}  // namespace hearth
