#pragma once
// CsvDataset: a tabular classification set from a CSV file with a header row: one label column
// (by name), every other column a numeric feature, standardised with training statistics.

#include "engine/data/formats/CsvReader.h"
#include "engine/data/Dataset.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hearth {

class CsvDataset final : public Dataset {
public:
    // Reads `path` and takes `label_column` as the label. The classes are the file's distinct
    // labels, sorted (numerically when all are numbers) unless `classes` is given: then a label
    // outside it is a DataError (val/test files must not bring labels unseen in training).
    // Features are unscaled until standardize() is called.
    static std::shared_ptr<CsvDataset> load(const std::string& path, const std::string& label_column,
                                            const std::vector<std::string>* classes = nullptr);

    CsvDataset(CsvTable table, const std::string& label_column,
               const std::vector<std::string>* classes = nullptr);

    int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
    Sample get(int64_t index) const override;
    Batch getBatch(const std::vector<int64_t>& indices) const override;
    std::vector<int64_t> sampleShape() const override { return {featureCount()}; }
    const std::vector<std::string>& classNames() const override { return class_names_; }
    // "col=value, ..." with the row's cells as written in the file.
    std::string describe(int64_t index) const override;

    // Mean and standard deviation of each feature over `rows` (all rows when empty); a
    // constant feature gets std 1 so that standardising leaves it at 0 instead of dividing by 0.
    FeatureScaling computeScaling(const std::vector<int64_t>& rows = {}) const;
    // Applies (x - mean) / std to every row; not thread-safe with batch building.
    void standardize(const FeatureScaling& scaling);
    const FeatureScaling& scaling() const { return scaling_; }

    const std::string& path() const { return path_; }
    const std::string& encodingNote() const { return encoding_note_; }  // see CsvTable
    const std::vector<std::string>& columns() const { return columns_; }
    const std::vector<std::string>& featureNames() const { return feature_names_; }
    int64_t featureCount() const { return static_cast<int64_t>(feature_names_.size()); }
    // Label value as written in the file -> class index.
    const std::map<std::string, int64_t>& labelIndex() const { return label_index_; }
    int64_t label(int64_t index) const { return labels_.at(static_cast<size_t>(index)); }
    int64_t line(int64_t index) const { return lines_.at(static_cast<size_t>(index)); }

private:
    void checkIndex(int64_t index) const;

    std::string path_;
    std::string encoding_note_;
    std::vector<std::string> columns_;
    std::vector<std::string> feature_names_;
    std::vector<std::string> class_names_;
    std::map<std::string, int64_t> label_index_;
    std::vector<std::vector<std::string>> cells_;   // raw cells per row, for describe()
    std::vector<int64_t> lines_;
    std::vector<double> raw_;                        // row-major [rows, features]
    std::vector<int64_t> labels_;
    FeatureScaling scaling_;
    torch::Tensor features_;                         // float32 [rows, features], standardised
    torch::Tensor label_tensor_;                     // int64 [rows]
};

// A feature's cell (`column` of `record`, in the file at `path` whose header is `header`) as the
// number a model reads: DataError "<path>:<line>, column 'x': 'abc' is not a number" (or "a finite
// number"). Locale-independent.
double featureValue(const std::string& path, const std::vector<std::string>& header, const CsvRecord& record,
                    size_t column);
// A label's cell as the class it names: the text without the blanks around it ("" when empty).
std::string labelValue(const std::string& cell);

// The distinct labels sorted numerically when every one is a number, else lexicographically.
std::vector<std::string> sortedClassNames(std::vector<std::string> labels);

}  // namespace hearth
