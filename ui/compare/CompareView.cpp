#include "ui/compare/CompareView.h"

#include "ui/compare/CompareBars.h"
#include "ui/widgets/ProfileBars.h"
#include "ui/compare/CompareCurves.h"
#include "ui/compare/CompareLegend.h"
#include "ui/compare/LadderPanel.h"
#include "ui/compare/CompareTables.h"
#include "ui/compare/SweepScatter.h"
#include "ui/report/ReportDocument.h"
#include "ui/session/StoreLoader.h"
#include "ui/widgets/PlotTheme.h"

#include <QComboBox>
#include <QDataStream>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QIODevice>
#include <QLabel>
#include <QMenu>
#include <QSplitter>
#include <QScrollArea>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>

namespace hearth::ui {

namespace {

// Leads the saved splitter state, so a state saved by the older two-pane layout is ignored.
constexpr quint32 kSplitterStateVersion = 0x48430002;

const QString kByRun = QStringLiteral("run");
const QString kBySweep = QStringLiteral("sweep");
const QString kByTag = QStringLiteral("tag");
const QString kBySetting = QStringLiteral("setting:");

}  // namespace

CompareView::CompareView(const QString& dbPath, QWidget* parent)
    : QWidget(parent), m_loader(new StoreLoader(dbPath, this)), m_exportLoader(new StoreLoader(dbPath, this)),
      m_hint(new QLabel), m_metric(new QComboBox),
      m_xAxis(new QComboBox), m_colorBy(new QComboBox), m_baseline(new QComboBox), m_legendToggle(new QToolButton),
      m_legend(new CompareLegend), m_curves(new CompareCurves), m_panels(new QTabWidget), m_bars(new CompareBars),
      m_scatter(new SweepScatter), m_metrics(makeCompareTable(QStringLiteral("compareMetrics"))),
      m_diff(makeCompareTable(QStringLiteral("configDiff"))), m_vertical(new QSplitter(Qt::Vertical)),
      m_top(new QSplitter), m_bottom(new QSplitter)
{
    m_hint->setObjectName(QStringLiteral("compareHint"));
    m_hint->setForegroundRole(QPalette::PlaceholderText);
    m_panels->setObjectName(QStringLiteral("comparePanels"));
    m_panels->addTab(m_bars, tr("Bars"));
    m_panels->addTab(m_scatter, tr("Sweep scatter"));
    // Why a technique helped: each run's step-time breakdown and memory at the peak, side by side.
    m_profile = new ProfileBars;
    m_profile->setObjectName(QStringLiteral("compareProfile"));
    auto* profileScroll = new QScrollArea;
    profileScroll->setWidgetResizable(true);
    profileScroll->setWidget(m_profile);
    m_panels->addTab(profileScroll, tr("Time && Memory"));
    m_panels->setDocumentMode(true);
    // Below the curves, where the width is: the runs' table, and when the runs are one speed
    // ladder's, that ladder judged over its repeats.
    m_ladder = new LadderPanel;
    m_tables = new QTabWidget;
    m_tables->setObjectName(QStringLiteral("compareTables"));
    m_tables->setDocumentMode(true);
    m_tables->addTab(m_metrics, tr("Runs"));
    m_ladderTab = m_tables->addTab(m_ladder, tr("Ladder"));
    m_tables->setTabVisible(m_ladderTab, false);

    // Colouring decides how the legend groups the runs: its choice sits on top of the list.
    auto* legendPane = new QWidget;
    legendPane->setObjectName(QStringLiteral("compareLegendPane"));
    auto* colorRow = new QHBoxLayout;
    colorRow->addWidget(new QLabel(tr("Colour by")));
    colorRow->addWidget(m_colorBy, 1);
    auto* paneLayout = new QVBoxLayout(legendPane);
    paneLayout->setContentsMargins(0, 0, 0, 0);
    paneLayout->addLayout(colorRow);
    paneLayout->addWidget(m_legend, 1);
    m_top->addWidget(legendPane);
    m_top->addWidget(m_curves);
    m_top->addWidget(m_panels);
    // The run names keep their width; the curves and the panels share what the window adds.
    m_top->setStretchFactor(0, 0);
    m_top->setStretchFactor(1, 2);
    m_top->setStretchFactor(2, 1);
    m_top->setSizes({220, 540, 280});   // until the user's own sizes are restored
    m_bottom->addWidget(m_tables);
    m_bottom->addWidget(m_diff);
    m_bottom->setStretchFactor(0, 3);
    m_bottom->setStretchFactor(1, 2);
    m_vertical->addWidget(m_top);
    m_vertical->addWidget(m_bottom);
    m_vertical->setStretchFactor(0, 3);
    m_vertical->setStretchFactor(1, 2);
    m_vertical->setSizes({600, 300});
    m_vertical->setObjectName(QStringLiteral("compareVertical"));
    m_top->setObjectName(QStringLiteral("compareTop"));
    m_bottom->setObjectName(QStringLiteral("compareBottom"));
    for (QSplitter* s : {m_vertical, m_top, m_bottom})
        s->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_hint);
    layout->addLayout(makeToolbar());
    layout->addWidget(m_vertical, 1);

    connect(m_legend, &CompareLegend::runHovered, this, &CompareView::setHoveredRun);
    connect(m_legend, &CompareLegend::runPinned, this, &CompareView::applyHighlight);
    connect(m_curves, &CompareCurves::runHovered, this, &CompareView::setHoveredRun);
    connect(m_scatter, &SweepScatter::runHovered, this, &CompareView::setHoveredRun);
    display({});
}

QLayout* CompareView::makeToolbar()
{
    m_metric->addItem(tr("Training loss"), int(Metric::TrainLoss));
    m_metric->addItem(tr("Validation loss"), int(Metric::ValLoss));
    m_metric->addItem(tr("Validation accuracy"), int(Metric::ValAccuracy));
    m_metric->addItem(tr("Learning rate"), int(Metric::LearningRate));
    m_metric->addItem(tr("Throughput (samples/s)"), int(Metric::Throughput));
    m_xAxis->addItem(tr("Step"), int(XAxis::Step));
    m_xAxis->addItem(tr("Epoch"), int(XAxis::Epoch));
    m_xAxis->addItem(tr("Wall time"), int(XAxis::WallTime));
    m_colorBy->setObjectName(QStringLiteral("compareColorBy"));
    m_colorBy->setToolTip(tr("Colour the runs by run, sweep, tag, or a setting that differs between them."));
    m_baseline->setToolTip(tr("Speed-up is each run's training samples/s divided by this run's (for runs that "
                              "trained the same samples, this run's training time divided by theirs)."));
    // Setting names and run names can be long: the combos keep a readable width, never more, so
    // that the tab fits beside the experiment dock in a 1100-pixel window.
    for (QComboBox* combo : {m_metric, m_colorBy, m_baseline}) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(10);
    }
    m_legendToggle->setText(tr("Legend"));
    m_legendToggle->setCheckable(true);
    m_legendToggle->setChecked(true);
    m_legendToggle->setToolTip(tr("Show or hide the list of runs beside the curves."));
    connect(m_legendToggle, &QToolButton::toggled, m_legend->parentWidget(), &QWidget::setVisible);
    // One Export button with a menu: two buttons would widen the tab past an 1100-pixel window.
    auto* exportButton = new QToolButton;
    exportButton->setObjectName(QStringLiteral("compareExport"));
    exportButton->setText(tr("Export"));
    exportButton->setPopupMode(QToolButton::InstantPopup);
    exportButton->setToolTip(tr("Export this comparison as a report or the plot as an image."));
    auto* exportMenu = new QMenu(exportButton);
    QAction* report = exportMenu->addAction(tr("Report (HTML or PDF)…"));
    report->setObjectName(QStringLiteral("compareExportReport"));
    report->setToolTip(tr("Write this comparison as one HTML file (speedup bars against the baseline, the table, "
                          "the curves, the settings that differ; opens in any browser) or as PDF."));
    connect(report, &QAction::triggered, this, &CompareView::exportInteractively);
    QAction* plot = exportMenu->addAction(tr("Plot Image…"));
    connect(plot, &QAction::triggered, this,
            [this] { savePlotInteractively(this, curves(), QStringLiteral("compare")); });
    exportMenu->setToolTipsVisible(true);
    exportButton->setMenu(exportMenu);
    auto* logY = new QToolButton;
    logY->setObjectName(QStringLiteral("compareLogY"));
    logY->setText(tr("Log y"));
    logY->setCheckable(true);
    logY->setToolTip(tr("A logarithmic value axis: curves decades apart stay readable."));
    connect(logY, &QToolButton::toggled, m_curves, &CompareCurves::setLogarithmic);
    connect(m_metric, &QComboBox::currentIndexChanged, this, &CompareView::drawCurves);
    connect(m_xAxis, &QComboBox::currentIndexChanged, this, &CompareView::drawCurves);
    connect(m_colorBy, &QComboBox::currentIndexChanged, this, &CompareView::recolor);
    connect(m_baseline, &QComboBox::currentIndexChanged, this, &CompareView::fillTables);

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_legendToggle);
    for (auto [label, combo] : {std::pair{tr("Metric"), m_metric}, std::pair{tr("X axis"), m_xAxis},
                                std::pair{tr("Baseline"), m_baseline}}) {
        bar->addWidget(new QLabel(label));
        bar->addWidget(combo);
    }
    bar->addWidget(logY);
    bar->addStretch(1);
    bar->addWidget(exportButton);
    return bar;
}

QList<qint64> CompareView::runIds() const
{
    QList<qint64> ids;
    for (const auto& r : m_runs)
        ids << r.summary.id;
    return ids;
}

bool CompareView::isLoading() const
{
    return m_loader->isLoading();
}

QCustomPlot* CompareView::curves() const
{
    return m_curves->plot();
}

QCustomPlot* CompareView::bars() const
{
    return m_bars->plot();
}

void CompareView::setRuns(const QList<qint64>& runIds)
{
    m_requested = runIds;
    updateHint();
    // On the loader's thread: every step of every run (maybe millions of rows), decimated there.
    m_loader->load([runIds](const hearth::RunStore& store) { return loadCompareData(store, runIds); },
                   [this](CompareData data) { display(std::move(data)); },
                   [this](const QString& message) {
                       display({});
                       m_hint->setText(message);
                       m_hint->setVisible(true);
                   });
}

void CompareView::reload()
{
    setRuns(m_requested);
}

void CompareView::exportReport(const QString& path)
{
    const QList<qint64> ids = runIds();
    if (ids.isEmpty()) {
        Q_EMIT reportExportFailed(tr("No runs are shown."));
        return;
    }
    if (!isReportDocument(path)) {
        Q_EMIT reportExportFailed(tr("%1: a comparison is written as .html or .pdf").arg(path));
        return;
    }
    const qint64 baseline = m_baseline->currentData().toLongLong();
    m_exportLoader->load(
        [ids, baseline, path](const hearth::RunStore& store) {
            writeReportDocument(comparisonReportHtml(store, ids, baseline), path);
            return path;
        },
        [this](const QString& written) { Q_EMIT reportExported(written); },
        [this](const QString& message) { Q_EMIT reportExportFailed(message); });
}

void CompareView::exportInteractively()
{
    if (m_runs.empty())
        return;
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    const auto& first = m_runs.front().summary;
    const bool oneSweep = first.sweep_id && std::all_of(m_runs.begin(), m_runs.end(), [&first](const CompareRun& r) {
        return r.summary.sweep_id == first.sweep_id;
    });
    const QString name = oneSweep ? QStringLiteral("sweep-%1").arg(*first.sweep_id)
                                  : QStringLiteral("compare-%1-runs").arg(m_runs.size());
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Comparison Report"),
        QStringLiteral("%1/%2.html").arg(dir, name), tr("HTML report, interactive (*.html);;PDF report (*.pdf)"));
    if (path.isEmpty())
        return;
    showReportExportResult(this, &CompareView::reportExported, &CompareView::reportExportFailed);
    exportReport(path);
}

void CompareView::updateHint()
{
    if (isLoading())
        m_hint->setText(tr("Loading %n run(s)…", nullptr, static_cast<int>(m_requested.size())));
    else
        m_hint->setText(tr("Select two or more runs in History and press Compare."));
    m_hint->setVisible(isLoading() || m_runs.size() < 2);
}

void CompareView::display(CompareData data)
{
    m_tables->setTabVisible(m_ladderTab, data.ladder.has_value());
    if (data.ladder) {
        if (data.memoryLadder)
            m_ladder->setMemoryLadder(*data.ladder, *data.memoryLadder);
        else
            m_ladder->setLadder(*data.ladder);
        m_tables->setCurrentIndex(m_ladderTab);
    } else {
        m_tables->setCurrentWidget(m_metrics);
    }
    m_runs = std::move(data.runs);
    m_differences = std::move(data.differences);
    m_hovered = -1;
    updateHint();
    {
        const QSignalBlocker block(m_baseline);
        const qint64 previous = m_baseline->currentData().toLongLong();
        m_baseline->clear();
        for (const auto& r : m_runs)
            m_baseline->addItem(compareRunLabel(r.summary), static_cast<qint64>(r.summary.id));
        m_baseline->setCurrentIndex(std::max(0, m_baseline->findData(previous)));
    }
    fillColorByChoices();
    recolor();   // colours, then every part drawn once with them
    Q_EMIT loaded();
}

void CompareView::fillColorByChoices()
{
    const QSignalBlocker block(m_colorBy);
    const QString previous = m_colorBy->currentData().toString();
    m_colorBy->clear();
    m_colorBy->addItem(tr("Run"), kByRun);
    m_colorBy->addItem(tr("Sweep"), kBySweep);
    m_colorBy->addItem(tr("Tag"), kByTag);
    for (const auto& d : std::as_const(m_differences))
        m_colorBy->addItem(d.key, kBySetting + d.key);
    m_colorBy->setCurrentIndex(std::max(0, m_colorBy->findData(previous)));
}

void CompareView::setColorBy(ColorBy by, const QString& key)
{
    const QString data = by == ColorBy::Run     ? kByRun
                         : by == ColorBy::Sweep ? kBySweep
                         : by == ColorBy::Tag   ? kByTag
                                                : kBySetting + key;
    m_colorBy->setCurrentIndex(std::max(0, m_colorBy->findData(data)));
}

void CompareView::recolor()
{
    const QString choice = m_colorBy->currentData().toString();
    ColorBy by = ColorBy::Run;
    const ConfigDifference* difference = nullptr;
    if (choice == kBySweep) {
        by = ColorBy::Sweep;
    } else if (choice == kByTag) {
        by = ColorBy::Tag;
    } else if (choice.startsWith(kBySetting)) {
        by = ColorBy::Setting;
        for (const auto& d : std::as_const(m_differences)) {
            if (kBySetting + d.key == choice)
                difference = &d;
        }
    }
    m_colors = colorRuns(m_runs, by, difference);
    drawCurves();
    m_legend->setRuns(m_runs, m_colors);
    m_bars->setRuns(m_runs, m_colors);
    m_scatter->setRuns(m_runs, m_differences, m_colors);
    std::vector<ProfileBars::Row> profileRows;
    for (const auto& run : m_runs)
        profileRows.push_back({compareRunLabel(run.summary), run.breakdown, run.memory});
    m_profile->setRows(profileRows);
    fillTables();
}

void CompareView::setMetric(Metric metric)
{
    m_metric->setCurrentIndex(m_metric->findData(int(metric)));
}

void CompareView::setXAxis(XAxis axis)
{
    m_xAxis->setCurrentIndex(m_xAxis->findData(int(axis)));
}

void CompareView::setBaseline(qint64 runId)
{
    m_baseline->setCurrentIndex(std::max(0, m_baseline->findData(runId)));
}

void CompareView::drawCurves()
{
    m_curves->setCurves(m_runs, static_cast<Metric>(m_metric->currentData().toInt()),
                        static_cast<XAxis>(m_xAxis->currentData().toInt()), m_metric->currentText(), m_colors);
    applyHighlight();
}

void CompareView::fillTables()
{
    fillMetricsTable(m_metrics, m_runs, m_baseline->currentData().toLongLong(), m_colors);
    fillDifferencesTable(m_diff, m_runs, m_differences, m_colors);
}

void CompareView::setHoveredRun(int run)
{
    m_hovered = run;
    applyHighlight();
}

int CompareView::highlightedRun() const
{
    return m_hovered >= 0 ? m_hovered : m_legend->pinnedRun();
}

void CompareView::applyHighlight()
{
    m_curves->setHighlighted(highlightedRun());
    m_scatter->setHighlighted(highlightedRun());
}

int CompareView::curveCount() const
{
    int n = 0;
    for (int i = 0; i < curves()->graphCount(); ++i)
        n += curves()->graph(i)->dataCount() > 0 ? 1 : 0;
    return n;
}

QStringList CompareView::differingKeys() const
{
    QStringList keys;
    for (const auto& d : m_differences)
        keys << d.key;
    return keys;
}

QByteArray CompareView::saveSplitterState() const
{
    QByteArray state;
    QDataStream out(&state, QIODevice::WriteOnly);
    out << kSplitterStateVersion << m_vertical->saveState() << m_top->saveState() << m_bottom->saveState()
        << m_legendToggle->isChecked();
    return state;
}

void CompareView::restoreSplitterState(const QByteArray& state)
{
    QDataStream in(state);
    quint32 version = 0;
    QByteArray v, t, b;
    bool legend = true;
    in >> version >> v >> t >> b >> legend;
    if (in.status() == QDataStream::Ok && version == kSplitterStateVersion) {
        m_vertical->restoreState(v);
        m_top->restoreState(t);
        m_bottom->restoreState(b);
        m_legendToggle->setChecked(legend);
    }
}

}  // namespace hearth::ui
