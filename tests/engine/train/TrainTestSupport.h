#pragma once
// Helpers shared by the engine/train tests: synthetic separable data (in memory and as CSV),
// an event recorder, and small configs that train in well under a second per epoch.

#include "engine/config/ExperimentConfig.h"
#include "engine/data/Dataset.h"
#include "engine/events/Events.h"
#include "engine/models/ModelRegistry.h"

#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace hearth::testing {

// Gaussian blobs: class c is centred at +3 on feature c (mod features); noise sd 1.
inline void makeBlobs(int64_t n, int64_t features, int64_t classes, uint64_t seed, std::vector<float>& x,
                      std::vector<int64_t>& y) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> noise(0.0f, 1.0f);
    x.assign(static_cast<size_t>(n * features), 0.0f);
    y.assign(static_cast<size_t>(n), 0);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t c = i % classes;
        y[static_cast<size_t>(i)] = c;
        for (int64_t f = 0; f < features; ++f) {
            x[static_cast<size_t>(i * features + f)] = noise(rng) + (f == c % features ? 3.0f : 0.0f);
        }
    }
}

// An in-memory Dataset of blobs with sample shape `shape` (its product is the feature count).
class BlobDataset final : public Dataset {
public:
    BlobDataset(int64_t n, std::vector<int64_t> shape, int64_t classes, uint64_t seed,
                torch::ScalarType dtype = torch::kFloat32)
        : shape_(std::move(shape)) {
        int64_t features = 1;
        for (auto d : shape_) features *= d;
        std::vector<float> x;
        std::vector<int64_t> y;
        makeBlobs(n, features, classes, seed, x, y);
        std::vector<int64_t> full{n};
        full.insert(full.end(), shape_.begin(), shape_.end());
        inputs_ = torch::tensor(x).reshape(full).to(dtype);
        labels_ = torch::tensor(y, torch::kInt64);
        for (int64_t c = 0; c < classes; ++c) names_.push_back("class" + std::to_string(c));
    }
    int64_t size() const override { return labels_.size(0); }
    Sample get(int64_t i) const override { return Sample{inputs_[i], labels_[i].item<int64_t>()}; }
    Batch getBatch(const std::vector<int64_t>& indices) const override {
        const auto idx = torch::tensor(indices, torch::kInt64);
        return Batch{inputs_.index_select(0, idx), labels_.index_select(0, idx), idx};
    }
    std::vector<int64_t> sampleShape() const override { return shape_; }
    const std::vector<std::string>& classNames() const override { return names_; }

private:
    std::vector<int64_t> shape_;
    torch::Tensor inputs_, labels_;
    std::vector<std::string> names_;
};

inline DataSplits blobSplits(int64_t train, int64_t val, int64_t test, const std::vector<int64_t>& shape = {8},
                             int64_t classes = 3, torch::ScalarType dtype = torch::kFloat32) {
    DataSplits s;
    s.train = std::make_shared<BlobDataset>(train, shape, classes, 1, dtype);
    s.val = std::make_shared<BlobDataset>(val, shape, classes, 2, dtype);
    s.test = std::make_shared<BlobDataset>(test, shape, classes, 3, dtype);
    s.class_names = s.train->classNames();
    s.description = "blobs";
    return s;
}

// Writes a blob CSV (label column "label", features f0..f{k-1}) and returns its path.
inline std::string writeBlobCsv(const std::string& path, int64_t n, int64_t features = 8, int64_t classes = 3) {
    std::vector<float> x;
    std::vector<int64_t> y;
    makeBlobs(n, features, classes, 7, x, y);
    std::ofstream out(path);
    for (int64_t f = 0; f < features; ++f) out << "f" << f << ",";
    out << "label\n";
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t f = 0; f < features; ++f) out << x[static_cast<size_t>(i * features + f)] << ",";
        out << "c" << y[static_cast<size_t>(i)] << "\n";
    }
    return path;
}

// A small MLP run on a blob CSV: 3 epochs of a few dozen steps.
inline ExperimentConfig blobCsvConfig(const std::string& csv_path) {
    ExperimentConfig c;
    c.name = "blobs";
    c.data.kind = "csv";
    c.data.path = csv_path;
    c.data.val_fraction = 0.2;
    c.data.test_fraction = 0.2;
    c.model.name = "mlp";
    c.model.hidden = {32};
    c.model.dropout = 0.1;
    c.optimizer.name = "adam";
    c.optimizer.lr = 0.01;
    c.trainer.max_epochs = 3;
    c.trainer.batch_size = 16;
    c.trainer.num_workers = 0;
    c.trainer.log_every_n_steps = 1;
    return c;
}

// A model for `c` on `s`, its initial weights drawn after manual_seed(seed).
inline std::shared_ptr<ClassifierImpl> seededModel(const ExperimentConfig& c, const DataSplits& s, uint64_t seed = 5) {
    torch::manual_seed(seed);
    return createModel(c.model, ModelInput{s.train->sampleShape(), static_cast<int64_t>(s.class_names.size())});
}

// Every parameter, flattened into one tensor (to compare two models' weights).
inline torch::Tensor flatWeights(ClassifierImpl& m) {
    std::vector<torch::Tensor> parts;
    for (const auto& p : m.parameters()) parts.push_back(p.detach().flatten());
    return torch::cat(parts);
}

// Records every event; an optional hook sees each one first (on the engine thread).
class RecordingSink final : public EventSink {
public:
    std::function<void(const Event&)> hook;
    std::vector<Event> events;
    void onEvent(const Event& e) override {
        if (hook) hook(e);
        events.push_back(e);
    }
    template <typename T>
    std::vector<T> all() const {
        std::vector<T> out;
        for (const auto& e : events)
            if (const auto* v = std::get_if<T>(&e)) out.push_back(*v);
        return out;
    }
    template <typename T>
    int count() const {
        return static_cast<int>(all<T>().size());
    }
};

}  // namespace hearth::testing
