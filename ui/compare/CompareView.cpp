#include "ui/compare/CompareView.h"

#include "ui/experiment/ConfigDiff.h"
#include "ui/session/StoreLoader.h"
#include "ui/widgets/Format.h"
#include "ui/widgets/PlotTheme.h"

#include <QComboBox>
#include <QDataStream>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIODevice>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <qcustomplot.h>

namespace hearth::ui {

namespace {

QTableWidget* makeTable(const QString& name)
{
    auto* t = new QTableWidget;
    t->setObjectName(name);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->hide();
    t->setAlternatingRowColors(true);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}

void setRow(QTableWidget* t, int row, const QStringList& cells)
{
    for (int c = 0; c < cells.size(); ++c) {
        auto* item = new QTableWidgetItem(cells[c]);
        item->setTextAlignment(c == 0 ? Qt::AlignLeft | Qt::AlignVCenter : Qt::AlignRight | Qt::AlignVCenter);
        t->setItem(row, c, item);
    }
}

}  // namespace

CompareView::CompareView(const QString& dbPath, QWidget* parent)
    : QWidget(parent), m_loader(new StoreLoader(dbPath, this)), m_hint(new QLabel), m_metric(new QComboBox), m_xAxis(new QComboBox),
      m_baseline(new QComboBox), m_curves(new QCustomPlot), m_bars(new QCustomPlot),
      m_metrics(makeTable(QStringLiteral("compareMetrics"))), m_diff(makeTable(QStringLiteral("configDiff"))),
      m_vertical(new QSplitter(Qt::Vertical)), m_top(new QSplitter), m_bottom(new QSplitter)
{
    m_metric->addItem(tr("Training loss"), int(Metric::TrainLoss));
    m_metric->addItem(tr("Validation loss"), int(Metric::ValLoss));
    m_metric->addItem(tr("Validation accuracy"), int(Metric::ValAccuracy));
    m_metric->addItem(tr("Learning rate"), int(Metric::LearningRate));
    m_metric->addItem(tr("Throughput (samples/s)"), int(Metric::Throughput));
    m_xAxis->addItem(tr("Step"), int(XAxis::Step));
    m_xAxis->addItem(tr("Epoch"), int(XAxis::Epoch));
    m_xAxis->addItem(tr("Wall time"), int(XAxis::WallTime));
    m_baseline->setToolTip(tr("Speed-up is this run's training time divided by each run's."));
    auto* save = new QToolButton;
    save->setText(tr("Save Plot…"));
    connect(save, &QToolButton::clicked, this, [this] { savePlotInteractively(this, m_curves, QStringLiteral("compare")); });

    m_hint->setObjectName(QStringLiteral("compareHint"));
    m_hint->setForegroundRole(QPalette::PlaceholderText);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Metric")));
    bar->addWidget(m_metric);
    bar->addWidget(new QLabel(tr("X axis")));
    bar->addWidget(m_xAxis);
    bar->addWidget(new QLabel(tr("Baseline")));
    bar->addWidget(m_baseline);
    bar->addStretch(1);
    bar->addWidget(save);

    for (QCustomPlot* p : {m_curves, m_bars}) {
        enablePlotInteractions(p);
        p->setMinimumSize(240, 200);
    }
    placeLegendBelow(m_curves, 2);
    placeLegendBelow(m_bars, 2);
    m_top->addWidget(m_curves);
    m_top->addWidget(m_bars);
    m_top->setStretchFactor(0, 3);
    m_top->setStretchFactor(1, 2);
    m_bottom->addWidget(m_metrics);
    m_bottom->addWidget(m_diff);
    m_bottom->setStretchFactor(0, 3);
    m_bottom->setStretchFactor(1, 2);
    m_vertical->addWidget(m_top);
    m_vertical->addWidget(m_bottom);
    m_vertical->setStretchFactor(0, 3);
    m_vertical->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_hint);
    layout->addLayout(bar);
    layout->addWidget(m_vertical, 1);

    connect(m_metric, &QComboBox::currentIndexChanged, this, &CompareView::drawCurves);
    connect(m_xAxis, &QComboBox::currentIndexChanged, this, &CompareView::drawCurves);
    connect(m_baseline, &QComboBox::currentIndexChanged, this, &CompareView::fillMetrics);
    display({});
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

void CompareView::setRuns(const QList<qint64>& runIds)
{
    m_requested = runIds;
    updateHint();
    // Runs on the loader's thread: every step of every run, which may be millions of rows.
    m_loader->load(
        [runIds](const hearth::RunStore& store) {
            std::vector<RunData> runs;
            for (qint64 id : runIds) {
                try {
                    auto summary = store.run(id);
                    if (!summary)
                        continue;
                    runs.push_back({*summary, store.steps(id), store.epochs(id)});
                } catch (const std::exception&) {
                    continue;   // deleted meanwhile: compare the others
                }
            }
            return runs;
        },
        [this](std::vector<RunData> runs) { display(std::move(runs)); },
        [this](const QString& message) {
            display({});
            m_hint->setText(message);
            m_hint->setVisible(true);
        });
}

void CompareView::updateHint()
{
    if (isLoading())
        m_hint->setText(tr("Loading %n run(s)…", nullptr, static_cast<int>(m_requested.size())));
    else
        m_hint->setText(tr("Select two or more runs in History and press Compare."));
    m_hint->setVisible(isLoading() || m_runs.size() < 2);
}

void CompareView::display(std::vector<RunData> runs)
{
    m_runs = std::move(runs);
    updateHint();
    {
        const QSignalBlocker block(m_baseline);
        const qint64 previous = m_baseline->currentData().toLongLong();
        m_baseline->clear();
        for (const auto& r : m_runs)
            m_baseline->addItem(runLabel(r), static_cast<qint64>(r.summary.id));
        m_baseline->setCurrentIndex(std::max(0, m_baseline->findData(previous)));
    }
    drawCurves();
    drawBars();
    fillMetrics();
    fillDiff();
    Q_EMIT loaded();
}

void CompareView::reload()
{
    setRuns(m_requested);
}

QString CompareView::runLabel(const RunData& run) const
{
    return tr("#%1 %2").arg(run.summary.id).arg(qstr(run.summary.name));
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
    const auto metric = static_cast<Metric>(m_metric->currentData().toInt());
    const auto axis = static_cast<XAxis>(m_xAxis->currentData().toInt());
    m_curves->clearGraphs();
    for (size_t i = 0; i < m_runs.size(); ++i) {
        const RunData& run = m_runs[i];
        QVector<double> x, y;
        if (metric == Metric::ValLoss || metric == Metric::ValAccuracy) {
            double wall = 0.0;
            for (const auto& e : run.epochs) {
                wall += e.epoch_time_s;
                x << (axis == XAxis::Step ? double(e.global_step) : axis == XAxis::Epoch ? double(e.epoch + 1) : wall);
                y << (metric == Metric::ValLoss ? e.val_loss : e.val_accuracy);
            }
        } else {
            for (const auto& s : run.steps) {
                const double epoch = s.epoch + (s.batches_per_epoch > 0 ? double(s.batch) / s.batches_per_epoch : 0.0);
                x << (axis == XAxis::Step ? double(s.global_step) : axis == XAxis::Epoch ? epoch : s.elapsed_s);
                y << (metric == Metric::TrainLoss ? s.loss : metric == Metric::LearningRate ? s.lr : s.samples_per_sec);
            }
        }
        QCPGraph* g = m_curves->addGraph();
        g->setName(runLabel(run));
        g->setPen(QPen(seriesColor(static_cast<int>(i)), 1.0));   // wide antialiased polylines are slow to draw
        g->setAdaptiveSampling(true);
        if (x.size() < 50)
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
        g->setData(x, y, true);
    }
    m_curves->xAxis->setLabel(axis == XAxis::Step ? tr("optimizer step") : axis == XAxis::Epoch ? tr("epoch")
                                                                                                : tr("seconds"));
    m_curves->yAxis->setLabel(m_metric->currentText());
    m_curves->rescaleAxes();
    applyPlotTheme(m_curves);
    m_curves->replot();
}

void CompareView::drawBars()
{
    m_bars->clearPlottables();
    m_bars->yAxis2->setVisible(true);
    QVector<double> ticks, times, accuracies;
    QVector<QString> labels;
    for (size_t i = 0; i < m_runs.size(); ++i) {
        ticks << double(i + 1);
        labels << QStringLiteral("#%1").arg(m_runs[i].summary.id);
        times << m_runs[i].summary.train_time_s.value_or(0.0);
        accuracies << m_runs[i].summary.test_accuracy.value_or(0.0) * 100.0;
    }
    auto* group = new QCPBarsGroup(m_bars);
    auto* timeBars = new QCPBars(m_bars->xAxis, m_bars->yAxis);
    auto* accBars = new QCPBars(m_bars->xAxis, m_bars->yAxis2);
    timeBars->setName(tr("training time (s)"));
    accBars->setName(tr("test accuracy (%)"));
    for (auto [bars, color, data] : {std::tuple{timeBars, seriesColor(0), &times}, std::tuple{accBars, seriesColor(1), &accuracies}}) {
        bars->setWidth(0.35);
        bars->setBarsGroup(group);
        bars->setPen(QPen(color.darker(120)));
        bars->setBrush(color);
        bars->setData(ticks, *data, true);
    }
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    ticker->addTicks(ticks, labels);
    m_bars->xAxis->setTicker(ticker);
    m_bars->xAxis->setRange(0.4, std::max<double>(1.6, double(m_runs.size()) + 0.6));
    m_bars->yAxis->setLabel(tr("training time (s)"));
    m_bars->yAxis2->setLabel(tr("test accuracy (%)"));
    const double maxTime = times.isEmpty() ? 1.0 : *std::max_element(times.begin(), times.end());
    m_bars->yAxis->setRange(0, std::max(1.0, maxTime * 1.15));
    m_bars->yAxis2->setRange(0, 100);
    applyPlotTheme(m_bars);
    m_bars->replot();
}

void CompareView::fillMetrics()
{
    const QStringList header{tr("Run"), tr("Status"), tr("Train time"), tr("Speed-up"), tr("Samples/s"),
                             tr("Best val acc"), tr("Test acc"), tr("Peak memory"), tr("Device")};
    m_metrics->clear();
    m_metrics->setColumnCount(static_cast<int>(header.size()));
    m_metrics->setHorizontalHeaderLabels(header);
    m_metrics->setRowCount(static_cast<int>(m_runs.size()));
    const qint64 baselineId = m_baseline->currentData().toLongLong();
    std::optional<double> baseTime;
    for (const auto& r : m_runs) {
        if (r.summary.id == baselineId)
            baseTime = r.summary.train_time_s;
    }
    for (size_t i = 0; i < m_runs.size(); ++i) {
        const auto& s = m_runs[i].summary;
        QString speedup = QStringLiteral("–");
        if (baseTime && s.train_time_s && *s.train_time_s > 0)
            speedup = s.id == baselineId ? tr("baseline") : QStringLiteral("%1×").arg(*baseTime / *s.train_time_s, 0, 'f', 2);
        const auto pct = [](const std::optional<double>& v) { return v ? formatPercent(*v) : QStringLiteral("–"); };
        setRow(m_metrics, static_cast<int>(i),
               {runLabel(m_runs[i]), qstr(s.status), s.train_time_s ? formatDuration(*s.train_time_s) : "–", speedup,
                s.samples_per_sec ? formatRate(*s.samples_per_sec) : "–", pct(s.best_val_accuracy),
                pct(s.test_accuracy), s.peak_memory_bytes ? formatBytes(*s.peak_memory_bytes) : "–", qstr(s.device)});
        m_metrics->item(static_cast<int>(i), 0)->setForeground(seriesColor(static_cast<int>(i)));
    }
    m_metrics->resizeColumnsToContents();
}

void CompareView::fillDiff()
{
    QStringList configs, header{tr("Differing setting")};
    for (const auto& r : m_runs) {
        configs << qstr(r.summary.config_json);
        header << runLabel(r);
    }
    const auto diffs = diffConfigs(configs);
    m_diff->clear();
    m_diff->setColumnCount(static_cast<int>(header.size()));
    m_diff->setHorizontalHeaderLabels(header);
    m_diff->setRowCount(static_cast<int>(diffs.size()));
    for (int i = 0; i < diffs.size(); ++i)
        setRow(m_diff, i, QStringList{diffs[i].key} + diffs[i].values);
    if (diffs.isEmpty() && m_runs.size() >= 2) {
        m_diff->setRowCount(1);
        setRow(m_diff, 0, {tr("(same configuration apart from the name)")});
    }
    m_diff->resizeColumnsToContents();
}

int CompareView::curveCount() const
{
    int n = 0;
    for (int i = 0; i < m_curves->graphCount(); ++i)
        n += m_curves->graph(i)->dataCount() > 0 ? 1 : 0;
    return n;
}

QStringList CompareView::differingKeys() const
{
    QStringList keys;
    QStringList configs;
    for (const auto& r : m_runs)
        configs << qstr(r.summary.config_json);
    for (const auto& d : diffConfigs(configs))
        keys << d.key;
    return keys;
}

QByteArray CompareView::saveSplitterState() const
{
    QByteArray state;
    QDataStream out(&state, QIODevice::WriteOnly);
    out << m_vertical->saveState() << m_top->saveState() << m_bottom->saveState();
    return state;
}

void CompareView::restoreSplitterState(const QByteArray& state)
{
    QDataStream in(state);
    QByteArray v, t, b;
    in >> v >> t >> b;
    if (in.status() == QDataStream::Ok) {
        m_vertical->restoreState(v);
        m_top->restoreState(t);
        m_bottom->restoreState(b);
    }
}

}  // namespace hearth::ui
