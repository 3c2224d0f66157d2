#pragma once
// Dataset: a finite, indexable set of (input, label) samples with the class names it carries;
// getBatch() gives the named tensors of a Batch ("input" float32 [B, ...sampleShape], "label" int64 [B]).
// In-memory datasets override getBatch() with one index_select instead of per-sample stacking.

#include "engine/data/Batch.h"

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hearth {

struct Sample {
    torch::Tensor input;   // float32, shape sampleShape()
    int64_t label = 0;
};


class Dataset {
public:
    virtual ~Dataset() = default;
    virtual int64_t size() const = 0;
    virtual Sample get(int64_t index) const = 0;
    // Default: stacks get(i). Must be safe to call from several loader threads at once.
    virtual Batch getBatch(const std::vector<int64_t>& indices) const;
    // The batch as stored, for the device that trains to finish: images as uint8 with their
    // normalisation pending (Batch::raw_input), a quarter of the bytes to copy. normalized() of it
    // equals getBatch() exactly. Default: getBatch() (nothing left to do).
    virtual Batch getRawBatch(const std::vector<int64_t>& indices) const { return getBatch(indices); }
    virtual std::vector<int64_t> sampleShape() const = 0;
    virtual const std::vector<std::string>& classNames() const = 0;
    // Index of sample `index` in its source file (for per-sample predictions).
    virtual int64_t sourceIndex(int64_t index) const { return index; }
    // A short human-readable rendering of the raw sample (tabular: the CSV row's values).
    virtual std::string describe(int64_t index) const;
    // Tokens of a text sample (what length bucketing sorts by); 0 for fixed-size samples.
    virtual int64_t sampleLength(int64_t /*index*/) const { return 0; }
};

// A view of `indices` of a parent dataset (train/val splits, limits).
class Subset final : public Dataset {
public:
    Subset(std::shared_ptr<const Dataset> parent, std::vector<int64_t> indices);
    int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
    Sample get(int64_t index) const override;
    Batch getBatch(const std::vector<int64_t>& indices) const override;
    Batch getRawBatch(const std::vector<int64_t>& indices) const override;
    std::vector<int64_t> sampleShape() const override { return parent_->sampleShape(); }
    const std::vector<std::string>& classNames() const override { return parent_->classNames(); }
    int64_t sourceIndex(int64_t index) const override;
    std::string describe(int64_t index) const override;
    int64_t sampleLength(int64_t index) const override;
private:
    std::vector<int64_t> parentIndices(const std::vector<int64_t>& indices) const;
    static Batch renamed(Batch batch, const std::vector<int64_t>& indices);
    std::shared_ptr<const Dataset> parent_;
    std::vector<int64_t> indices_;
};

// Per-feature mean and standard deviation (population, like scikit-learn's StandardScaler).
struct FeatureScaling {
    std::vector<double> mean, std;
};

// The three splits of an experiment, built from DataConfig (see DataModule.h).
struct DataSplits {
    std::shared_ptr<const Dataset> train, val, test;
    std::vector<std::string> class_names;
    std::string description;   // "Fashion-MNIST (IDX) 55000/5000/10000, 1x28x28, 10 classes"
    bool is_image = false;     // inputs are [C,H,W] images (the GUI shows them)
    std::vector<std::string> notes;  // what the user should know about how the files were read
    // Text data: what a transformer needs to know about its inputs (vocab_size 0 otherwise).
    struct Text {
        int64_t vocab_size = 0;
        int64_t max_length = 0;
        int64_t pad_id = 0;
        std::string tokenizer;       // the file the tokenizer was read from
    } text;
    // What every split's inputs were normalised with, which a prediction on new inputs applies
    // again: csv, the training rows' mean and std per feature (`features`: the model's input
    // columns, in order); idx, the training images' pixel mean and std (one value each); an image
    // folder, ImageNet's per channel (one value for grey images). Empty for texts.
    struct Normalization {
        std::vector<std::string> features;
        FeatureScaling scaling;
    } normalization;
};

}  // namespace hearth
