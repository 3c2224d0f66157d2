#pragma once
// The workbench's HTML and PDF reports: the same self-contained pages `hearth-cli export` writes
// (storage/report), for the run the Report view shows and the runs Compare shows. The samples a
// model got wrong are read as the Report view reads them (IDX images, text-CSV, WordNet or CSV
// rows). Building and writing happen on a view's loader thread, never on the GUI thread.

#include "storage/RunStore.h"

#include <QList>
#include <QObject>
#include <QString>

#include <string>

class QWidget;

namespace hearth::report {
struct RunPage;
}

namespace hearth::ui {

// .html / .htm (the page) or .pdf (the page printed by a headless Chromium).
bool isReportDocument(const QString& path);

// Fills the page's samples with their images or texts; says in samples_note what cannot be read.
void addSampleContent(hearth::report::RunPage& page);

// The HTML report of a run, or of the comparison of `runIds` against `baselineId` (0: the first).
// Throw hearth::StoreError for an unknown run.
std::string runReportHtml(const hearth::RunStore& store, qint64 runId);
std::string comparisonReportHtml(const hearth::RunStore& store, const QList<qint64>& runIds, qint64 baselineId);

// Writes the page to `path`, or prints it there for .pdf. Throws std::runtime_error with a
// sentence naming the file and why (no browser for PDF: what to install).
void writeReportDocument(const std::string& html, const QString& path);

// Tells the user where an export went (with a button that opens it) or why it failed.
void announceReportExported(QWidget* parent, const QString& path);
void announceReportExportFailed(QWidget* parent, const QString& message);

// For the next export of `view`: announces its result, once.
template <class View>
void showReportExportResult(View* view, void (View::*exported)(const QString&), void (View::*failed)(const QString&))
{
    auto* once = new QObject(view);
    QObject::connect(view, exported, once, [view, once](const QString& path) {
        once->deleteLater();
        announceReportExported(view, path);
    });
    QObject::connect(view, failed, once, [view, once](const QString& message) {
        once->deleteLater();
        announceReportExportFailed(view, message);
    });
}

}  // namespace hearth::ui
