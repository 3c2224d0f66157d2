#pragma once
// SampleBrowser: the test samples a model got wrong — images for IDX data (read from the IDX
// file), the row text for CSV data, the text itself for text data (a text CSV's text column,
// WordNet's gloss) — with true and predicted label and the model's confidence.

#include "engine/events/Events.h"

#include <QWidget>

#include <memory>
#include <string>
#include <vector>

class QComboBox;
class QLabel;
class QListWidget;

namespace hearth::ui {

class IdxImageReader;

class SampleBrowser final : public QWidget {
    Q_OBJECT

public:
    explicit SampleBrowser(QWidget* parent = nullptr);
    ~SampleBrowser() override;

    // `configJson`: the run's config (where the data lives). `predictions`: misclassified ones.
    void setRun(const QString& configJson, const QStringList& classNames,
                std::vector<hearth::Prediction> predictions);
    void clear();
    // Shows only samples of this true class predicted as that class (-1: any).
    void setFilter(int trueClass, int predicted);
    int visibleCount() const;
    bool textsLoading() const;   // text data: the source texts are still being read
    QString statusText() const;

private:
    void rebuild();
    void showSample(int row);
    QImage sampleImage(const hearth::Prediction& p) const;
    QString sampleText(const hearth::Prediction& p) const;
    bool isText() const;
    void loadTexts();   // the test split's source texts, once per file, off the GUI thread
    QComboBox* m_trueFilter;
    QComboBox* m_predFilter;
    QListWidget* m_list;
    QLabel* m_preview;
    QLabel* m_caption;
    QLabel* m_status;
    QStringList m_classNames;
    std::vector<hearth::Prediction> m_predictions;
    std::vector<size_t> m_visible;     // indices into m_predictions, in list order
    QString m_dataKind, m_dataPath, m_testPath;
    std::unique_ptr<IdxImageReader> m_images;
    QString m_textColumn, m_textsPath, m_textsError;
    bool m_textsLoading = false;
    int m_textsGeneration = 0;
    std::vector<std::string> m_texts;  // text data: the source file's texts, by index
};

}  // namespace hearth::ui
