#pragma once
// SampleBrowser: the test samples a model got wrong — images for IDX data (read from the IDX
// file), the row text for CSV data, the text itself for text data (a text CSV's text column,
// WordNet's gloss) — with true and predicted label and the model's confidence.

#include "engine/events/Events.h"

#include <QImage>
#include <QWidget>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

class QComboBox;
class QLabel;
class QListWidget;

namespace hearth::ui {

class IdxImages;

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
    bool imagesLoading() const { return m_imagesLoading; }   // IDX data, image folders: the test images are being read
    QString statusText() const;
    // The image shown for test sample `index` (null while the images load, or when they cannot be read).
    QImage sampleImage(int64_t index) const;

    // Reads an IDX image file; throws hearth::DataError. Called on a pool thread, never on the GUI
    // thread. The default reads with the engine's reader (IdxImages); tests pass their own.
    using ImageReader = std::function<std::shared_ptr<const IdxImages>(const QString& path)>;
    void setImageReader(ImageReader reader);

private:
    void rebuild();
    void showSample(int row);
    void applyViewMode();   // icons once the images are there, a list otherwise
    QString sampleText(const hearth::Prediction& p) const;
    bool isText() const;
    void loadTexts();    // the test split's source texts, once per file, off the GUI thread
    void loadImages();   // the test split's IDX images, once per file, off the GUI thread
    void loadImageFiles();   // an image folder's listing of the test split's files, off the GUI thread
    bool isImages() const;   // idx or image_folder
    QImage thumbnail(int64_t index) const;   // the list's icon of sample `index`
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
    ImageReader m_readImages;
    std::shared_ptr<const IdxImages> m_images;   // read on a pool thread, then only read here
    QStringList m_imageFiles;                    // image folders: the split's files by index
    std::map<int64_t, QImage> m_thumbnails;      // image folders: the mistakes' icons, decoded on the pool
    QString m_imagesPath, m_imagesError;
    bool m_imagesLoading = false;
    int m_imagesGeneration = 0;
    QString m_textColumn, m_textsPath, m_textsError;
    bool m_textsLoading = false;
    int m_textsGeneration = 0;
    std::vector<std::string> m_texts;  // text data: the source file's texts, by index
};

}  // namespace hearth::ui
