#include "ui/report/SampleBrowser.h"

#include "ui/report/IdxImages.h"
#include "ui/session/ReadOnPool.h"
#include "ui/widgets/Format.h"

#include "engine/config/ExperimentConfig.h"
#include "engine/data/WordNetGlosses.h"
#include "engine/data/images/ImageFolderScan.h"
#include "engine/text/TextCsv.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QPointer>
#include <QSplitter>
#include <QTextStream>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace hearth::ui {

namespace {

constexpr int kMaxShown = 600;   // the most confident mistakes first; more is noise in a list
constexpr int kThumb = 56;
}  // namespace

SampleBrowser::SampleBrowser(QWidget* parent)
    : QWidget(parent), m_trueFilter(new QComboBox), m_predFilter(new QComboBox), m_list(new QListWidget),
      m_preview(new QLabel), m_caption(new QLabel), m_status(new QLabel),
      m_readImages([](const QString& path) { return std::make_shared<const IdxImages>(path); })
{
    m_list->setObjectName(QStringLiteral("sampleList"));
    m_list->setUniformItemSizes(true);
    m_list->setSelectionMode(QAbstractItemView::SingleSelection);
    m_preview->setMinimumSize(224, 224);
    m_preview->setAlignment(Qt::AlignCenter);
    m_preview->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_preview->setWordWrap(true);
    m_caption->setWordWrap(true);
    m_caption->setAlignment(Qt::AlignHCenter | Qt::AlignTop);
    m_caption->setObjectName(QStringLiteral("sampleCaption"));
    m_status->setObjectName(QStringLiteral("sampleStatus"));

    auto* filters = new QHBoxLayout;
    filters->addWidget(new QLabel(tr("True")));
    filters->addWidget(m_trueFilter);
    filters->addWidget(new QLabel(tr("Predicted")));
    filters->addWidget(m_predFilter);
    filters->addStretch(1);
    filters->addWidget(m_status);
    auto* detail = new QWidget;
    auto* detailLayout = new QVBoxLayout(detail);
    detailLayout->addWidget(m_preview, 0, Qt::AlignHCenter);
    detailLayout->addWidget(m_caption);
    detailLayout->addStretch(1);
    auto* split = new QSplitter;
    split->addWidget(m_list);
    split->addWidget(detail);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(filters);
    layout->addWidget(split, 1);

    const auto refilter = [this] { rebuild(); };
    connect(m_trueFilter, &QComboBox::currentIndexChanged, this, refilter);
    connect(m_predFilter, &QComboBox::currentIndexChanged, this, refilter);
    connect(m_list, &QListWidget::currentRowChanged, this, &SampleBrowser::showSample);
}

SampleBrowser::~SampleBrowser() = default;

void SampleBrowser::clear()
{
    setRun(QString(), {}, {});
}

void SampleBrowser::setRun(const QString& configJson, const QStringList& classNames,
                           std::vector<hearth::Prediction> predictions)
{
    const QJsonObject data = QJsonDocument::fromJson(configJson.toUtf8()).object().value("data").toObject();
    m_dataKind = data.value("kind").toString();
    m_dataPath = data.value("path").toString();
    m_testPath = data.value("test_path").toString();
    m_textColumn = data.value("text_column").toString(QStringLiteral("text"));
    m_classNames = classNames;
    if (isText())
        loadTexts();
    m_predictions = std::move(predictions);
    std::stable_sort(m_predictions.begin(), m_predictions.end(),
                     [](const auto& a, const auto& b) { return a.confidence > b.confidence; });
    if (m_dataKind == QLatin1String("idx"))
        loadImages();
    else if (m_dataKind == QLatin1String("image_folder"))
        loadImageFiles();
    for (QComboBox* combo : {m_trueFilter, m_predFilter}) {
        const QSignalBlocker block(combo);
        combo->clear();
        combo->addItem(tr("any"), -1);
        for (int i = 0; i < m_classNames.size(); ++i)
            combo->addItem(m_classNames[i], i);
    }
    rebuild();
}

void SampleBrowser::setFilter(int trueClass, int predicted)
{
    {
        const QSignalBlocker a(m_trueFilter), b(m_predFilter);
        m_trueFilter->setCurrentIndex(std::max(0, m_trueFilter->findData(trueClass)));
        m_predFilter->setCurrentIndex(std::max(0, m_predFilter->findData(predicted)));
    }
    rebuild();
}

void SampleBrowser::applyViewMode()
{
    const bool icons = (m_dataKind == QLatin1String("idx") && m_images) ||
                       (m_dataKind == QLatin1String("image_folder") && !m_imageFiles.isEmpty());
    m_list->setViewMode(icons ? QListView::IconMode : QListView::ListMode);
    m_list->setIconSize(icons ? QSize(kThumb, kThumb) : QSize());
    m_list->setResizeMode(QListView::Adjust);
    m_list->setGridSize(icons ? QSize(kThumb + 84, kThumb + 3 * fontMetrics().height() + 8) : QSize());
    m_list->setWordWrap(!isText());   // a text sample is one elided line; its whole text shows on the right
}

void SampleBrowser::rebuild()
{
    applyViewMode();
    const int wantTrue = m_trueFilter->currentData().isValid() ? m_trueFilter->currentData().toInt() : -1;
    const int wantPred = m_predFilter->currentData().isValid() ? m_predFilter->currentData().toInt() : -1;
    m_visible.clear();
    for (size_t i = 0; i < m_predictions.size(); ++i) {
        const auto& p = m_predictions[i];
        if ((wantTrue < 0 || p.true_label == wantTrue) && (wantPred < 0 || p.predicted == wantPred))
            m_visible.push_back(i);
    }
    const size_t total = m_visible.size();
    if (m_visible.size() > static_cast<size_t>(kMaxShown))
        m_visible.resize(kMaxShown);
    const QSignalBlocker block(m_list);
    m_list->clear();
    const auto name = [this](int64_t c) { return c >= 0 && c < m_classNames.size() ? m_classNames[int(c)] : QString::number(c); };
    const auto mistake = [&name](const hearth::Prediction& p) {
        return tr("%1 → %2").arg(name(p.true_label), name(p.predicted));
    };
    if (m_list->viewMode() == QListView::IconMode) {
        // Each cell as wide as the widest caption shown ("T-shirt/top → Ankle boot"), within
        // limits: a longer one wraps onto the cell's third line.
        int widest = 0;
        for (size_t i : m_visible)
            widest = std::max(widest, m_list->fontMetrics().horizontalAdvance(mistake(m_predictions[i])));
        m_list->setGridSize(QSize(std::clamp(widest + 16, kThumb + 84, kThumb + 224), m_list->gridSize().height()));
    }
    for (size_t i : m_visible) {
        const auto& p = m_predictions[i];
        auto* item = new QListWidgetItem(mistake(p) + QLatin1Char('\n') + formatPercent(p.confidence, 0));
        if (m_list->viewMode() == QListView::IconMode) {
            item->setIcon(QIcon(QPixmap::fromImage(thumbnail(p.index))));
            // The caption wraps at the item's width, which is the thumbnail's unless given: the grid cell's.
            item->setSizeHint(m_list->gridSize() - QSize(4, 4));
        }
        else if (isText())
            item->setText(tr("#%1  %2 → %3 (%4)   %5")
                              .arg(p.index)
                              .arg(name(p.true_label), name(p.predicted), formatPercent(p.confidence, 0),
                                   fontMetrics().elidedText(sampleText(p).simplified(), Qt::ElideRight, 600)));
        else
            item->setText(tr("#%1  %2 → %3 (%4)").arg(p.index).arg(name(p.true_label), name(p.predicted),
                                                                   formatPercent(p.confidence, 0)));
        item->setTextAlignment(isText() ? Qt::AlignLeft | Qt::AlignVCenter : Qt::AlignHCenter | Qt::AlignTop);
        m_list->addItem(item);
    }
    QString status = total == 0 ? tr("No misclassified samples.")
                     : total > m_visible.size() ? tr("%1 misclassified (showing the %2 most confident)")
                                                      .arg(total).arg(m_visible.size())
                                                : tr("%1 misclassified").arg(total);
    if (isImages() && !m_predictions.empty()) {
        if (m_imagesLoading)
            status += tr(" · reading the test images…");
        else if (!m_imagesError.isEmpty())
            status += tr(" · the test images cannot be shown: %1").arg(m_imagesError);
    }
    m_status->setText(status);
    m_preview->clear();
    m_caption->clear();
    if (!m_visible.empty())
        m_list->setCurrentRow(0);
    showSample(m_list->currentRow());
}

void SampleBrowser::showSample(int row)
{
    if (row < 0 || row >= static_cast<int>(m_visible.size())) {
        m_preview->setText(m_predictions.empty() ? tr("Misclassified test samples appear here after a run.")
                                                 : QString());
        m_caption->clear();
        return;
    }
    const auto& p = m_predictions[m_visible[static_cast<size_t>(row)]];
    const QImage img = sampleImage(p.index);
    // Images are centred; texts read from the top left and use the panel's width.
    m_preview->setAlignment(img.isNull() ? Qt::AlignLeft | Qt::AlignTop : Qt::AlignCenter);
    if (QLayout* layout = m_preview->parentWidget()->layout())
        layout->setAlignment(m_preview, img.isNull() ? Qt::Alignment() : Qt::AlignHCenter);
    if (!img.isNull())
        m_preview->setPixmap(QPixmap::fromImage(img.scaled(224, 224, Qt::KeepAspectRatio, Qt::FastTransformation)));
    else if (isImages())
        m_preview->setText(m_imagesLoading ? tr("(reading the test images of %1…)").arg(m_dataPath)
                           : m_images || !m_imageFiles.isEmpty()
                               ? tr("(image %1 is not in %2)").arg(p.index).arg(m_imagesPath)
                               : tr("(the test images cannot be shown: %1)").arg(m_imagesError));
    else
        m_preview->setText(sampleText(p));
    const auto name = [this](int64_t c) { return c >= 0 && c < m_classNames.size() ? m_classNames[int(c)] : QString::number(c); };
    QString caption = tr("Test sample #%1\nTrue: %2\nPredicted: %3 (confidence %4)")
                          .arg(p.index)
                          .arg(name(p.true_label), name(p.predicted), formatPercent(p.confidence, 1));
    if (p.index >= 0 && p.index < m_imageFiles.size())
        caption += QLatin1Char('\n') + QDir(m_dataPath).relativeFilePath(m_imageFiles[int(p.index)]);
    m_caption->setText(caption);
}

QImage SampleBrowser::sampleImage(int64_t index) const
{
    if (m_dataKind == QLatin1String("image_folder"))
        return index >= 0 && index < m_imageFiles.size() ? QImage(m_imageFiles[int(index)]) : QImage();
    return m_images && m_dataKind == QLatin1String("idx") ? m_images->image(index) : QImage();
}

QImage SampleBrowser::thumbnail(int64_t index) const
{
    if (m_dataKind == QLatin1String("image_folder")) {
        const auto it = m_thumbnails.find(index);
        return it == m_thumbnails.end() ? QImage() : it->second;
    }
    return sampleImage(index).scaled(kThumb, kThumb);
}

bool SampleBrowser::isImages() const
{
    return hearth::isImageKind(m_dataKind.toStdString());
}

// On a pool thread: the folder listed as training listed it (ImageFolderScan), and the
// thumbnails of this run's mistakes decoded from their files (a list of hundreds of JPEGs would
// otherwise be decoded on the GUI thread). The one image shown large is read when shown.
void SampleBrowser::loadImageFiles()
{
    m_imagesPath = m_dataPath;
    m_imageFiles.clear();
    m_thumbnails.clear();
    m_images.reset();
    m_imagesError.clear();
    m_imagesLoading = true;
    const int generation = ++m_imagesGeneration;
    const std::string root = m_dataPath.toStdString();
    std::vector<int64_t> wanted;
    for (const auto& p : m_predictions)
        wanted.push_back(p.index);
    struct Listing {
        QStringList files;
        std::map<int64_t, QImage> thumbnails;
    };
    readOnPool<Listing>(
        this,
        [root, wanted] {
            Listing out;
            const hearth::ImageFolderLayout layout = hearth::scanImageFolder(root);
            for (const auto& f : hearth::sourceFilesOf(layout, /*test=*/true))
                out.files << QString::fromStdString(f.path);
            for (const int64_t i : wanted)
                if (i >= 0 && i < out.files.size() && !out.thumbnails.count(i))
                    out.thumbnails[i] = QImage(out.files[int(i)]).scaled(kThumb, kThumb, Qt::KeepAspectRatio,
                                                                          Qt::SmoothTransformation);
            return out;
        },
        [this, generation](const Listing& listing, const QString& error) {
            if (generation != m_imagesGeneration)
                return;
            m_imageFiles = listing.files;
            m_thumbnails = listing.thumbnails;
            m_imagesError = error;
            m_imagesLoading = false;
            rebuild();
        });
}

void SampleBrowser::setImageReader(ImageReader reader)
{
    m_readImages = std::move(reader);
}

// A test file inflates to megabytes: it is read on a pool thread and handed back whole; a newer
// load (another run's report) makes an older result stale. A file that cannot be read leaves the
// list without images and says why.
void SampleBrowser::loadImages()
{
    const QString file = IdxImages::imageFileFor(m_dataPath, QStringLiteral("test"));
    if (file == m_imagesPath && (m_images || m_imagesLoading))
        return;   // a file that could not be read is tried again
    m_imagesPath = file;
    m_images.reset();
    m_imagesError.clear();
    const int generation = ++m_imagesGeneration;
    if (file.isEmpty()) {
        m_imagesLoading = false;
        m_imagesError = tr("%1 holds no t10k-images-idx3-ubyte file").arg(m_dataPath);
        return;
    }
    m_imagesLoading = true;
    readOnPool<std::shared_ptr<const IdxImages>>(
        this, [file, read = m_readImages] { return read(file); },
        [this, generation](const std::shared_ptr<const IdxImages>& images, const QString& error) {
            if (generation != m_imagesGeneration)
                return;
            m_images = images;
            m_imagesError = error;
            m_imagesLoading = false;
            rebuild();
        });
}

bool SampleBrowser::isText() const
{
    return hearth::isTextKind(m_dataKind.toStdString());
}

// The texts are read on a pool thread (an IMDB CSV is over 100 MB) and handed back to the GUI
// thread; a newer load (another run's report) makes an older result stale.
void SampleBrowser::loadTexts()
{
    QString path = m_testPath.isEmpty() ? m_dataPath : m_testPath;
    if (m_dataKind == QLatin1String("wordnet") && QFileInfo(path).isDir())
        path = QDir(path).filePath(QStringLiteral("data.noun"));
    if (path == m_textsPath)
        return;
    m_textsPath = path;
    m_texts.clear();
    m_textsError.clear();
    m_textsLoading = true;
    const int generation = ++m_textsGeneration;
    const bool wordnet = m_dataKind == QLatin1String("wordnet");
    const std::string file = path.toStdString(), column = m_textColumn.toStdString();
    using Texts = std::shared_ptr<std::vector<std::string>>;   // moved out on the GUI thread, not copied
    readOnPool<Texts>(
        this,
        [wordnet, file, column]() -> Texts {
            return std::make_shared<std::vector<std::string>>(
                wordnet ? hearth::readWordNetGlosses(file).texts
                        : hearth::readTextCsv(file, column, /*label_column=*/"").texts);
        },
        [this, generation](const Texts& texts, const QString& error) {
            if (generation != m_textsGeneration)
                return;
            m_texts = texts ? std::move(*texts) : std::vector<std::string>{};
            m_textsError = error;
            m_textsLoading = false;
            rebuild();
        });
}

bool SampleBrowser::textsLoading() const
{
    return m_textsLoading;
}

QString SampleBrowser::sampleText(const hearth::Prediction& p) const
{
    if (isText()) {
        if (p.index >= 0 && p.index < static_cast<int64_t>(m_texts.size()))
            return QString::fromStdString(m_texts[static_cast<size_t>(p.index)]);
        if (m_textsLoading)
            return tr("(reading the texts of %1…)").arg(m_textsPath);
        return m_textsError.isEmpty() ? tr("(text %1 not found in %2)").arg(p.index).arg(m_textsPath)
                                      : tr("(the texts cannot be read: %1)").arg(m_textsError);
    }
    // CSV: the index counts data rows of the split's source file (header excluded).
    const QString path = m_testPath.isEmpty() ? m_dataPath : m_testPath;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
        return tr("(%1 is not readable)").arg(path);
    QTextStream in(&file);
    const QString header = in.readLine();
    for (int64_t i = 0; i < p.index && !in.atEnd(); ++i)
        in.readLine();
    const QString row = in.readLine();
    return row.isEmpty() ? tr("(row %1 not found in %2)").arg(p.index).arg(path) : header + QLatin1Char('\n') + row;
}

int SampleBrowser::visibleCount() const
{
    return static_cast<int>(m_visible.size());
}

QString SampleBrowser::statusText() const
{
    return m_status->text();
}

}  // namespace hearth::ui
