#pragma once
// MemoryGauge: one device's memory as a bar — allocated (solid), reserved (light), peak (a
// tick) against the total — painted from the palette so it suits light and dark themes. Its text
// (title, summary, the driver's details) wraps at its " · " separators to the gauge's width, and
// the gauge grows a line rather than cut a figure off (heightForWidth).

#include <QWidget>

#include <cstdint>

namespace hearth::ui {

class MemoryGauge final : public QWidget {
    Q_OBJECT

public:
    explicit MemoryGauge(const QString& title, QWidget* parent = nullptr);

    void setTitle(const QString& title);
    // reserved <= 0 hides the reserved band (host RAM has none); utilization < 0 is unknown.
    void setUsage(int64_t allocated, int64_t reserved, int64_t peak, int64_t total, double utilization = -1.0);
    int64_t allocated() const { return m_allocated; }
    int64_t peak() const { return m_peak; }
    int64_t total() const { return m_total; }
    double utilization() const { return m_utilization; }
    // "1.2 GiB of 15.6 GiB · peak 1.4 GiB"; before the first setUsage, what the gauge will show.
    QString summary() const;
    // A further line under the summary: the driver's view (temperature, power, clock); "" hides it.
    void setDetails(const QString& details);
    QString details() const { return m_details; }

    // The text as painted at `width` (the current width when 0): each line fits it.
    QStringList lines(int width = 0) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    // Repaints, and asks the layout for another height when the text's line count changed.
    void refit();

    QString m_title;
    QString m_details;
    int64_t m_allocated = 0, m_reserved = 0, m_peak = 0, m_total = 0;
    double m_utilization = -1.0;
    bool m_measured = false;   // setUsage was called
    int m_lineCount = 0;   // at the current width
};

}  // namespace hearth::ui
