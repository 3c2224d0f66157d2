#pragma once
// ReportView: the report of one stored run — classification report, confusion matrix heatmap,
// training curves, misclassified samples, timings, effective config and environment — with
// export to HTML / Markdown / JSON and the plots to PNG / PDF.

#include "ui/report/ReportExporter.h"

#include <QWidget>

#include <memory>

class QCustomPlot;
class QLabel;
class QPushButton;
class QSplitter;
class QTabWidget;
class QTableWidget;
class QTreeWidget;

namespace hearth {
class RunStore;
}

namespace hearth::ui {

class ConfusionMatrixView;
class SampleBrowser;

class ReportView final : public QWidget {
    Q_OBJECT

public:
    explicit ReportView(std::shared_ptr<hearth::RunStore> store, QWidget* parent = nullptr);

    qint64 runId() const { return m_runId; }
    QTableWidget* classificationTable() const { return m_table; }
    ConfusionMatrixView* confusionMatrix() const { return m_matrix; }
    SampleBrowser* sampleBrowser() const { return m_samples; }
    QCustomPlot* curves() const { return m_curves; }
    const RunReport& report() const { return m_report; }

public Q_SLOTS:
    // Loads the run from the store; false (and an explanation in the view) when it cannot.
    bool showRun(qint64 runId);
    void reload();
    void exportInteractively();
    void savePlotsInteractively();

private:
    void fillClassification();
    void fillCurves();
    void fillDetails();
    void clearAll(const QString& message);

    std::shared_ptr<hearth::RunStore> m_store;
    qint64 m_runId = 0;
    RunReport m_report;
    QLabel* m_title;
    QLabel* m_subtitle;
    QPushButton* m_export;
    QPushButton* m_savePlots;
    QTabWidget* m_tabs;
    QSplitter* m_classificationSplit;
    QTableWidget* m_table;
    ConfusionMatrixView* m_matrix;
    QCustomPlot* m_curves;
    SampleBrowser* m_samples;
    QTreeWidget* m_details;
};

}  // namespace hearth::ui
