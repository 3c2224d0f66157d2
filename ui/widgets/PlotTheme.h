#pragma once
// PlotTheme: makes QCustomPlot follow the window palette (light or dark) and gives every plot
// the same interactions. Series colours are the only fixed colours in the UI.

#include <QColor>
#include <QString>
#include <QStringList>

#include <vector>

class QCustomPlot;
class QWidget;

namespace hearth::ui {

// Background, axes, grid, legend and labels from plot->palette().
void applyPlotTheme(QCustomPlot* plot);
// Drag to pan, wheel to zoom (both axes), as in every plot of the workbench.
void enablePlotInteractions(QCustomPlot* plot);
// Moves the legend out of the axis rect into a row under it, laid out horizontally, so it
// never covers data.
void placeLegendBelow(QCustomPlot* plot, int columns = 3);
// A horizontal bar chart's value axis (the bottom one), fitted at every layout to the width it
// gets: one tick label per 70 px (2 to 6), so a narrow chart's labels never run into each other,
// and a range from 0 to past `max` that leaves `labelWidth` px after the longest bar for the value
// written there. Call after each rebuild with its largest value; resizes refit on their own.
void fitBarValueAxis(QCustomPlot* plot, double max, int labelWidth);
// A colour per series index, distinguishable on light and dark backgrounds.
QColor seriesColor(int index);
// A legend as rich text for a QLabel (word-wrapped, whole names at any width): a square in
// seriesColor(i) before each name. With `shown`, only the names it marks (colours stay by index).
QString seriesLegendHtml(const QStringList& names, const std::vector<bool>& shown = {});
// Asks for a file name and writes PNG or PDF by its suffix. Returns the path written or "".
QString savePlotInteractively(QWidget* parent, QCustomPlot* plot, const QString& suggestedName);
// Writes PNG or PDF by suffix; false when the file could not be written.
bool savePlot(QCustomPlot* plot, const QString& path);
// Writes any widget as PNG, or as PDF (scaled to the page, A4 landscape) by suffix.
bool saveWidgetImage(QWidget* widget, const QString& path);

}  // namespace hearth::ui
