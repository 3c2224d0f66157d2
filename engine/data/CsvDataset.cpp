#include "engine/data/CsvDataset.h"

#include "engine/data/DataError.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

namespace hearth {
namespace {

std::string trim(const std::string& s) {
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string::npos) return "";
    const auto last = s.find_last_not_of(" \t");
    return s.substr(first, last - first + 1);
}

// Locale-independent (the GUI sets the user's locale, which would make strtod read "1,5").
std::optional<double> parseNumber(const std::string& cell) {
    std::string text = trim(cell);
    if (!text.empty() && text[0] == '+') text.erase(0, 1);
    if (text.empty()) return std::nullopt;
    double value = 0.0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

}  // namespace

double featureValue(const std::string& path, const std::vector<std::string>& header, const CsvRecord& record,
                    size_t column) {
    const std::string& cell = record.fields.at(column);
    const auto value = parseNumber(cell);
    if (!value || !std::isfinite(*value))
        throw DataError(path + ":" + std::to_string(record.line) + ", column '" + header.at(column) + "': '" + cell +
                        "' is not " + (value ? "a finite number" : "a number"));
    return *value;
}

std::string labelValue(const std::string& cell) { return trim(cell); }

std::vector<std::string> sortedClassNames(std::vector<std::string> labels) {
    std::sort(labels.begin(), labels.end());
    labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
    const bool numeric = std::all_of(labels.begin(), labels.end(),
                                     [](const std::string& l) { return parseNumber(l).has_value(); });
    if (numeric)
        std::stable_sort(labels.begin(), labels.end(), [](const std::string& a, const std::string& b) {
            return *parseNumber(a) < *parseNumber(b);
        });
    return labels;
}

std::shared_ptr<CsvDataset> CsvDataset::load(const std::string& path, const std::string& label_column,
                                             const std::vector<std::string>* classes) {
    return std::make_shared<CsvDataset>(readCsvFile(path), label_column, classes);
}

CsvDataset::CsvDataset(CsvTable table, const std::string& label_column, const std::vector<std::string>* classes)
    : path_(std::move(table.path)), encoding_note_(std::move(table.encoding_note)), columns_(std::move(table.header)) {
    for (size_t c = 0; c < columns_.size(); ++c)
        if (std::find(columns_.begin(), columns_.begin() + static_cast<std::ptrdiff_t>(c), columns_[c]) !=
            columns_.begin() + static_cast<std::ptrdiff_t>(c))
            throw DataError(path_ + ":1: column '" + columns_[c] + "' appears twice in the header");
    const size_t label_col = headerColumn(path_, columns_, label_column, "label", "data.label_column");
    std::vector<size_t> feature_cols;
    for (size_t c = 0; c < columns_.size(); ++c)
        if (c != label_col) {
            feature_cols.push_back(c);
            feature_names_.push_back(columns_[c]);
        }
    if (feature_cols.empty())
        throw DataError(path_ + ": the label column '" + label_column + "' is the only column");

    std::vector<std::string> label_values;
    const size_t rows = table.records.size();
    raw_.reserve(rows * feature_cols.size());
    for (auto& record : table.records) {
        for (size_t c : feature_cols) raw_.push_back(featureValue(path_, columns_, record, c));
        label_values.push_back(labelValue(record.fields[label_col]));
        if (label_values.back().empty())
            throw DataError(path_ + ":" + std::to_string(record.line) + ", column '" + label_column +
                            "': the label is empty");
        lines_.push_back(record.line);
        cells_.push_back(std::move(record.fields));
    }

    class_names_ = classes ? *classes : sortedClassNames(label_values);
    for (size_t i = 0; i < class_names_.size(); ++i)
        label_index_[class_names_[i]] = static_cast<int64_t>(i);
    labels_.reserve(rows);
    for (size_t r = 0; r < rows; ++r) {
        const auto it = label_index_.find(label_values[r]);
        if (it == label_index_.end())
            throw DataError(path_ + ":" + std::to_string(lines_[r]) + ", column '" + label_column +
                            "': label '" + label_values[r] + "' does not occur in the training data");
        labels_.push_back(it->second);
    }
    label_tensor_ = torch::tensor(labels_, torch::kInt64).reshape({static_cast<int64_t>(rows)});
    FeatureScaling identity;
    identity.mean.assign(feature_cols.size(), 0.0);
    identity.std.assign(feature_cols.size(), 1.0);
    standardize(identity);
}

FeatureScaling CsvDataset::computeScaling(const std::vector<int64_t>& rows) const {
    const auto f = static_cast<size_t>(featureCount());
    std::vector<int64_t> all;
    const std::vector<int64_t>* selected = &rows;
    if (rows.empty()) {
        all.resize(labels_.size());
        for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
        selected = &all;
    }
    FeatureScaling s;
    s.mean.assign(f, 0.0);
    s.std.assign(f, 0.0);
    for (int64_t r : *selected) {
        checkIndex(r);
        for (size_t c = 0; c < f; ++c) s.mean[c] += raw_[static_cast<size_t>(r) * f + c];
    }
    const auto n = static_cast<double>(selected->size());
    for (size_t c = 0; c < f; ++c) s.mean[c] = n > 0 ? s.mean[c] / n : 0.0;
    for (int64_t r : *selected)
        for (size_t c = 0; c < f; ++c) {
            const double d = raw_[static_cast<size_t>(r) * f + c] - s.mean[c];
            s.std[c] += d * d;
        }
    for (size_t c = 0; c < f; ++c) {
        s.std[c] = n > 0 ? std::sqrt(s.std[c] / n) : 0.0;
        if (!(s.std[c] > 0.0)) s.std[c] = 1.0;
    }
    return s;
}

void CsvDataset::standardize(const FeatureScaling& scaling) {
    const auto f = static_cast<size_t>(featureCount());
    if (scaling.mean.size() != f || scaling.std.size() != f)
        throw std::invalid_argument("CsvDataset::standardize: scaling has " +
                                    std::to_string(scaling.mean.size()) + " features, the data " +
                                    std::to_string(f));
    scaling_ = scaling;
    const auto rows = static_cast<int64_t>(labels_.size());
    features_ = torch::empty({rows, static_cast<int64_t>(f)}, torch::kFloat32);
    float* out = features_.data_ptr<float>();
    for (size_t i = 0; i < raw_.size(); ++i) {
        const size_t c = i % f;
        out[i] = static_cast<float>((raw_[i] - scaling.mean[c]) / scaling.std[c]);
    }
}

void CsvDataset::checkIndex(int64_t index) const {
    if (index < 0 || index >= size())
        throw std::out_of_range("CsvDataset: index " + std::to_string(index) + " outside 0.." +
                                std::to_string(size() - 1));
}

Sample CsvDataset::get(int64_t index) const {
    checkIndex(index);
    Sample s;
    s.input = features_[index].clone();
    s.label = labels_[static_cast<size_t>(index)];
    return s;
}

Batch CsvDataset::getBatch(const std::vector<int64_t>& indices) const {
    for (int64_t i : indices) checkIndex(i);
    const auto idx = torch::tensor(indices, torch::kInt64).reshape({static_cast<int64_t>(indices.size())});
    return Batch(features_.index_select(0, idx), label_tensor_.index_select(0, idx), idx);
}

std::string CsvDataset::describe(int64_t index) const {
    checkIndex(index);
    const auto& cells = cells_[static_cast<size_t>(index)];
    std::string text;
    for (size_t c = 0; c < columns_.size(); ++c)
        text += (c ? ", " : "") + columns_[c] + "=" + cells[c];
    return text;
}

}  // namespace hearth
