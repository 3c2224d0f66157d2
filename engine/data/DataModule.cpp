#include "engine/data/DataModule.h"

#include "engine/data/CsvDataset.h"
#include "engine/data/DataError.h"
#include "engine/data/IdxDataset.h"
#include "engine/data/Permutation.h"
#include "engine/data/SplitPlan.h"
#include "engine/data/CacheFiles.h"
#include "engine/data/images/ImageFolderSplits.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace hearth {
namespace {

std::string shapeText(const std::vector<int64_t>& shape) {
    std::string text;
    for (size_t i = 0; i < shape.size(); ++i) text += (i ? "x" : "") + std::to_string(shape[i]);
    return text;
}

DataSplits loadIdxSplits(const DataConfig& config, uint64_t seed) {
    checkFraction("data.val_fraction", config.val_fraction);
    auto train_file = IdxDataset::load(config.path, IdxDataset::Split::Train);
    auto test_file = IdxDataset::load(config.path, IdxDataset::Split::Test);
    // Both splits use the training images' statistics (Fashion-MNIST: 0.2860 / 0.3530).
    test_file->setNormalization(train_file->mean(), train_file->std());

    const Indices order = seededPermutation(train_file->size(), seed);
    const size_t n_val = fractionOf(order.size(), config.val_fraction);
    SplitIndices s{slice(order, n_val, order.size()), slice(order, 0, n_val),
                   seededPermutation(test_file->size(), seed ^ kTestSeedSalt)};
    applyLimit(s, config.limit);

    DataSplits splits;
    splits.train = sortedSubset(train_file, std::move(s.train));
    splits.val = sortedSubset(train_file, std::move(s.val));
    splits.test = sortedSubset(test_file, std::move(s.test));
    splits.class_names = train_file->classNames();
    splits.is_image = true;
    splits.normalization.scaling = {{train_file->mean()}, {train_file->std()}};
    const std::string name = IdxDataset::isDigitsFolder(config.path) ? "MNIST" : "Fashion-MNIST";
    splits.description = name + " (IDX) " + countsText(splits) + ", " +
                         shapeText(train_file->sampleShape()) + ", " +
                         std::to_string(splits.class_names.size()) + " classes";
    return splits;
}

// An explicit val/test file: same header as the training file, labels among its classes.
std::shared_ptr<CsvDataset> loadCompanionCsv(const std::string& path, const CsvDataset& train,
                                             const std::string& label_column) {
    CsvTable table = readCsvFile(path);
    if (table.header != train.columns())
        throw DataError(path + ": header " + bracketList(table.header) + " differs from " +
                        train.path() + "'s " + bracketList(train.columns()));
    return std::make_shared<CsvDataset>(std::move(table), label_column, &train.classNames());
}

DataSplits loadCsvSplits(const DataConfig& config, uint64_t seed) {
    auto train_file = CsvDataset::load(config.path, config.label_column);
    if (train_file->size() == 0) throw DataError(config.path + ": no data rows after the header");
    std::shared_ptr<CsvDataset> val_file, test_file;
    if (config.val_path) val_file = loadCompanionCsv(*config.val_path, *train_file, config.label_column);
    if (config.test_path) test_file = loadCompanionCsv(*config.test_path, *train_file, config.label_column);
    auto rowsOf = [](const std::shared_ptr<CsvDataset>& f) { return f ? std::optional<int64_t>(f->size()) : std::nullopt; };
    SplitIndices s = planFileSplits(train_file->size(), rowsOf(val_file), rowsOf(test_file), config, seed, config.path);

    // Standardise every split with the statistics of the training rows alone.
    const FeatureScaling scaling = train_file->computeScaling(s.train);
    train_file->standardize(scaling);
    if (val_file) val_file->standardize(scaling);
    if (test_file) test_file->standardize(scaling);

    DataSplits splits;
    splits.train = sortedSubset(train_file, std::move(s.train));
    splits.val = sortedSubset(val_file ? val_file : train_file, std::move(s.val));
    splits.test = sortedSubset(test_file ? test_file : train_file, std::move(s.test));
    splits.class_names = train_file->classNames();
    splits.is_image = false;
    splits.normalization = {train_file->featureNames(), scaling};
    for (const auto* file : {train_file.get(), val_file.get(), test_file.get()})
        if (file && !file->encodingNote().empty()) splits.notes.push_back(file->encodingNote());
    splits.description = "CSV " + std::filesystem::path(config.path).filename().string() + " " +
                         countsText(splits) + ", " + std::to_string(train_file->featureCount()) +
                         " features, " + std::to_string(splits.class_names.size()) + " classes";
    return splits;
}

}  // namespace

DataSplits loadDataSplits(const DataConfig& config, uint64_t seed, const TextSplitOptions& text) {
    if (config.kind == "idx") return loadIdxSplits(config, seed);
    if (config.kind == "csv") return loadCsvSplits(config, seed);
    if (isTextKind(config.kind)) return loadTextSplits(config, seed, text);
    if (config.kind == "image_folder") {
        ImageFolderSplitOptions images;
        images.cache_dir = config.cache_decoded ? defaultCacheDir("images") : "";
        images.log = text.log;
        return loadImageFolderSplits(config, seed, images);
    }
    throw ConfigError("data.kind",
                      "unknown data kind '" + config.kind + "' (expected idx, csv, text_csv, wordnet or image_folder)");
}

}  // namespace hearth
