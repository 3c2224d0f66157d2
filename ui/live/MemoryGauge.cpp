#include "ui/live/MemoryGauge.h"

#include "ui/widgets/Format.h"

#include <QPainter>
#include <QPainterPath>

namespace hearth::ui {
namespace {

// `text`'s " · "-separated parts packed into lines no wider than `width`: a part too wide for a
// line of its own is broken between its words, and a word too wide for one is elided.
QStringList packed(const QString& text, const QFontMetrics& metrics, int width)
{
    QStringList lines;
    if (text.isEmpty())
        return lines;
    const QString separator = QStringLiteral(" · ");
    QString line;
    const auto add = [&](const QString& piece, const QString& joiner) {
        const QString joined = line.isEmpty() ? piece : line + joiner + piece;
        if (line.isEmpty() || metrics.horizontalAdvance(joined) <= width) {
            line = joined;
            return;
        }
        lines << metrics.elidedText(line, Qt::ElideRight, width);
        line = piece;
    };
    for (const QString& part : text.split(separator)) {
        if (metrics.horizontalAdvance(part) <= width) {
            add(part, separator);
            continue;
        }
        const QStringList words = part.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        for (qsizetype i = 0; i < words.size(); ++i)
            add(words[i], i == 0 ? separator : QStringLiteral(" "));
    }
    lines << metrics.elidedText(line, Qt::ElideRight, width);
    return lines;
}

}  // namespace

MemoryGauge::MemoryGauge(const QString& title, QWidget* parent) : QWidget(parent), m_title(title)
{
    // Not Fixed: a layout caps a fixed item at its size hint's height, under the height for its width.
    QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Minimum);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

void MemoryGauge::setTitle(const QString& title)
{
    m_title = title;
    refit();
}

void MemoryGauge::setUsage(int64_t allocated, int64_t reserved, int64_t peak, int64_t total, double utilization)
{
    m_allocated = allocated;
    m_reserved = reserved;
    m_peak = std::max(peak, allocated);
    m_total = total;
    m_utilization = utilization;
    m_measured = true;
    setToolTip(summary());
    refit();
}

void MemoryGauge::setDetails(const QString& details)
{
    if (details == m_details)
        return;
    m_details = details;
    setToolTip(summary() + (m_details.isEmpty() ? QString() : QStringLiteral("\n") + m_details));
    refit();
}

QString MemoryGauge::summary() const
{
    if (!m_measured)
        return tr("measured while a run trains");
    QString text = tr("%1 of %2").arg(formatBytes(m_allocated), m_total > 0 ? formatBytes(m_total) : tr("?"));
    if (m_reserved > 0)
        text += tr(" · reserved %1").arg(formatBytes(m_reserved));
    text += tr(" · peak %1").arg(formatBytes(m_peak));
    if (m_utilization >= 0)
        text += tr(" · busy %1").arg(formatPercent(m_utilization, 0));
    return text;
}

QStringList MemoryGauge::lines(int width) const
{
    if (width <= 0)
        width = this->width();
    const QFontMetrics metrics = fontMetrics();
    QStringList out = packed(m_title, metrics, width);
    out += packed(summary(), metrics, width);
    out += packed(m_details, metrics, width);
    return out;
}

// The text's lines, and under them a bar one line high.
int MemoryGauge::heightForWidth(int width) const
{
    return fontMetrics().height() * (static_cast<int>(lines(width).size()) + 1) + 12;
}

QSize MemoryGauge::sizeHint() const
{
    return {320, heightForWidth(320)};
}

// Narrow is fine (the text wraps): a gauge wider than a narrow panel's scrolled area would be cut off.
// As low as its text unwrapped: the height it needs at the width it gets is heightForWidth's. (The
// height at the narrow width, many lines of single words, made the panel's scroll area count every
// gauge that high and show a scroll bar for gauges that fit.)
QSize MemoryGauge::minimumSizeHint() const
{
    return {fontMetrics().averageCharWidth() * 10, heightForWidth(QWIDGETSIZE_MAX)};
}

void MemoryGauge::refit()
{
    const int count = static_cast<int>(lines().size());
    if (count != m_lineCount) {
        m_lineCount = count;
        updateGeometry();
    }
    update();
}

void MemoryGauge::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    m_lineCount = static_cast<int>(lines().size());
}

void MemoryGauge::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette pal = palette();
    const int lineH = fontMetrics().height();
    const QStringList text = lines();
    const qsizetype titleLines = packed(m_title, fontMetrics(), width()).size();   // the rest is dimmer
    int textLines = 0;
    for (const QString& line : text) {
        p.setPen(pal.color(textLines < titleLines ? QPalette::WindowText : QPalette::PlaceholderText));
        p.drawText(QRect(0, lineH * textLines++, width(), lineH), Qt::AlignLeft | Qt::AlignVCenter, line);
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
