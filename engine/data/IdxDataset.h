#pragma once
// IdxDataset: one split of MNIST or Fashion-MNIST read from its IDX files (gzip or raw), kept as
// uint8 in memory and converted to normalised float32 when a batch is built (on loader workers),
// or handed out raw (getRawBatch) for the training device to normalise.

#include "engine/data/Dataset.h"
#include "engine/data/formats/IdxFile.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hearth {

class IdxDataset final : public Dataset {
public:
    enum class Split { Train, Test };

    // Loads "<prefix>-images-idx3-ubyte[.gz]" and "<prefix>-labels-idx1-ubyte[.gz]" from
    // `folder` (prefix "train" or "t10k"). Pixels are normalised with the statistics of the
    // images loaded, unless setNormalization() supplies those of the training split.
    static std::shared_ptr<IdxDataset> load(const std::string& folder, Split split);

    // Reads an image/label file pair directly (tests, unusual names).
    IdxDataset(const std::string& images_path, const std::string& labels_path,
               std::vector<std::string> class_names);

    int64_t size() const override { return count_; }
    Sample get(int64_t index) const override;
    Batch getBatch(const std::vector<int64_t>& indices) const override;
    Batch getRawBatch(const std::vector<int64_t>& indices) const override;
    std::vector<int64_t> sampleShape() const override { return {1, rows_, cols_}; }
    const std::vector<std::string>& classNames() const override { return class_names_; }

    // x/255 is normalised as (x/255 - mean) / std. Defaults to the mean and standard deviation
    // of this dataset's own pixels (0.2860 / 0.3530 for the Fashion-MNIST training file).
    void setNormalization(double mean, double std);
    double mean() const { return normalization_.mean; }
    double std() const { return normalization_.std; }

    const std::string& imagesPath() const { return images_path_; }
    int64_t label(int64_t index) const;

    // "Fashion-MNIST" or "MNIST" from the folder name (digits when it says mnist but not fashion).
    static bool isDigitsFolder(const std::string& folder);
    static std::vector<std::string> classNamesForFolder(const std::string& folder);

private:
    std::string images_path_;
    std::vector<std::string> class_names_;
    int64_t count_ = 0, rows_ = 0, cols_ = 0;
    torch::Tensor images_;   // uint8 [N, 1, rows, cols]
    torch::Tensor labels_;   // int64 [N]
    PixelNormalization normalization_;
};

}  // namespace hearth
