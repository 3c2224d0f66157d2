#include "ui/report/ConfusionMatrixView.h"

#include <QMouseEvent>
#include "ui/widgets/PlotTheme.h"

#include <QPainter>
#include <QToolTip>

#include <numeric>

namespace hearth::ui {

ConfusionMatrixView::ConfusionMatrixView(QWidget* parent) : QWidget(parent)
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void ConfusionMatrixView::setMatrix(const std::vector<std::vector<int64_t>>& confusion, const QStringList& classNames)
{
    m_matrix = confusion;
    m_names = classNames;
    m_rowTotals.clear();
    for (const auto& row : m_matrix)
        m_rowTotals.push_back(std::accumulate(row.begin(), row.end(), int64_t{0}));
    while (m_names.size() < classCount())
        m_names << QString::number(m_names.size());
    updateGeometry();
    update();
}

int64_t ConfusionMatrixView::count(int t, int p) const
{
    if (t < 0 || p < 0 || t >= classCount() || p >= static_cast<int>(m_matrix[t].size()))
        return 0;
    return m_matrix[static_cast<size_t>(t)][static_cast<size_t>(p)];
}

QSize ConfusionMatrixView::sizeHint() const
{
    return {520, 480};
}

QSize ConfusionMatrixView::minimumSizeHint() const
{
    return {260, 240};
}

ConfusionMatrixView::Geometry ConfusionMatrixView::geometry() const
{
    const QFontMetrics fm = fontMetrics();
    int labelWidth = fm.horizontalAdvance(tr("True"));
    for (const QString& n : m_names)
        labelWidth = std::max(labelWidth, fm.horizontalAdvance(n));
    const double left = labelWidth + fm.height() * 2.0;
    const double top = fm.height() * 2.5 + labelWidth * 0.72;   // room for 45° column labels
    const int n = std::max(1, classCount());
    // Rotated column labels reach right of their column by up to ~0.7 of the longest name.
    const double right = 8 + labelWidth * 0.6;
    const double cell = std::max(8.0, std::min((width() - left - right) / n, (height() - top - 8) / n));
    return {QRectF(left, top, cell * n, cell * n), cell};
}

QRectF ConfusionMatrixView::cellRect(int trueClass, int predicted) const
{
    const Geometry g = geometry();
    return {g.grid.left() + predicted * g.cell, g.grid.top() + trueClass * g.cell, g.cell, g.cell};
}

QPoint ConfusionMatrixView::cellAt(const QPointF& pos) const
{
    const Geometry g = geometry();
    if (!g.grid.contains(pos) || classCount() == 0)
        return {-1, -1};
    return {static_cast<int>((pos.x() - g.grid.left()) / g.cell), static_cast<int>((pos.y() - g.grid.top()) / g.cell)};
}

void ConfusionMatrixView::paintLabels(QPainter& p, const Geometry& g) const
{
    const QPalette pal = palette();
    const QFontMetrics fm = fontMetrics();
    p.setPen(pal.color(QPalette::WindowText));
    for (int i = 0; i < classCount(); ++i) {
        const QRectF row(0, g.grid.top() + i * g.cell, g.grid.left() - 6, g.cell);
        p.drawText(row, Qt::AlignRight | Qt::AlignVCenter, m_names[i]);
        p.save();
        p.translate(g.grid.left() + (i + 0.5) * g.cell + fm.ascent() / 3.0, g.grid.top() - 6);
        p.rotate(-45);
        p.drawText(QPointF(0, 0), m_names[i]);
        p.restore();
    }
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.drawText(QRectF(g.grid.left(), 0, g.grid.width(), fm.height() * 1.5), Qt::AlignCenter, tr("Predicted label"));
    p.save();
    p.translate(fm.height() * 0.9, g.grid.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-g.grid.height() / 2, -fm.height(), g.grid.height(), fm.height() * 1.5), Qt::AlignCenter,
               tr("True label"));
    p.restore();
    p.setFont(font());
}

void ConfusionMatrixView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const QPalette pal = palette();
    if (classCount() == 0) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No confusion matrix for this run yet."));
        return;
    }
    const Geometry g = geometry();
    paintLabels(p, g);
    const QColor base = pal.color(QPalette::Base);
    const QColor hot = pal.color(QPalette::Highlight);
    QFont cellFont = font();
    cellFont.setPointSizeF(std::clamp(g.cell / 4.2, 6.0, font().pointSizeF()));
    p.setFont(cellFont);
    for (int t = 0; t < classCount(); ++t) {
        for (int c = 0; c < classCount(); ++c) {
            const int64_t v = count(t, c);
            const double share = m_rowTotals[t] > 0 ? double(v) / double(m_rowTotals[t]) : 0.0;
            // Blend Base -> Highlight by the row share: the diagonal reads as recall.
            const double a = std::sqrt(share);
            const QColor fill = QColor::fromRgbF(base.redF() + (hot.redF() - base.redF()) * a,
                                                 base.greenF() + (hot.greenF() - base.greenF()) * a,
                                                 base.blueF() + (hot.blueF() - base.blueF()) * a);
            const QRectF cell(g.grid.left() + c * g.cell, g.grid.top() + t * g.cell, g.cell, g.cell);
            p.fillRect(cell, fill);
            p.setPen(a > 0.55 ? pal.color(QPalette::HighlightedText) : pal.color(QPalette::Text));
            if (v > 0 && g.cell >= 18)
                p.drawText(cell, Qt::AlignCenter, QString::number(v));
        }
    }
    p.setPen(QPen(pal.color(QPalette::Mid), 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(g.grid);
}

void ConfusionMatrixView::mousePressEvent(QMouseEvent* event)
{
    const QPoint cell = cellAt(event->position());
    if (cell.x() >= 0)
        Q_EMIT cellActivated(cell.y(), cell.x());
}

void ConfusionMatrixView::mouseMoveEvent(QMouseEvent* event)
{
    const QPoint cell = cellAt(event->position());
    if (cell.x() < 0) {
        QToolTip::hideText();
        return;
    }
    const int64_t v = count(cell.y(), cell.x());
    const int64_t total = m_rowTotals[static_cast<size_t>(cell.y())];
    QToolTip::showText(event->globalPosition().toPoint(),
                       tr("True %1, predicted %2: %3 of %4 (%5 %)\nClick to browse these samples.")
                           .arg(m_names[cell.y()], m_names[cell.x()])
                           .arg(v)
                           .arg(total)
                           .arg(total > 0 ? 100.0 * double(v) / double(total) : 0.0, 0, 'f', 1),
                       this);
}

bool ConfusionMatrixView::saveImage(const QString& path)
{
    return saveWidgetImage(this, path);
}

}  // namespace hearth::ui
