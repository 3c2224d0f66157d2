#pragma once
// ClassificationReport: per-class precision/recall/F1/support, accuracy, macro and weighted
// averages and the confusion matrix, with scikit-learn's values and text layout (zero_division=0).

#include <cstdint>
#include <string>
#include <vector>

namespace hearth {

struct ClassificationReport {
    std::vector<std::string> class_names;
    std::vector<double> precision, recall, f1;
    std::vector<int64_t> support;
    double accuracy = 0.0;
    double macro_precision = 0.0, macro_recall = 0.0, macro_f1 = 0.0;
    double weighted_precision = 0.0, weighted_recall = 0.0, weighted_f1 = 0.0;
    int64_t total = 0;
    std::vector<std::vector<int64_t>> confusion;   // [true][predicted]

    static ClassificationReport compute(const std::vector<int64_t>& y_true,
                                        const std::vector<int64_t>& y_pred,
                                        const std::vector<std::string>& class_names);
    // sklearn.metrics.classification_report(..., digits) text, byte for byte.
    std::string toText(int digits = 4) const;
    // Aligned confusion matrix with class names as row/column headers.
    std::string confusionText() const;
    std::string toJson() const;
    static ClassificationReport fromJson(const std::string& json_text);
};

}  // namespace hearth
