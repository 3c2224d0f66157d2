#include "engine/metrics/ClassificationReport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace hearth {
namespace {

// numpy's pairwise summation (np.add.reduce on a contiguous float64 array), reproduced so that
// macro/weighted averages round like scikit-learn's and the 4-digit text matches at ties too.
double pairwiseSum(const double* a, size_t n) {
    if (n < 8) {
        double res = 0.0;
        for (size_t i = 0; i < n; ++i) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        for (size_t j = 0; j < 8; ++j) r[j] = a[j];
        size_t i = 8;
        for (; i < n - (n % 8); i += 8)
            for (size_t j = 0; j < 8; ++j) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i) res += a[i];
        return res;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwiseSum(a, n2) + pairwiseSum(a + n2, n - n2);
}

double numpySum(const std::vector<double>& v) { return 0.0 + pairwiseSum(v.data(), v.size()); }

// sklearn's _prf_divide with zero_division=0.
double divideOrZero(double numerator, double denominator) {
    return denominator == 0.0 ? 0.0 : numerator / denominator;
}

// F1 as sklearn computes F-beta with beta=1: (1 + beta²)·p·r / (beta²·p + r), 0 when p+r = 0.
double fScore(double p, double r) {
    double denom = 1.0 * p + r;
    if (denom == 0.0) denom = 1.0;
    return (1.0 + 1.0) * p * r / denom;
}

// Python's len() and format padding count code points; names are UTF-8.
size_t codePoints(const std::string& s) {
    return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

std::string padLeft(const std::string& s, size_t width) {
    const size_t len = codePoints(s);
    return len >= width ? s : std::string(width - len, ' ') + s;
}

std::string fixed(double value, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, value);
    return buf;
}

// One report line: "{:>width} " then each cell as " {:>9}".
std::string reportRow(const std::string& heading, size_t width,
                      const std::vector<std::string>& cells) {
    std::string line = padLeft(heading, width) + " ";
    for (const auto& cell : cells) line += " " + padLeft(cell, 9);
    return line + "\n";
}

}  // namespace

ClassificationReport ClassificationReport::compute(const std::vector<int64_t>& y_true,
                                                   const std::vector<int64_t>& y_pred,
                                                   const std::vector<std::string>& class_names) {
    if (y_true.size() != y_pred.size())
        throw std::invalid_argument("ClassificationReport: y_true has " +
                                    std::to_string(y_true.size()) + " labels but y_pred has " +
                                    std::to_string(y_pred.size()));
    const size_t n = class_names.size();
    ClassificationReport r;
    r.class_names = class_names;
    r.total = static_cast<int64_t>(y_true.size());
    r.confusion.assign(n, std::vector<int64_t>(n, 0));
    int64_t correct = 0;
    for (size_t i = 0; i < y_true.size(); ++i) {
        const int64_t t = y_true[i], p = y_pred[i];
        if (t < 0 || p < 0 || static_cast<size_t>(t) >= n || static_cast<size_t>(p) >= n)
            throw std::out_of_range("ClassificationReport: label outside 0.." +
                                    std::to_string(n > 0 ? n - 1 : 0) + " at position " +
                                    std::to_string(i));
        ++r.confusion[static_cast<size_t>(t)][static_cast<size_t>(p)];
        if (t == p) ++correct;
    }
    r.accuracy = r.total > 0 ? static_cast<double>(correct) / static_cast<double>(r.total) : 0.0;

    std::vector<int64_t> predicted(n, 0);
    r.support.assign(n, 0);
    for (size_t t = 0; t < n; ++t)
        for (size_t p = 0; p < n; ++p) {
            r.support[t] += r.confusion[t][p];
            predicted[p] += r.confusion[t][p];
        }
    r.precision.resize(n);
    r.recall.resize(n);
    r.f1.resize(n);
    for (size_t c = 0; c < n; ++c) {
        const auto tp = static_cast<double>(r.confusion[c][c]);
        r.precision[c] = divideOrZero(tp, static_cast<double>(predicted[c]));
        r.recall[c] = divideOrZero(tp, static_cast<double>(r.support[c]));
        r.f1[c] = fScore(r.precision[c], r.recall[c]);
    }
    if (n > 0) {
        const auto count = static_cast<double>(n);
        r.macro_precision = numpySum(r.precision) / count;
        r.macro_recall = numpySum(r.recall) / count;
        r.macro_f1 = numpySum(r.f1) / count;
    }
    // np.average(values, weights=support); sklearn returns zero_division (0) when no support.
    std::vector<double> weights(r.support.begin(), r.support.end());
    const double weight_sum = numpySum(weights);
    auto weighted = [&](const std::vector<double>& values) {
        if (weight_sum == 0.0) return 0.0;
        std::vector<double> products(n);
        for (size_t c = 0; c < n; ++c) products[c] = values[c] * weights[c];
        return numpySum(products) / weight_sum;
    };
    r.weighted_precision = weighted(r.precision);
    r.weighted_recall = weighted(r.recall);
    r.weighted_f1 = weighted(r.f1);
    return r;
}

std::string ClassificationReport::toText(int digits) const {
    const size_t n = class_names.size();
    size_t width = std::max<size_t>(12 /* "weighted avg" */, static_cast<size_t>(std::max(digits, 0)));
    for (const auto& name : class_names) width = std::max(width, codePoints(name));

    std::string text = reportRow("", width, {"precision", "recall", "f1-score", "support"});
    text.pop_back();   // the header line is followed by exactly one blank line
    text += "\n\n";
    for (size_t c = 0; c < n; ++c)
        text += reportRow(class_names[c], width,
                          {fixed(precision[c], digits), fixed(recall[c], digits),
                           fixed(f1[c], digits), std::to_string(support[c])});
    text += "\n";

    // sklearn prints "accuracy" only when the labels equal the set of labels present in y_true
    // or y_pred; a class that occurs nowhere turns the row into a full "micro avg" row.
    std::vector<int64_t> predicted(n, 0);
    for (size_t t = 0; t < n && t < confusion.size(); ++t)
        for (size_t p = 0; p < n && p < confusion[t].size(); ++p) predicted[p] += confusion[t][p];
    bool every_label_present = true;
    for (size_t c = 0; c < n; ++c)
        if (support[c] == 0 && predicted[c] == 0) every_label_present = false;
    const std::string total_text = std::to_string(total);
    const double micro_f1 = fScore(accuracy, accuracy);
    if (every_label_present) {
        text += reportRow("accuracy", width, {"", "", fixed(micro_f1, digits), total_text});
    } else {
        text += reportRow("micro avg", width,
                          {fixed(accuracy, digits), fixed(accuracy, digits),
                           fixed(micro_f1, digits), total_text});
    }
    text += reportRow("macro avg", width,
                      {fixed(macro_precision, digits), fixed(macro_recall, digits),
                       fixed(macro_f1, digits), total_text});
    text += reportRow("weighted avg", width,
                      {fixed(weighted_precision, digits), fixed(weighted_recall, digits),
                       fixed(weighted_f1, digits), total_text});
    return text;
}

std::string ClassificationReport::confusionText() const {
    // Columns as wide as the widest class name or count, rows headed by the true class.
    size_t name_width = std::string("true \\ predicted").size();
    size_t cell_width = 1;
    for (const auto& name : class_names) {
        name_width = std::max(name_width, codePoints(name));
        cell_width = std::max(cell_width, codePoints(name));
    }
    for (const auto& row : confusion)
        for (int64_t v : row) cell_width = std::max(cell_width, std::to_string(v).size());

    auto padRight = [](const std::string& s, size_t width) {
        const size_t len = codePoints(s);
        return len >= width ? s : s + std::string(width - len, ' ');
    };
    std::string text = padRight("true \\ predicted", name_width);
    for (const auto& name : class_names) text += "  " + padLeft(name, cell_width);
    text += "\n";
    for (size_t t = 0; t < confusion.size(); ++t) {
        text += padRight(t < class_names.size() ? class_names[t] : std::to_string(t), name_width);
        for (int64_t v : confusion[t]) text += "  " + padLeft(std::to_string(v), cell_width);
        text += "\n";
    }
    return text;
}

std::string ClassificationReport::toJson() const {
    nlohmann::json j;
    j["class_names"] = class_names;
    j["precision"] = precision;
    j["recall"] = recall;
    j["f1"] = f1;
    j["support"] = support;
    j["accuracy"] = accuracy;
    j["macro_precision"] = macro_precision;
    j["macro_recall"] = macro_recall;
    j["macro_f1"] = macro_f1;
    j["weighted_precision"] = weighted_precision;
    j["weighted_recall"] = weighted_recall;
    j["weighted_f1"] = weighted_f1;
    j["total"] = total;
    j["confusion"] = confusion;
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // bad UTF-8 in a class name: U+FFFD
}

ClassificationReport ClassificationReport::fromJson(const std::string& json_text) {
    ClassificationReport r;
    try {
        const auto j = nlohmann::json::parse(json_text);
        j.at("class_names").get_to(r.class_names);
        j.at("precision").get_to(r.precision);
        j.at("recall").get_to(r.recall);
        j.at("f1").get_to(r.f1);
        j.at("support").get_to(r.support);
        j.at("accuracy").get_to(r.accuracy);
        j.at("macro_precision").get_to(r.macro_precision);
        j.at("macro_recall").get_to(r.macro_recall);
        j.at("macro_f1").get_to(r.macro_f1);
        j.at("weighted_precision").get_to(r.weighted_precision);
        j.at("weighted_recall").get_to(r.weighted_recall);
        j.at("weighted_f1").get_to(r.weighted_f1);
        j.at("total").get_to(r.total);
        j.at("confusion").get_to(r.confusion);
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("ClassificationReport JSON: ") + e.what());
    }
    const size_t n = r.class_names.size();
    if (r.precision.size() != n || r.recall.size() != n || r.f1.size() != n ||
        r.support.size() != n || r.confusion.size() != n)
        throw std::invalid_argument("ClassificationReport JSON: per-class arrays do not match the " +
                                    std::to_string(n) + " class names");
    for (const auto& row : r.confusion)
        if (row.size() != n)
            throw std::invalid_argument("ClassificationReport JSON: confusion matrix is not " +
                                        std::to_string(n) + "x" + std::to_string(n));
    return r;
}

}  // namespace hearth
