#pragma once
// CompareCurves: every compared run's curve of one metric in one plot, without a legend inside
// it (CompareLegend lists the runs beside it). One graph per run, in run order. Hovering a curve
// names the run and its value under the plot and in a tooltip; a highlighted run is drawn
// thicker on top of a veil that fades the others. Veil and highlight sit on a buffered layer of
// their own, so highlighting redraws one curve, not a thousand. Coloured by a numeric setting,
// a colour scale sits at the plot's right.

#include "ui/compare/CompareRun.h"
#include "ui/compare/RunColoring.h"

#include <QWidget>

#include <vector>

class QCPColorScale;
class QCPCurve;
class QCPItemRect;
class QCPLayer;
class QCustomPlot;
class QLabel;

namespace hearth::ui {

class CompareCurves final : public QWidget {
    Q_OBJECT

public:
    explicit CompareCurves(QWidget* parent = nullptr);

    // Rebuilds every graph (one pass over the runs' decimated curves).
    void setCurves(const std::vector<CompareRun>& runs, CompareMetric metric, CompareXAxis axis,
                   const QString& metricName, const RunColors& colors);
    // New colours for the same graphs.
    void setColors(const RunColors& colors);
    void setHighlighted(int run);   // -1: none
    // A logarithmic value axis: losses of runs with learning rates decades apart stay readable.
    void setLogarithmic(bool on);
    bool logarithmic() const;
    int highlighted() const { return m_highlighted; }
    // The highlighted run's curve drawn again, thick, above the veil (hidden when none).
    const QCPCurve* highlightCurve() const { return m_highlightCurve; }
    bool othersFaded() const;
    // The run whose curve passes within a few pixels of `pos` (plot coordinates), or -1; its
    // value there (interpolated between kept points) in `value`.
    int runAt(const QPoint& pos, double* value = nullptr) const;
    QCustomPlot* plot() const { return m_plot; }
    QString hoverText() const;

Q_SIGNALS:
    void runHovered(int run);   // -1 when the mouse leaves the curves

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void applyPens();
    void drawHighlight();
    void showColorScale(const RunColors& colors);
    void hover(const QPoint& pos);
    QString xText(double x) const;   // the pointer's x, as the axis counts

    QCustomPlot* m_plot;
    QLabel* m_hover;
    QCPLayer* m_top;
    QCPItemRect* m_veil;
    QCPCurve* m_highlightCurve;
    QCPColorScale* m_scale = nullptr;
    std::vector<QColor> m_colors;
    QStringList m_labels;
    QString m_metricName;
    CompareXAxis m_axis = CompareXAxis::Step;
    int m_highlighted = -1;
    int m_hovered = -1;
};

}  // namespace hearth::ui
