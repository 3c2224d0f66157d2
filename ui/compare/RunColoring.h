#pragma once
// RunColoring: which colour each compared run gets. By run (distinct colours), by sweep or tag
// (one palette colour per group), or by a setting that differs between the runs: numbers on a
// continuous gradient (logarithmic when they span two decades or more), anything else one
// palette colour per value.

#include "ui/compare/CompareRun.h"

#include <QColor>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace hearth::ui {

enum class ColorBy { Run, Sweep, Tag, Setting };

struct RunColors {
    ColorBy by = ColorBy::Run;
    QString key;                  // the setting, for ColorBy::Setting
    std::vector<QColor> colors;   // one per run
    QStringList groups;           // one per run: its sweep, tags or setting value ("" by run)
    QStringList groupOrder;       // the distinct groups, in the order their colours were given
    bool numeric = false;         // a setting with numbers: colours follow the gradient
    double low = 0.0, high = 0.0; // numeric: the values' range
    bool logarithmic = false;
    std::vector<double> values;   // numeric: each run's value (NaN when it has none)
};

// Distinct colours for any number of series: the palette's ten, then hues a golden angle apart.
QColor distinctColor(int index);
// The colour of `value` in [low, high] on the numeric gradient (dark violet .. teal .. amber),
// readable on light and dark backgrounds.
QColor gradientColor(double value, double low, double high, bool logarithmic);
// "0.001" -> 0.001; "adam", "" or "true" -> none.
std::optional<double> settingNumber(const QString& text);

// `difference` is the setting for ColorBy::Setting (its values in run order).
RunColors colorRuns(const std::vector<CompareRun>& runs, ColorBy by, const ConfigDifference* difference = nullptr);

}  // namespace hearth::ui
