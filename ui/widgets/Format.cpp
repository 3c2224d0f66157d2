#include "ui/widgets/Format.h"

#include "storage/report/RunReport.h"

#include <QDateTime>
#include <QLocale>

#include <cmath>

namespace hearth::ui {

QString formatDuration(double seconds)
{
    return qstr(report::formatDuration(seconds));
}

QString formatBytes(int64_t bytes)
{
    return qstr(hearth::formatBytes(bytes));
}

QString formatRate(double perSecond)
{
    if (!std::isfinite(perSecond))
        return QStringLiteral("–");
    if (perSecond >= 100)
        return QLocale().toString(std::round(perSecond), 'f', 0);
    if (perSecond >= 10)
        return QString::number(perSecond, 'f', 1);
    return QString::number(perSecond, 'f', 2);
}

QString formatPercent(double fraction, int decimals)
{
    return QStringLiteral("%1 %").arg(fraction * 100.0, 0, 'f', decimals);
}

QString formatTimestamp(double unixSeconds)
{
    if (unixSeconds <= 0)
        return {};
    const auto dt = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(unixSeconds * 1000.0));
    return QLocale().toString(dt, QStringLiteral("yyyy-MM-dd HH:mm"));
}

}  // namespace hearth::ui
