#include "ui/report/ReportView.h"

#include "ui/report/PredictDialog.h"

#include "storage/RunStore.h"
#include "storage/tensorboard/TensorBoardExport.h"
#include "ui/report/ConfusionMatrixView.h"
#include "ui/report/ReportDocument.h"
#include "ui/report/SampleBrowser.h"
#include "engine/metrics/RunProfile.h"
#include "ui/session/StoreLoader.h"
#include "ui/widgets/ProfileBars.h"
#include "ui/widgets/Format.h"
#include "ui/widgets/PlotTheme.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

namespace hearth::ui {

namespace {

QStringList classNames(const hearth::EvalReport* e)
{
    QStringList names;
    if (e) {
        for (const auto& n : e->report.class_names)
            names << qstr(n);
    }
    return names;
}

// Runs on the loader's thread.
QString predictTip()
{
    return ReportView::tr("Classify new images, table rows or texts with this run's best checkpoint.");
}

ReportView::Loaded loadReport(const hearth::RunStore& store, qint64 runId)
{
    ReportView::Loaded loaded;
    loaded.report = loadRunReport(store, runId);
    if (const hearth::EvalReport* e = loaded.report.primary())
        loaded.mistakes = store.predictions(runId, e->split, /*misclassified_only=*/true);
    loaded.steps = store.steps(runId);
    loaded.noCheckpoint = qstr(store.checkpointProblem(runId));
    return loaded;
}

}  // namespace

ReportView::ReportView(const QString& dbPath, QWidget* parent)
    : QWidget(parent), m_loader(new StoreLoader(dbPath, this)), m_exportLoader(new StoreLoader(dbPath, this)), m_title(new QLabel), m_subtitle(new QLabel),
      m_dbPath(dbPath), m_predict(new QPushButton(tr("Predict…"))), m_export(new QPushButton(tr("Export Report…"))), m_savePlots(new QPushButton(tr("Save Plots…"))),
      m_tabs(new QTabWidget), m_table(new QTableWidget), m_matrix(new ConfusionMatrixView), m_curves(new QCustomPlot),
      m_samples(new SampleBrowser), m_profile(new ProfileBars), m_details(new QTreeWidget)
{
    QFont big = m_title->font();
    big.setPointSizeF(big.pointSizeF() * 1.3);
    big.setBold(true);
    m_title->setFont(big);
    m_title->setObjectName(QStringLiteral("reportTitle"));
    m_subtitle->setForegroundRole(QPalette::PlaceholderText);
    m_subtitle->setWordWrap(true);
    m_export->setToolTip(tr("Write this report as one HTML file with interactive charts (opens in any browser, "
                            "no network needed), as PDF, or its tables as Markdown or JSON."));
    m_savePlots->setToolTip(tr("Save the training curves and the confusion matrix as PNG or PDF."));
    m_predict->setObjectName(QStringLiteral("predictButton"));
    m_predict->setToolTip(predictTip());
    connect(m_predict, &QPushButton::clicked, this, &ReportView::openPredictDialog);
    connect(m_export, &QPushButton::clicked, this, &ReportView::exportInteractively);
    connect(m_savePlots, &QPushButton::clicked, this, &ReportView::savePlotsInteractively);

    m_table->setObjectName(QStringLiteral("classificationTable"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->setAlternatingRowColors(true);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    auto* classification = new QSplitter;
    m_classificationSplit = classification;
    classification->addWidget(m_table);
    classification->addWidget(m_matrix);
    classification->setStretchFactor(0, 0);   // the table keeps its width; the heatmap takes the rest
    classification->setStretchFactor(1, 1);
    connect(m_matrix, &ConfusionMatrixView::cellActivated, this, [this](int t, int p) {
        m_samples->setFilter(t, t == p ? -1 : p);
        m_tabs->setCurrentWidget(m_samples);
    });

    enablePlotInteractions(m_curves);
    placeLegendBelow(m_curves);
    m_details->setObjectName(QStringLiteral("runDetails"));
    m_details->setColumnCount(2);
    m_details->setHeaderLabels({tr("Item"), tr("Value")});
    m_details->setAlternatingRowColors(true);
    m_details->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);

    m_tabs->addTab(classification, tr("Classification"));
    m_tabs->addTab(m_curves, tr("Curves"));
    m_tabs->addTab(m_samples, tr("Misclassified"));
    m_tabs->addTab(m_profile, tr("Time && Memory"));
    m_tabs->addTab(m_details, tr("Run Details"));
    m_tabs->setDocumentMode(true);

    auto* header = new QHBoxLayout;
    auto* titles = new QVBoxLayout;
    titles->addWidget(m_title);
    titles->addWidget(m_subtitle);
    header->addLayout(titles, 1);
    header->addWidget(m_predict, 0, Qt::AlignBottom);
    header->addWidget(m_export, 0, Qt::AlignBottom);
    header->addWidget(m_savePlots, 0, Qt::AlignBottom);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(header);
    layout->addWidget(m_tabs, 1);
    clearAll(tr("Select a run in History, or finish a run, to see its report."));
}

void ReportView::clearAll(const QString& message)
{
    m_report = RunReport{};
    m_title->setText(tr("Report"));
    m_subtitle->setText(message);
    m_table->clear();
    m_table->setRowCount(0);
    m_table->setColumnCount(0);
    m_matrix->setMatrix({}, {});
    m_curves->clearGraphs();
    m_curves->replot();
    m_samples->clear();
    m_details->clear();
    m_predict->setEnabled(false);
    m_export->setEnabled(false);
    m_savePlots->setEnabled(false);
}

bool ReportView::isLoading() const
{
    return m_loader->isLoading();
}

void ReportView::showRun(qint64 runId)
{
    if (runId != m_runId) {
        clearAll(tr("Loading run %1…").arg(runId));
        m_runId = 0;
    }
    m_loader->load([runId](const hearth::RunStore& store) { return loadReport(store, runId); },
                   [this](const Loaded& data) { display(data); },
                   [this, runId](const QString& message) {
                       // A failing read shows its message in the view.
                       m_runId = 0;
                       clearAll(message);
                       Q_EMIT loadFailed(runId, message);
                   });
}

void ReportView::display(const Loaded& data)
{
    m_report = data.report;
    const auto& s = m_report.run;
    m_runId = s.id;
    m_title->setText(tr("Run %1 — %2").arg(s.id).arg(qstr(s.name)));
    QString subtitle = tr("%1 · %2 · started %3").arg(qstr(s.status), qstr(s.device), formatTimestamp(s.started_at));
    if (s.test_accuracy) subtitle += tr(" · test accuracy %1").arg(formatPercent(*s.test_accuracy));
    if (s.train_time_s) subtitle += tr(" · trained in %1").arg(formatDuration(*s.train_time_s));
    if (!s.failure_message.empty()) subtitle += QStringLiteral("\n") + qstr(s.failure_message);
    if (!s.stop_reason.empty()) subtitle += QStringLiteral("\n") + qstr(s.stop_reason);
    m_subtitle->setText(subtitle);
    fillClassification(data.mistakes);
    fillCurves(data.steps);
    fillDetails();
    fillProfile();
    m_noCheckpoint = data.noCheckpoint;
    m_predict->setEnabled(data.noCheckpoint.isEmpty());
    m_predict->setToolTip(data.noCheckpoint.isEmpty() ? predictTip() : data.noCheckpoint);
    m_export->setEnabled(true);
    m_savePlots->setEnabled(true);
    Q_EMIT loaded(m_runId);
}

// One bar per profiled epoch and the run's mean (warm-up epoch left out); memory once per run.
void ReportView::fillProfile()
{
    std::vector<ProfileBars::Row> rows;
    if (const auto mean = hearth::meanBreakdown(m_report.epochs))
        rows.push_back({tr("run"), mean, m_report.memory});
    else if (m_report.memory)
        rows.push_back({tr("run"), std::nullopt, m_report.memory});
    for (const auto& e : m_report.epochs) {
        if (e.breakdown.profiled > 0)
            rows.push_back({tr("epoch %1").arg(e.epoch + 1), e.breakdown, std::nullopt});
    }
    m_profile->setRows(rows);
}

void ReportView::reload()
{
    if (m_runId > 0)
        showRun(m_runId);
}

void ReportView::fillClassification(const std::vector<hearth::Prediction>& mistakes)
{
    const hearth::EvalReport* e = m_report.primary();
    m_table->clear();
    if (!e) {
        m_table->setRowCount(0);
        m_table->setColumnCount(0);
        m_matrix->setMatrix({}, {});
        m_samples->clear();
        return;
    }
    const ReportTable t = hearth::ui::classificationTable(*e);
    m_table->setColumnCount(static_cast<int>(t.header.size()));
    m_table->setHorizontalHeaderLabels(QStringList{tr("class")} + t.header.mid(1));
    m_table->setRowCount(static_cast<int>(t.rows.size()));
    const int firstSummary = static_cast<int>(e->report.class_names.size());
    for (int r = 0; r < t.rows.size(); ++r) {
        for (int c = 0; c < t.rows[r].size(); ++c) {
            auto* item = new QTableWidgetItem(t.rows[r][c]);
            item->setTextAlignment(c == 0 ? Qt::AlignLeft | Qt::AlignVCenter : Qt::AlignRight | Qt::AlignVCenter);
            if (r >= firstSummary) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
            m_table->setItem(r, c, item);
        }
    }
    m_table->resizeColumnsToContents();
    m_table->horizontalHeader()->setStretchLastSection(false);
    // Wide enough for every column: the numbers are the point of this table.
    int width = 2 * m_table->frameWidth() + m_table->verticalScrollBar()->sizeHint().width();
    for (int c = 0; c < m_table->columnCount(); ++c)
        width += m_table->columnWidth(c);
    m_table->setMinimumWidth(width);
    m_classificationSplit->setSizes({width, std::max(300, m_classificationSplit->width() - width)});
    m_matrix->setMatrix(e->report.confusion, classNames(e));
    m_samples->setRun(qstr(m_report.run.config_json), classNames(e), mistakes);
}

void ReportView::fillCurves(const std::vector<hearth::StepMetrics>& steps)
{
    m_curves->clearGraphs();
    QVector<double> x, loss;
    for (const auto& s : steps) {
        x << static_cast<double>(s.global_step);
        loss << s.loss;
    }
    QCPGraph* train = m_curves->addGraph();
    train->setName(tr("training loss (per step)"));
    train->setPen(QPen(seriesColor(0), 1.0));
    train->setData(x, loss, true);
    // Epoch metrics on the same step axis: each epoch's point sits at its last optimizer step.
    QVector<double> ex, vloss, vacc;
    for (const auto& e : m_report.epochs) {
        ex << static_cast<double>(e.global_step);
        vloss << e.val_loss;
        vacc << e.val_accuracy;
    }
    QCPGraph* val = m_curves->addGraph();
    val->setName(tr("validation loss (per epoch)"));
    val->setPen(QPen(seriesColor(1), 2));
    val->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
    val->setData(ex, vloss, true);
    m_curves->yAxis2->setVisible(true);
    QCPGraph* acc = m_curves->addGraph(m_curves->xAxis, m_curves->yAxis2);
    acc->setName(tr("validation accuracy (right axis)"));
    acc->setPen(QPen(seriesColor(2), 2));
    acc->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
    acc->setData(ex, vacc, true);
    m_curves->xAxis->setLabel(tr("optimizer step"));
    m_curves->yAxis->setLabel(tr("loss"));
    m_curves->yAxis2->setLabel(tr("accuracy"));
    m_curves->rescaleAxes();
    m_curves->xAxis->scaleRange(1.03);   // keep the last epoch's marker off the frame
    m_curves->yAxis2->setRange(std::min(0.5, m_curves->yAxis2->range().lower), 1.0);
    applyPlotTheme(m_curves);
    m_curves->replot();
}

void ReportView::fillDetails()
{
    m_details->clear();
    for (const ReportTable& t : detailTables(m_report)) {
        auto* group = new QTreeWidgetItem(m_details, {t.title});
        QFont bold = group->font(0);
        bold.setBold(true);
        group->setFont(0, bold);
        for (const QStringList& row : t.rows) {
            QString value;
            if (row.size() == 2) {
                value = row[1];
            } else {   // epochs: "train loss 0.51 · val acc 84 % · ..."
                QStringList parts;
                for (int i = 1; i < row.size(); ++i)
                    parts << t.header[i] + QLatin1Char(' ') + row[i];
                value = parts.join(QStringLiteral(" · "));
            }
            auto* item = new QTreeWidgetItem(group, {row.value(0), value});
            item->setToolTip(1, value);   // a long row is elided in the column
        }
        group->setExpanded(t.title != tr("Environment"));
    }
}

void ReportView::exportReport(const QString& path)
{
    if (m_runId <= 0) {
        Q_EMIT reportExportFailed(tr("No run is shown."));
        return;
    }
    if (!isReportDocument(path)) {
        QString error;
        if (hearth::ui::exportReport(m_report, path, &error))
            Q_EMIT reportExported(path);
        else
            Q_EMIT reportExportFailed(error);
        return;
    }
    const qint64 runId = m_runId;
    m_exportLoader->load(
        [runId, path](const hearth::RunStore& store) {
            writeReportDocument(runReportHtml(store, runId), path);
            return path;
        },
        [this](const QString& written) { Q_EMIT reportExported(written); },
        [this](const QString& message) { Q_EMIT reportExportFailed(message); });
}

void ReportView::exportInteractively()
{
    if (m_runId <= 0)
        return;
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    const QString base = QStringLiteral("%1/run-%2-%3").arg(dir).arg(m_runId).arg(qstr(m_report.run.name));
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Report"), base + QStringLiteral(".html"),
        tr("HTML report, interactive (*.html);;PDF report (*.pdf);;Markdown tables (*.md);;JSON (*.json)"));
    if (path.isEmpty())
        return;
    showReportExportResult(this, &ReportView::reportExported, &ReportView::reportExportFailed);
    exportReport(path);
}

void ReportView::exportTensorBoard(const QString& dir)
{
    if (m_runId <= 0) {
        Q_EMIT tensorBoardExportFailed(tr("No run is shown."));
        return;
    }
    const qint64 runId = m_runId;
    const std::string out = dir.toStdString();
    m_exportLoader->load(
        [runId, out](const hearth::RunStore& store) { return hearth::report::exportTensorBoard(store, runId, out); },
        [this](const hearth::report::TensorBoardExport& written) {
            Q_EMIT tensorBoardExported(QString::fromStdString(written.run_dir));
        },
        [this](const QString& message) { Q_EMIT tensorBoardExportFailed(message); });
}

PredictDialog* ReportView::openPredictDialog()
{
    if (m_runId == 0 || !m_noCheckpoint.isEmpty()) return nullptr;
    const auto& run = m_report.run;
    auto* dialog = new PredictDialog(m_dbPath, m_runId, tr("run %1 — %2").arg(run.id).arg(qstr(run.name)),
                                     run.config_json, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
    return dialog;
}

void ReportView::predictWith(qint64 runId)
{
    if (m_runId == runId && !isLoading()) {
        if (!openPredictDialog()) QMessageBox::information(this, tr("Cannot Predict"), m_noCheckpoint);
        return;
    }
    // One dialog for this run once it has loaded; none when another run is asked for meanwhile
    // or the run cannot be read.
    auto* once = new QObject(this);
    connect(this, &ReportView::loaded, once, [this, once, runId](qint64 shown) {
        once->deleteLater();
        if (shown == runId && !openPredictDialog()) QMessageBox::information(this, tr("Cannot Predict"), m_noCheckpoint);
    });
    connect(this, &ReportView::loadFailed, once, [once] { once->deleteLater(); });
    showRun(runId);
}

void ReportView::exportTensorBoardInteractively()
{
    if (m_runId <= 0)
        return;
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export for TensorBoard: choose the log folder"),
        QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation));
    if (dir.isEmpty())
        return;
    auto* context = new QObject(this);   // one answer, then the connections go
    connect(this, &ReportView::tensorBoardExported, context, [this, dir, context](const QString& runDir) {
        context->deleteLater();
        QMessageBox::information(this, tr("Exported for TensorBoard"),
            tr("The run's event files are in\n%1\n\nView them with:\ntensorboard --logdir %2")
                .arg(QDir::toNativeSeparators(runDir), QDir::toNativeSeparators(dir)));
    });
    connect(this, &ReportView::tensorBoardExportFailed, context, [this, context](const QString& message) {
        context->deleteLater();
        QMessageBox::warning(this, tr("Cannot Export for TensorBoard"), message);
    });
    exportTensorBoard(dir);
}

void ReportView::savePlotsInteractively()
{
    if (m_runId <= 0)
        return;
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
    const QString path = QFileDialog::getSaveFileName(this, tr("Save Plots"),
        QStringLiteral("%1/run-%2-curves.png").arg(dir).arg(m_runId), tr("PNG image (*.png);;PDF document (*.pdf)"));
    if (path.isEmpty())
        return;
    // One name chosen, two files: "<name>.png" (curves) and "<name>-confusion.png".
    const QFileInfo info(path);
    const QString confusion = info.path() + QLatin1Char('/') + info.completeBaseName() + QStringLiteral("-confusion.")
                              + info.suffix();
    if (!savePlot(m_curves, path) || !m_matrix->saveImage(confusion))
        QMessageBox::warning(this, tr("Cannot Save Plots"), tr("Could not write %1.").arg(path));
}

}  // namespace hearth::ui
