#pragma once
// ConfusionMatrixView: the confusion matrix as an annotated heatmap (rows: true class, columns:
// predicted class; shade: share of the row, text: count). Clicking a cell asks to show those
// samples.

#include <QWidget>

#include <cstdint>
#include <vector>

namespace hearth::ui {

class ConfusionMatrixView final : public QWidget {
    Q_OBJECT

public:
    explicit ConfusionMatrixView(QWidget* parent = nullptr);

    void setMatrix(const std::vector<std::vector<int64_t>>& confusion, const QStringList& classNames);
    int classCount() const { return static_cast<int>(m_matrix.size()); }
    int64_t count(int trueClass, int predicted) const;
    bool saveImage(const QString& path);   // PNG or PDF by suffix
    QRectF cellRect(int trueClass, int predicted) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    void cellActivated(int trueClass, int predicted);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    struct Geometry {
        QRectF grid;
        double cell = 0;
    };
    Geometry geometry() const;
    QPoint cellAt(const QPointF& pos) const;   // (-1, -1) outside
    void paintLabels(QPainter& p, const Geometry& g) const;

    std::vector<std::vector<int64_t>> m_matrix;
    std::vector<int64_t> m_rowTotals;
    QStringList m_names;
};

}  // namespace hearth::ui
