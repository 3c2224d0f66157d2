#pragma once
// ImageFolderDataset: one split's list of image files (see ImageFolderScan) as a Dataset of
// uint8 squares (DecodedImages) normalised per channel when a batch is built, or handed out raw
// for the training device to normalise. Files found bad before training (data.on_bad_file=skip)
// are left out; sourceIndex() still counts in the full list, so predictions find their file.

#include "engine/data/Dataset.h"
#include "engine/data/images/DecodedImages.h"
#include "engine/data/images/ImageFolderScan.h"

#include <memory>
#include <string>
#include <vector>

namespace hearth {

class ImageFolderDataset final : public Dataset {
public:
    // `keep`: positions in `files` (and in `images`) that this dataset serves, in order.
    ImageFolderDataset(std::shared_ptr<const DecodedImages> images, std::vector<ImageFile> files,
                       std::vector<int64_t> keep, std::vector<std::string> class_names,
                       PixelNormalization normalization);

    int64_t size() const override { return static_cast<int64_t>(keep_.size()); }
    Sample get(int64_t index) const override;
    Batch getBatch(const std::vector<int64_t>& indices) const override;
    Batch getRawBatch(const std::vector<int64_t>& indices) const override;
    std::vector<int64_t> sampleShape() const override;
    const std::vector<std::string>& classNames() const override { return class_names_; }
    int64_t sourceIndex(int64_t index) const override;
    std::string describe(int64_t index) const override;   // the file's path

private:
    int64_t checked(int64_t index) const;
    std::shared_ptr<const DecodedImages> images_;
    std::vector<ImageFile> files_;
    std::vector<int64_t> keep_;
    std::vector<std::string> class_names_;
    PixelNormalization normalization_;
};

}  // namespace hearth
