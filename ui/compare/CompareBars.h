#pragma once
// CompareBars: one number per run (training time, test accuracy, best validation accuracy,
// samples/s, peak memory) as horizontal bars sorted by value, largest on top, with the run names
// elided to fit and a scroll bar when they do not. Past kMaxBars runs bars stop being readable
// and a sortable table takes their place.

#include "ui/compare/CompareRun.h"
#include "ui/compare/RunColoring.h"

#include <QWidget>

#include <optional>
#include <vector>

class QComboBox;
class QCustomPlot;
class QScrollArea;
class QStackedWidget;
class QTableWidget;

namespace hearth::ui {

class CompareBars final : public QWidget {
    Q_OBJECT

public:
    enum class Quantity { TrainTime, TestAccuracy, BestValAccuracy, Throughput, PeakMemory };
    static constexpr int kMaxBars = 40;
    static constexpr int kLabelWidth = 170;   // pixels for a run's name before it is elided

    explicit CompareBars(QWidget* parent = nullptr);

    void setRuns(const std::vector<CompareRun>& runs, const RunColors& colors);
    void setColors(const RunColors& colors);
    void setQuantity(Quantity quantity);
    bool showsTable() const;
    QCustomPlot* plot() const { return m_plot; }
    QTableWidget* table() const { return m_table; }
    QScrollArea* scrollArea() const { return m_scroll; }
    // The runs (indices) in the order the bars show them, top to bottom; runs without a value last.
    const std::vector<int>& order() const { return m_order; }
    static std::optional<double> quantityOf(const hearth::RunSummary& summary, Quantity quantity);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void redraw();
    void drawBars();
    void fillTable();

    QComboBox* m_quantity;
    QStackedWidget* m_stack;
    QScrollArea* m_scroll;
    QCustomPlot* m_plot;
    QTableWidget* m_table;
    std::vector<hearth::RunSummary> m_summaries;
    std::vector<QColor> m_colors;
    std::vector<int> m_order;
};

}  // namespace hearth::ui
