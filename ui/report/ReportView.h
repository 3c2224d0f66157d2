#pragma once
// ReportView: the report of one stored run — classification report, confusion matrix heatmap,
// training curves, misclassified samples, timings, effective config and environment — with
// predictions on new inputs (PredictDialog), export to a self-contained HTML report (interactive charts), PDF, Markdown or JSON, and the
// plots to PNG / PDF. The run is read, and an HTML or PDF report built and written, through the
// view's own StoreLoaders, off the GUI thread.

#include "ui/report/ReportExporter.h"

#include <QWidget>

#include <vector>

class QCustomPlot;
class QLabel;
class QPushButton;
class QSplitter;
class QTabWidget;
class QTableWidget;
class QTreeWidget;

namespace hearth::ui {

class ConfusionMatrixView;
class PredictDialog;
class ProfileBars;
class SampleBrowser;
class StoreLoader;

class ReportView final : public QWidget {
    Q_OBJECT

public:
    explicit ReportView(const QString& dbPath, QWidget* parent = nullptr);

    qint64 runId() const { return m_runId; }   // the run shown; 0 while none
    bool isLoading() const;
    QTableWidget* classificationTable() const { return m_table; }
    ConfusionMatrixView* confusionMatrix() const { return m_matrix; }
    SampleBrowser* sampleBrowser() const { return m_samples; }
    QCustomPlot* curves() const { return m_curves; }
    ProfileBars* profile() const { return m_profile; }
    const RunReport& report() const { return m_report; }

    // What one load reads: the report, the misclassified test samples and the step curve.
    struct Loaded {
        RunReport report;
        std::vector<hearth::Prediction> mistakes;
        std::vector<hearth::StepMetrics> steps;
        QString noCheckpoint;   // why the run cannot predict ("" when its best.pt is there)
    };

public Q_SLOTS:
    // Reads the run off the GUI thread ("Loading run N…" meanwhile) and shows it when it
    // arrives (loaded), or the store's message in the view when it cannot be read (loadFailed).
    // A run asked for later replaces one still loading.
    void showRun(qint64 runId);
    void reload();
    void exportInteractively();   // asks for the file (.html, .pdf, .md, .json); says where it went or why not
    // Writes the run shown to `path` by its suffix: .html / .pdf (the full report, built from the
    // store off the GUI thread), .md / .json (the tables). reportExported(path) or
    // reportExportFailed(message) follows.
    void exportReport(const QString& path);
    void savePlotsInteractively();
    // TensorBoard event files of the run shown, into `dir`/<id>-<name>/ (off the GUI thread):
    // tensorBoardExported with that folder, or tensorBoardExportFailed with the reason.
    void exportTensorBoard(const QString& dir);
    void exportTensorBoardInteractively();   // asks for the folder; says where it went or why not
    // Opens a PredictDialog for the run shown (new images, table rows or texts through its best
    // checkpoint, in a child hearth-cli); returns it (nullptr while no run is shown, or when it has
    // no checkpoint: the Predict button says why).
    PredictDialog* openPredictDialog();
    // Shows run `runId` (when it is not shown) and opens its PredictDialog once it is (or says why
    // it cannot).
    void predictWith(qint64 runId);

Q_SIGNALS:
    void loaded(qint64 runId);
    void loadFailed(qint64 runId, const QString& message);
    void tensorBoardExported(const QString& runDir);
    void tensorBoardExportFailed(const QString& message);
    void reportExported(const QString& path);
    void reportExportFailed(const QString& message);

private:
    void display(const Loaded& data);
    void fillClassification(const std::vector<hearth::Prediction>& mistakes);
    void fillCurves(const std::vector<hearth::StepMetrics>& steps);
    void fillDetails();
    void fillProfile();
    void clearAll(const QString& message);

    StoreLoader* m_loader;
    StoreLoader* m_exportLoader;   // its own, so that an export never drops a display load
    qint64 m_runId = 0;
    RunReport m_report;
    QLabel* m_title;
    QLabel* m_subtitle;
    QString m_dbPath;
    QString m_noCheckpoint;   // the run shown's Loaded::noCheckpoint
    QPushButton* m_predict;
    QPushButton* m_export;
    QPushButton* m_savePlots;
    QTabWidget* m_tabs;
    QSplitter* m_classificationSplit;
    QTableWidget* m_table;
    ConfusionMatrixView* m_matrix;
    QCustomPlot* m_curves;
    SampleBrowser* m_samples;
    ProfileBars* m_profile;
    QTreeWidget* m_details;
};

}  // namespace hearth::ui
