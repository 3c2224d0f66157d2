#include "ui/live/MemoryGauge.h"

#include "ui/widgets/Format.h"

#include <QPainter>
#include <QPainterPath>

namespace hearth::ui {

MemoryGauge::MemoryGauge(const QString& title, QWidget* parent) : QWidget(parent), m_title(title)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void MemoryGauge::setTitle(const QString& title)
{
    m_title = title;
    update();
}

void MemoryGauge::setUsage(int64_t allocated, int64_t reserved, int64_t peak, int64_t total, double utilization)
{
    m_allocated = allocated;
    m_reserved = reserved;
    m_peak = std::max(peak, allocated);
    m_total = total;
    m_utilization = utilization;
    setToolTip(summary());
    update();
}

void MemoryGauge::setDetails(const QString& details)
{
    if (details == m_details)
        return;
    m_details = details;
    setToolTip(summary() + (m_details.isEmpty() ? QString() : QStringLiteral("\n") + m_details));
    updateGeometry();
    update();
}

QString MemoryGauge::summary() const
{
    QString text = tr("%1 of %2").arg(formatBytes(m_allocated), m_total > 0 ? formatBytes(m_total) : tr("?"));
    if (m_reserved > 0)
        text += tr(" · reserved %1").arg(formatBytes(m_reserved));
    text += tr(" · peak %1").arg(formatBytes(m_peak));
    if (m_utilization >= 0)
        text += tr(" · busy %1").arg(formatPercent(m_utilization, 0));
    return text;
}

QSize MemoryGauge::sizeHint() const
{
    return {320, fontMetrics().height() * (m_details.isEmpty() ? 3 : 4) + 12};
}

QSize MemoryGauge::minimumSizeHint() const
{
    return {160, sizeHint().height()};
}

void MemoryGauge::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette pal = palette();
    const int lineH = fontMetrics().height();
    p.setPen(pal.color(QPalette::WindowText));
    p.drawText(QRect(0, 0, width(), lineH), Qt::AlignLeft | Qt::AlignVCenter, m_title);
    p.setPen(pal.color(QPalette::PlaceholderText));
    p.drawText(QRect(0, lineH, width(), lineH), Qt::AlignLeft | Qt::AlignVCenter,
               fontMetrics().elidedText(summary(), Qt::ElideRight, width()));
    int textLines = 2;
    if (!m_details.isEmpty()) {
        p.drawText(QRect(0, 2 * lineH, width(), lineH), Qt::AlignLeft | Qt::AlignVCenter,
                   fontMetrics().elidedText(m_details, Qt::ElideRight, width()));
        textLines = 3;
    }

    const QRectF bar(0.5, textLines * lineH + 4.5, width() - 1.0, height() - textLines * lineH - 6.0);
    QPainterPath frame;
    frame.addRoundedRect(bar, 3, 3);
    p.fillPath(frame, pal.brush(QPalette::Base));
    const double total = static_cast<double>(std::max<int64_t>(m_total, 1));
    const auto share = [&](int64_t v) { return std::clamp(static_cast<double>(v) / total, 0.0, 1.0); };
    p.save();
    p.setClipPath(frame);
    QColor reserved = pal.color(QPalette::Highlight);
    reserved.setAlphaF(0.35);
    if (m_reserved > 0)
        p.fillRect(QRectF(bar.left(), bar.top(), bar.width() * share(m_reserved), bar.height()), reserved);
    p.fillRect(QRectF(bar.left(), bar.top(), bar.width() * share(m_allocated), bar.height()),
               pal.color(QPalette::Highlight));
    p.restore();
    if (m_peak > 0) {
        const double x = bar.left() + bar.width() * share(m_peak);
        p.setPen(QPen(pal.color(QPalette::WindowText), 2));
        p.drawLine(QPointF(x, bar.top()), QPointF(x, bar.bottom()));
    }
    p.setPen(QPen(pal.color(QPalette::Mid), 1));
    p.setBrush(Qt::NoBrush);
    p.drawPath(frame);
}

}  // namespace hearth::ui
