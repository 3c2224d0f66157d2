#include "engine/text/TextDataset.h"

#include <algorithm>
#include <stdexcept>

namespace hearth {

TextDataset::TextDataset(TokenizedCorpus corpus, std::vector<std::string> texts, std::vector<int64_t> labels,
                         std::vector<int64_t> source_index, std::vector<std::string> class_names,
                         TextDatasetOptions options)
    : corpus_(std::move(corpus)),
      texts_(std::move(texts)),
      labels_(std::move(labels)),
      source_index_(std::move(source_index)),
      class_names_(std::move(class_names)),
      options_(options) {
    const auto n = static_cast<int64_t>(labels_.size());
    if (corpus_.size() != n || static_cast<int64_t>(texts_.size()) != n ||
        static_cast<int64_t>(source_index_.size()) != n)
        throw std::invalid_argument("TextDataset: " + std::to_string(corpus_.size()) + " sequences, " +
                                    std::to_string(texts_.size()) + " texts, " + std::to_string(n) + " labels and " +
                                    std::to_string(source_index_.size()) + " source indices differ in number");
    for (int64_t i = 0; i < n; ++i)
        if (corpus_.length(i) > options_.max_length)
            throw std::invalid_argument("TextDataset: sequence " + std::to_string(i) + " is longer than max_length");
}

void TextDataset::checkIndex(int64_t index) const {
    if (index < 0 || index >= size())
        throw std::out_of_range("TextDataset: index " + std::to_string(index) + " outside 0.." +
                                std::to_string(size() - 1));
}

Sample TextDataset::get(int64_t index) const {
    checkIndex(index);
    const int64_t length = corpus_.length(index);
    auto ids = torch::empty({length}, torch::kInt64);
    std::copy_n(corpus_.sequence(index), length, ids.data_ptr<int64_t>());
    return Sample{ids, labels_[static_cast<size_t>(index)]};
}

Batch TextDataset::getBatch(const std::vector<int64_t>& indices) const {
    const auto rows = static_cast<int64_t>(indices.size());
    int64_t width = options_.pad_to_max_length ? options_.max_length : 1;
    for (int64_t i : indices) {
        checkIndex(i);
        if (!options_.pad_to_max_length) width = std::max(width, corpus_.length(i));
    }
    auto ids = torch::full({rows, width}, static_cast<int64_t>(options_.pad_id), torch::kInt64);
    auto mask = torch::zeros({rows, width}, torch::kInt64);
    auto labels = torch::empty({rows}, torch::kInt64);
    int64_t* id_out = ids.data_ptr<int64_t>();
    int64_t* mask_out = mask.data_ptr<int64_t>();
    int64_t* label_out = labels.data_ptr<int64_t>();
    bool padded = false;
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = indices[static_cast<size_t>(r)];
        const int64_t length = corpus_.length(i);
        padded |= length < width;
        std::copy_n(corpus_.sequence(i), length, id_out + r * width);
        std::fill_n(mask_out + r * width, length, int64_t{1});
        label_out[r] = labels_[static_cast<size_t>(i)];
    }
    Batch batch;
    batch.set(kInputIds, ids);
    // Without padding every token attends: no mask, so attention may take the FlashAttention
    // kernel (it takes no mask). Known here on the host, without a device sync.
    if (padded) batch.set(kAttentionMask, mask);
    batch.set(Batch::kLabel, labels);
    batch.indices = torch::tensor(indices, torch::kInt64).reshape({rows});
    return batch;
}

int64_t TextDataset::sourceIndex(int64_t index) const {
    checkIndex(index);
    return source_index_[static_cast<size_t>(index)];
}

int64_t TextDataset::sampleLength(int64_t index) const {
    checkIndex(index);
    return corpus_.length(index);
}

const std::string& TextDataset::text(int64_t index) const {
    checkIndex(index);
    return texts_[static_cast<size_t>(index)];
}

std::string TextDataset::describe(int64_t index) const {
    return text(index);
}

}  // namespace hearth
