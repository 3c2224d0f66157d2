#pragma once
// The report of one run as data (loaded from the RunStore) and as documents: Markdown and JSON,
// built from the same tables the report view shows. The HTML and PDF reports are the pages of
// storage/report (ReportDocument.h), with charts and samples.

#include "storage/RunStore.h"

#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>
#include <vector>

namespace hearth::ui {

struct RunReport {
    hearth::RunSummary run;
    std::optional<hearth::EvalReport> test;
    std::optional<hearth::EvalReport> val;
    std::vector<hearth::EpochMetrics> epochs;
    std::optional<hearth::MemoryBreakdown> memory;   // rank 0's in a data-parallel run
    std::vector<hearth::RankSummary> ranks;            // data-parallel runs: one per process
    // The split whose report the view shows: test when there is one, else validation.
    const hearth::EvalReport* primary() const { return test ? &*test : val ? &*val : nullptr; }
};

// Throws hearth::StoreError for an unknown run.
RunReport loadRunReport(const hearth::RunStore& store, int64_t runId);

struct ReportTable {
    QString title;
    QStringList header;
    QVector<QStringList> rows;
};

// Classification report rows: one per class, then accuracy, macro avg, weighted avg.
ReportTable classificationTable(const hearth::EvalReport& report);
ReportTable summaryTable(const RunReport& report);
ReportTable epochTable(const RunReport& report);
// A data-parallel run's processes: where each ran, its speed and its memory, its share of the
// gradients and optimizer state among them (no rows on one device).
ReportTable processesTable(const RunReport& report);
ReportTable effectiveConfigTable(const RunReport& report);
ReportTable environmentTable(const RunReport& report);
// The run's details as the Report view lists them: summary, epochs, processes (data-parallel
// runs), effective configuration, environment. The exports add the classification after the summary.
QVector<ReportTable> detailTables(const RunReport& report);

QString reportToMarkdown(const RunReport& report);
QString reportToJson(const RunReport& report);
// Format by suffix: .md, .json. False with `error` set when not written (also for .html and
// .pdf, which ReportView::exportReport writes from the store).
bool exportReport(const RunReport& report, const QString& path, QString* error = nullptr);

}  // namespace hearth::ui
