#include "ui/widgets/Format.h"

#include <QDateTime>
#include <QLocale>

#include <cmath>

namespace hearth::ui {

QString formatDuration(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0)
        return QStringLiteral("–");
    if (seconds < 10)
        return QStringLiteral("%1 s").arg(seconds, 0, 'f', 1);
    const auto total = static_cast<int64_t>(std::llround(seconds));
    const int64_t h = total / 3600, m = (total % 3600) / 60, s = total % 60;
    if (h > 0)
        return QStringLiteral("%1 h %2 min").arg(h).arg(m, 2, 10, QLatin1Char('0'));
    if (m > 0)
        return QStringLiteral("%1 min %2 s").arg(m).arg(s, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1 s").arg(s);
}

QString formatBytes(int64_t bytes)
{
    const double b = static_cast<double>(bytes);
    if (b >= 1024.0 * 1024 * 1024)
        return QStringLiteral("%1 GiB").arg(b / (1024.0 * 1024 * 1024), 0, 'f', 2);
    if (b >= 1024.0 * 1024)
        return QStringLiteral("%1 MiB").arg(b / (1024.0 * 1024), 0, 'f', 0);
    if (b >= 1024.0)
        return QStringLiteral("%1 KiB").arg(b / 1024.0, 0, 'f', 0);
    return QStringLiteral("%1 B").arg(bytes);
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
