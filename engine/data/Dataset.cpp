#include "engine/data/Dataset.h"

#include <stdexcept>

namespace hearth {

Batch Dataset::getBatch(const std::vector<int64_t>& indices) const {
    std::vector<torch::Tensor> inputs;
    inputs.reserve(indices.size());
    std::vector<int64_t> labels;
    labels.reserve(indices.size());
    for (int64_t i : indices) {
        Sample s = get(i);
        inputs.push_back(std::move(s.input));
        labels.push_back(s.label);
    }
    const auto n = static_cast<int64_t>(indices.size());
    torch::Tensor stacked;
    if (inputs.empty()) {
        std::vector<int64_t> shape = sampleShape();
        shape.insert(shape.begin(), 0);
        stacked = torch::empty(shape, torch::kFloat32);
    } else {
        stacked = torch::stack(inputs);
    }
    return Batch(stacked, torch::tensor(labels, torch::kInt64).reshape({n}),
                 torch::tensor(indices, torch::kInt64).reshape({n}));
}

std::string Dataset::describe(int64_t index) const {
    const int64_t label = get(index).label;
    const auto& names = classNames();
    const std::string name = label >= 0 && label < static_cast<int64_t>(names.size())
                                 ? names[static_cast<size_t>(label)]
                                 : std::to_string(label);
    return "#" + std::to_string(sourceIndex(index)) + " (" + name + ")";
}

Subset::Subset(std::shared_ptr<const Dataset> parent, std::vector<int64_t> indices)
    : parent_(std::move(parent)), indices_(std::move(indices)) {
    if (!parent_) throw std::invalid_argument("Subset: no parent dataset");
    const int64_t n = parent_->size();
    for (int64_t i : indices_)
        if (i < 0 || i >= n)
            throw std::out_of_range("Subset: index " + std::to_string(i) +
                                    " outside a dataset of " + std::to_string(n) + " samples");
}

namespace {
void checkIndex(int64_t index, int64_t size) {
    if (index < 0 || index >= size)
        throw std::out_of_range("Subset: index " + std::to_string(index) + " outside 0.." +
                                std::to_string(size - 1));
}
}  // namespace

Sample Subset::get(int64_t index) const {
    checkIndex(index, size());
    return parent_->get(indices_[static_cast<size_t>(index)]);
}

std::vector<int64_t> Subset::parentIndices(const std::vector<int64_t>& indices) const {
    std::vector<int64_t> mapped;
    mapped.reserve(indices.size());
    for (int64_t i : indices) {
        checkIndex(i, size());
        mapped.push_back(indices_[static_cast<size_t>(i)]);
    }
    return mapped;
}

// Indices name samples of this view (the dataset the loader iterates), not of the parent.
Batch Subset::renamed(Batch batch, const std::vector<int64_t>& indices) {
    batch.indices = torch::tensor(indices, torch::kInt64).reshape({static_cast<int64_t>(indices.size())});
    return batch;
}

Batch Subset::getBatch(const std::vector<int64_t>& indices) const {
    return renamed(parent_->getBatch(parentIndices(indices)), indices);
}

Batch Subset::getRawBatch(const std::vector<int64_t>& indices) const {
    return renamed(parent_->getRawBatch(parentIndices(indices)), indices);
}

int64_t Subset::sourceIndex(int64_t index) const {
    checkIndex(index, size());
    return parent_->sourceIndex(indices_[static_cast<size_t>(index)]);
}

int64_t Subset::sampleLength(int64_t index) const {
    checkIndex(index, size());
    return parent_->sampleLength(indices_[static_cast<size_t>(index)]);
}

std::string Subset::describe(int64_t index) const {
    checkIndex(index, size());
    return parent_->describe(indices_[static_cast<size_t>(index)]);
}

}  // namespace hearth
