#pragma once
// StackedBars: one horizontal bar per row (a run), cut into coloured parts (the step-time or the
// memory breakdown), the total written at the end of each bar, the legend above. Rows keep the
// order given; the plot grows with the rows (put it in a scroll area for many).

#include <QStringList>
#include <QWidget>

#include <functional>
#include <vector>

class QCustomPlot;
class QLabel;

namespace hearth::ui {

class StackedBars final : public QWidget {
    Q_OBJECT

public:
    struct Row {
        QString label;
        std::vector<double> values;   // one per part; missing parts count as 0
    };

    explicit StackedBars(const QString& valueLabel, QWidget* parent = nullptr);

    // Part names (legend, colours by index) and how a value is written ("12.5 ms", "1.2 GiB").
    void setParts(const QStringList& parts, std::function<QString(double)> format);
    void setRows(std::vector<Row> rows);
    void setEmptyText(const QString& text);

    int rowCount() const { return static_cast<int>(m_rows.size()); }
    double value(int row, int part) const;
    double total(int row) const;
    // The parts the legend names: those with a value in some row (a run on the CPU has no
    // communication wait or CUDA graph pool); every part while there are no rows.
    QStringList legendParts() const;
    QCustomPlot* plot() const { return m_plot; }

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void rebuild();
    std::vector<bool> shownParts() const;

    QCustomPlot* m_plot;
    QLabel* m_legend;
    QString m_valueLabel;
    QString m_emptyText;
    QStringList m_parts;
    std::function<QString(double)> m_format;
    std::vector<Row> m_rows;
};

}  // namespace hearth::ui
