#include "ui/compare/RunColoring.h"

#include "ui/widgets/Format.h"
#include "ui/widgets/PlotTheme.h"

#include <QObject>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace hearth::ui {

QColor distinctColor(int index)
{
    if (index < 10)
        return seriesColor(index);
    // Golden-angle hues, with saturation and value stepping so neighbours in hue still differ.
    const int k = index - 10;
    const double hue = std::fmod(0.11 + k * 0.381966, 1.0);
    const double saturation = k % 3 == 0 ? 0.75 : k % 3 == 1 ? 0.55 : 0.9;
    const double value = k % 2 == 0 ? 0.78 : 0.62;
    return QColor::fromHsvF(static_cast<float>(hue), static_cast<float>(saturation), static_cast<float>(value));
}

QColor gradientColor(double value, double low, double high, bool logarithmic)
{
    static const std::array<QColor, 5> stops = {QColor(0x44, 0x01, 0x54), QColor(0x3b, 0x52, 0x8b),
                                                QColor(0x21, 0x91, 0x8c), QColor(0x5e, 0xc9, 0x62),
                                                QColor(0xea, 0xb8, 0x0e)};
    double t = 0.5;
    if (high > low) {
        t = logarithmic ? (std::log(value) - std::log(low)) / (std::log(high) - std::log(low))
                        : (value - low) / (high - low);
    }
    if (!std::isfinite(t))
        return QColor(0x80, 0x80, 0x80);
    t = std::clamp(t, 0.0, 1.0) * double(stops.size() - 1);
    const auto i = std::min(static_cast<size_t>(t), stops.size() - 2);
    const double f = t - double(i);
    const QColor& a = stops[i];
    const QColor& b = stops[i + 1];
    return QColor::fromRgbF(static_cast<float>(a.redF() + f * (b.redF() - a.redF())),
                            static_cast<float>(a.greenF() + f * (b.greenF() - a.greenF())),
                            static_cast<float>(a.blueF() + f * (b.blueF() - a.blueF())));
}

std::optional<double> settingNumber(const QString& text)
{
    bool ok = false;
    const double v = text.toDouble(&ok);
    if (!ok || !std::isfinite(v))
        return std::nullopt;
    return v;
}

namespace {

void colorByGroup(RunColors& out)
{
    for (const QString& g : std::as_const(out.groups)) {
        if (!out.groupOrder.contains(g))
            out.groupOrder << g;
    }
    // Values that read as numbers in numeric order, then the rest alphabetically.
    std::sort(out.groupOrder.begin(), out.groupOrder.end(), [](const QString& a, const QString& b) {
        const auto x = settingNumber(a), y = settingNumber(b);
        if (x && y)
            return *x < *y;
        if (x.has_value() != y.has_value())
            return x.has_value();
        return a.localeAwareCompare(b) < 0;
    });
    for (const QString& g : std::as_const(out.groups))
        out.colors.push_back(distinctColor(static_cast<int>(out.groupOrder.indexOf(g))));
}

bool colorByNumber(RunColors& out, const QStringList& values)
{
    double low = std::numeric_limits<double>::infinity(), high = -low;
    std::vector<double> numbers;
    for (const QString& v : values) {
        if (v.isEmpty()) {
            numbers.push_back(std::numeric_limits<double>::quiet_NaN());
            continue;
        }
        const auto n = settingNumber(v);
        if (!n)
            return false;
        numbers.push_back(*n);
        low = std::min(low, *n);
        high = std::max(high, *n);
    }
    if (!std::isfinite(low))
        return false;
    out.numeric = true;
    out.low = low;
    out.high = high;
    out.logarithmic = low > 0.0 && high / low >= 100.0;
    out.values = numbers;
    for (double n : numbers)
        out.colors.push_back(std::isnan(n) ? QColor(0x80, 0x80, 0x80) : gradientColor(n, low, high, out.logarithmic));
    return true;
}

}  // namespace

RunColors colorRuns(const std::vector<CompareRun>& runs, ColorBy by, const ConfigDifference* difference)
{
    RunColors out;
    out.by = by;
    switch (by) {
    case ColorBy::Run:
        for (size_t i = 0; i < runs.size(); ++i) {
            out.colors.push_back(distinctColor(static_cast<int>(i)));
            out.groups << QString();
        }
        return out;
    case ColorBy::Sweep:
        for (const auto& r : runs)
            out.groups << (r.summary.sweep_id ? qstr(r.summary.sweep_name) : QObject::tr("(no sweep)"));
        break;
    case ColorBy::Tag:
        for (const auto& r : runs) {
            QStringList tags;
            for (const auto& t : r.summary.tags)
                tags << qstr(t);
            out.groups << (tags.isEmpty() ? QObject::tr("(no tag)") : tags.join(QStringLiteral(", ")));
        }
        break;
    case ColorBy::Setting:
        if (!difference || difference->values.size() != static_cast<qsizetype>(runs.size()))
            return colorRuns(runs, ColorBy::Run);
        out.key = difference->key;
        if (colorByNumber(out, difference->values)) {
            for (const QString& v : difference->values)
                out.groups << v;
            return out;
        }
        for (const QString& v : difference->values)
            out.groups << (v.isEmpty() ? QObject::tr("(none)") : v);
        break;
    }
    colorByGroup(out);
    return out;
}

}  // namespace hearth::ui
