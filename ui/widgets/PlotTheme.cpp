#include "ui/widgets/PlotTheme.h"

#include <QFileDialog>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QPalette>
#include <QStandardPaths>

#include <qcustomplot.h>

#include <algorithm>
#include <array>

namespace hearth::ui {

namespace {

void themeAxis(QCPAxis* axis, const QPalette& pal)
{
    const QColor text = pal.color(QPalette::WindowText);
    QColor grid = pal.color(QPalette::WindowText);
    grid.setAlphaF(0.12);
    axis->setBasePen(QPen(pal.color(QPalette::Mid)));
    axis->setTickPen(QPen(pal.color(QPalette::Mid)));
    axis->setSubTickPen(QPen(pal.color(QPalette::Mid)));
    axis->setTickLabelColor(text);
    axis->setLabelColor(text);
    axis->grid()->setPen(QPen(grid, 0, Qt::DotLine));
    axis->grid()->setZeroLinePen(Qt::NoPen);
}

}  // namespace

void applyPlotTheme(QCustomPlot* plot)
{
    const QPalette pal = plot->palette();
    plot->setBackground(pal.brush(QPalette::Base));
    for (QCPAxisRect* rect : plot->axisRects()) {
        for (QCPAxis* axis : rect->axes())
            themeAxis(axis, pal);
    }
    plot->legend->setBrush(pal.brush(QPalette::Base));
    if (plot->legend->borderPen() != Qt::NoPen)
        plot->legend->setBorderPen(QPen(pal.color(QPalette::Mid)));
    plot->legend->setTextColor(pal.color(QPalette::Text));
    for (int i = 0; i < plot->plotLayout()->elementCount(); ++i) {
        if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i)))
            title->setTextColor(pal.color(QPalette::WindowText));
    }
}

void enablePlotInteractions(QCustomPlot* plot)
{
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->setNoAntialiasingOnDrag(true);
}

void placeLegendBelow(QCustomPlot* plot, int columns)
{
    plot->legend->setVisible(true);
    if (plot->axisRect()->insetLayout()->elements(false).contains(plot->legend))
        plot->axisRect()->insetLayout()->take(plot->legend);
    const int row = plot->plotLayout()->rowCount();
    plot->plotLayout()->addElement(row, 0, plot->legend);
    plot->plotLayout()->setRowStretchFactor(row, 0.001);
    plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plot->legend->setWrap(columns);
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setMargins(QMargins(4, 0, 4, 2));
    plot->axisRect()->setAutoMargins(QCP::msLeft | QCP::msRight | QCP::msTop | QCP::msBottom);
}

void fitBarValueAxis(QCustomPlot* plot, double max, int labelWidth)
{
    plot->setProperty("hearthBarMax", max);
    plot->setProperty("hearthBarLabelWidth", labelWidth);
    if (plot->property("hearthBarFit").toBool())
        return;
    plot->setProperty("hearthBarFit", true);
    // After the layout has sized the axis rect, before anything is drawn in this replot.
    QObject::connect(plot, &QCustomPlot::afterLayout, plot, [plot] {
        QCPAxis* axis = plot->xAxis;
        const int width = axis->axisRect()->width();
        axis->ticker()->setTickCount(std::clamp(width / 70, 2, 6));
        const double top = plot->property("hearthBarMax").toDouble();
        const int bars = std::max(width - plot->property("hearthBarLabelWidth").toInt() - 8, width / 3);
        axis->setRange(0.0, top > 0.0 && bars > 0 ? top * width / bars : 1.0);
        // The layout computed the ticks for the old range and count: again, for these.
        axis->axisRect()->update(QCPLayoutElement::upPreparation);
    });
}

QColor seriesColor(int index)
{
    // Tableau 10: readable on white and on dark grey.
    static const std::array<QColor, 10> colors = {
        QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
        QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
        QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f), QColor(0xbc, 0xbd, 0x22),
        QColor(0x17, 0xbe, 0xcf)};
    return colors[static_cast<size_t>(index) % colors.size()];
}

bool savePlot(QCustomPlot* plot, const QString& path)
{
    if (path.endsWith(QStringLiteral(".pdf"), Qt::CaseInsensitive))
        return plot->savePdf(path);
    return plot->savePng(path, 0, 0, 2.0);   // 2x: crisp in documents and on HiDPI screens
}

QString savePlotInteractively(QWidget* parent, QCustomPlot* plot, const QString& suggestedName)
{
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
    const QString path = QFileDialog::getSaveFileName(parent, QObject::tr("Save Plot"),
        dir + QLatin1Char('/') + suggestedName + QStringLiteral(".png"),
        QObject::tr("PNG image (*.png);;PDF document (*.pdf)"));
    if (path.isEmpty())
        return {};
    return savePlot(plot, path) ? path : QString();
}

bool saveWidgetImage(QWidget* widget, const QString& path)
{
    if (path.endsWith(QStringLiteral(".pdf"), Qt::CaseInsensitive)) {
        QPdfWriter writer(path);
        writer.setPageSize(QPageSize(QPageSize::A4));
        writer.setPageOrientation(QPageLayout::Landscape);
        QPainter painter(&writer);
        if (!painter.isActive())
            return false;
        const double scale = std::min(painter.viewport().width() / double(widget->width()),
                                      painter.viewport().height() / double(widget->height()));
        painter.scale(scale, scale);
        widget->render(&painter);
        return true;
    }
    return widget->grab().save(path, "PNG");
}

QString seriesLegendHtml(const QStringList& names, const std::vector<bool>& shown)
{
    QStringList entries;
    for (int i = 0; i < names.size(); ++i)
        if (shown.empty() || (static_cast<size_t>(i) < shown.size() && shown[static_cast<size_t>(i)]))
            entries << QStringLiteral("<span style=\"color:%1\">&#9632;</span>&nbsp;%2")
                       .arg(seriesColor(i).name(), names[i].toHtmlEscaped());
    return entries.join(QStringLiteral(" &nbsp; "));
}

}  // namespace hearth::ui
