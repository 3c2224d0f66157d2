#include "engine/data/images/ImageFolderDataset.h"

#include "engine/data/DataError.h"

#include <stdexcept>

namespace hearth {

ImageFolderDataset::ImageFolderDataset(std::shared_ptr<const DecodedImages> images, std::vector<ImageFile> files,
                                       std::vector<int64_t> keep, std::vector<std::string> class_names,
                                       PixelNormalization normalization)
    : images_(std::move(images)),
      files_(std::move(files)),
      keep_(std::move(keep)),
      class_names_(std::move(class_names)),
      normalization_(std::move(normalization)) {}

int64_t ImageFolderDataset::checked(int64_t index) const {
    if (index < 0 || index >= size())
        throw std::out_of_range("ImageFolderDataset: index " + std::to_string(index) + " outside 0.." +
                                std::to_string(size() - 1));
    return keep_[static_cast<size_t>(index)];
}

Sample ImageFolderDataset::get(int64_t index) const {
    const int64_t i = checked(index);
    return {normalization_.apply(images_->square(i)), files_[static_cast<size_t>(i)].label};
}

Batch ImageFolderDataset::getBatch(const std::vector<int64_t>& indices) const {
    return normalized(getRawBatch(indices));
}

Batch ImageFolderDataset::getRawBatch(const std::vector<int64_t>& indices) const {
    const auto n = static_cast<int64_t>(indices.size());
    std::vector<int64_t> rows(indices.size());
    auto labels = torch::empty({n}, torch::kInt64);
    for (size_t k = 0; k < indices.size(); ++k) {
        rows[k] = checked(indices[k]);
        labels.data_ptr<int64_t>()[k] = files_[static_cast<size_t>(rows[k])].label;
    }
    auto pixels = torch::empty({n, images_->channels(), images_->size(), images_->size()}, torch::kUInt8);
    try {
        images_->fill(rows, pixels);
    } catch (const DataError& e) {
        throw DataError(std::string(e.what()) + " (found while training; data.on_bad_file=skip decodes every image "
                                                "before training and leaves the unreadable ones out)");
    }
    Batch batch(pixels, labels, torch::tensor(indices, torch::kInt64).reshape({n}));
    batch.raw_input = normalization_;
    return batch;
}

std::vector<int64_t> ImageFolderDataset::sampleShape() const {
    return {images_->channels(), images_->size(), images_->size()};
}

int64_t ImageFolderDataset::sourceIndex(int64_t index) const { return checked(index); }

std::string ImageFolderDataset::describe(int64_t index) const {
    return files_[static_cast<size_t>(checked(index))].path;
}

}  // namespace hearth
