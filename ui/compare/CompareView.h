#pragma once
// CompareView: two to a thousand runs side by side — overlaid curves (x by step, epoch or wall
// time) with the runs listed beside them (CompareLegend), coloured by run, sweep, tag or a
// setting that differs; a panel of sorted bars (CompareBars) and a sweep scatter (SweepScatter)
// in tabs; a metrics table with speed-up against a chosen baseline and a table of the settings
// that differ. The runs are read through the view's own StoreLoader, off the GUI thread, and
// their curves decimated there (CompareRun). Export Report writes the comparison as one HTML
// page (or PDF): the speedup bars against the chosen baseline, the table, the curves.

#include "ui/compare/CompareRun.h"
#include "ui/compare/RunColoring.h"

#include <QList>
#include <QStringList>
#include <QWidget>

#include <vector>

class QComboBox;
class QCustomPlot;
class QLabel;
class QSplitter;
class QTabWidget;
class QTableWidget;
class QToolButton;

namespace hearth::ui {

class CompareBars;
class CompareCurves;
class CompareLegend;
class LadderPanel;
class StoreLoader;
class SweepScatter;
class ProfileBars;

class CompareView final : public QWidget {
    Q_OBJECT

public:
    using Metric = CompareMetric;
    using XAxis = CompareXAxis;

    explicit CompareView(const QString& dbPath, QWidget* parent = nullptr);

    QList<qint64> runIds() const;           // the runs shown (unknown ids are left out)
    const std::vector<CompareRun>& runs() const { return m_runs; }
    bool isLoading() const;
    void setMetric(Metric metric);
    void setXAxis(XAxis axis);
    void setBaseline(qint64 runId);
    // ColorBy::Setting needs `key`, one of differingKeys().
    void setColorBy(ColorBy by, const QString& key = {});
    const RunColors& runColors() const { return m_colors; }
    int highlightedRun() const;             // index into runs(), -1 when none
    int curveCount() const;                 // graphs with at least one point
    QStringList differingKeys() const;

    QCustomPlot* curves() const;
    CompareCurves* curvesView() const { return m_curves; }
    CompareLegend* legend() const { return m_legend; }
    QCustomPlot* bars() const;
    CompareBars* barsPanel() const { return m_bars; }
    SweepScatter* scatter() const { return m_scatter; }
    ProfileBars* profile() const { return m_profile; }
    LadderPanel* ladderPanel() const { return m_ladder; }   // its tab shows for one speed ladder's runs
    QTabWidget* tables() const { return m_tables; }          // below the curves: "Runs" and "Ladder"
    // The tabs beside the curves (bars, sweep scatter): further panels go here.
    QTabWidget* panels() const { return m_panels; }
    QTableWidget* metricsTable() const { return m_metrics; }
    QTableWidget* diffTable() const { return m_diff; }
    QByteArray saveSplitterState() const;
    void restoreSplitterState(const QByteArray& state);

public Q_SLOTS:
    // Reads the runs off the GUI thread ("Loading…" meanwhile) and shows them when they arrive
    // (loaded). Runs asked for later replace runs still loading.
    void setRuns(const QList<qint64>& runIds);
    void reload();
    // The runs shown, against the chosen baseline, as an HTML report (or PDF, by the suffix),
    // built from the store off the GUI thread: reportExported(path) or reportExportFailed(message).
    void exportReport(const QString& path);
    void exportInteractively();   // asks for the file; says where it went or why not

Q_SIGNALS:
    void loaded();
    void reportExported(const QString& path);
    void reportExportFailed(const QString& message);

private:
    QLayout* makeToolbar();
    void display(CompareData data);
    void updateHint();
    void fillColorByChoices();
    void drawCurves();
    void recolor();
    void fillTables();
    void setHoveredRun(int run);
    void applyHighlight();

    StoreLoader* m_loader;
    StoreLoader* m_exportLoader;   // its own, so that an export never drops a display load
    std::vector<CompareRun> m_runs;
    QVector<ConfigDifference> m_differences;
    RunColors m_colors;
    QList<qint64> m_requested;
    int m_hovered = -1;
    QLabel* m_hint;
    QComboBox* m_metric;
    QComboBox* m_xAxis;
    QComboBox* m_colorBy;
    QComboBox* m_baseline;
    QToolButton* m_legendToggle;
    CompareLegend* m_legend;
    CompareCurves* m_curves;
    QTabWidget* m_panels;
    CompareBars* m_bars;
    SweepScatter* m_scatter;
    ProfileBars* m_profile = nullptr;
    LadderPanel* m_ladder = nullptr;
    QTabWidget* m_tables = nullptr;
    int m_ladderTab = -1;
    QTableWidget* m_metrics;
    QTableWidget* m_diff;
    QSplitter* m_vertical;
    QSplitter* m_top;
    QSplitter* m_bottom;
};

}  // namespace hearth::ui
