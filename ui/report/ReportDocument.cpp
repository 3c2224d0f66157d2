#include "ui/report/ReportDocument.h"

#include "engine/config/ExperimentConfig.h"
#include "engine/data/WordNetGlosses.h"
#include "engine/data/formats/CsvReader.h"
#include "engine/text/TextCsv.h"
#include "storage/report/BrowserPrint.h"
#include "storage/report/ComparisonPage.h"
#include "storage/report/RunPage.h"
#include "ui/report/IdxImages.h"

#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QObject>
#include <QPushButton>
#include <QSaveFile>
#include <QUrl>

#include <optional>
#include <stdexcept>

namespace hearth::ui {

namespace {

// Indices of test samples count rows of the test file (IDX: t10k-*), of validation samples the
// file validation was split from.
QString sourceFile(const hearth::DataConfig& data, bool test)
{
    if (test && data.test_path)
        return QString::fromStdString(*data.test_path);
    if (!test && data.val_path)
        return QString::fromStdString(*data.val_path);
    return QString::fromStdString(data.path);
}

void addImages(hearth::report::RunPage& page, const hearth::DataConfig& data, bool test)
{
    const QString folder = QString::fromStdString(data.path);
    const QString file = IdxImages::imageFileFor(folder, test ? QStringLiteral("test") : QStringLiteral("train"));
    std::optional<IdxImages> reader;
    QString error = QObject::tr("%1 holds no IDX image file").arg(folder);
    try {
        if (!file.isEmpty())
            reader.emplace(file);
    } catch (const std::exception& e) {
        error = QString::fromStdString(e.what());
    }
    if (!reader) {
        page.samples_note = QObject::tr("The samples' images are not shown: %1.").arg(error).toStdString();
        return;
    }
    int outside = 0;
    for (auto& sample : page.samples) {
        const QImage image = reader->image(sample.prediction.index);
        if (image.isNull()) {
            ++outside;
            continue;
        }
        hearth::report::GrayImage gray{image.width(), image.height(), {}};
        gray.pixels.reserve(size_t(image.width()) * size_t(image.height()));
        for (int y = 0; y < image.height(); ++y)
            gray.pixels.insert(gray.pixels.end(), image.constScanLine(y), image.constScanLine(y) + image.width());
        sample.image = std::move(gray);
    }
    if (outside > 0)
        page.samples_note = QObject::tr("%1 sample(s) lie beyond the %2 images of %3: it is not the file the run used.")
                                .arg(outside).arg(reader->count()).arg(file).toStdString();
}

void addTexts(hearth::report::RunPage& page, const std::vector<std::string>& texts, const QString& path)
{
    int outside = 0;
    for (auto& sample : page.samples) {
        const int64_t i = sample.prediction.index;
        if (i >= 0 && i < static_cast<int64_t>(texts.size()))
            sample.text = texts[static_cast<size_t>(i)];
        else
            ++outside;
    }
    if (outside > 0)
        page.samples_note = QObject::tr("%1 sample(s) lie beyond the %2 rows of %3: it is not the file the run used.")
                                .arg(outside).arg(texts.size()).arg(path).toStdString();
}

std::vector<std::string> csvRows(const std::string& path)
{
    const hearth::CsvTable table = hearth::readCsvFile(path);
    std::string header;
    for (const auto& h : table.header)
        header += (header.empty() ? "" : ", ") + h;
    std::vector<std::string> rows;
    for (const auto& record : table.records) {
        std::string row;
        for (const auto& f : record.fields)
            row += (row.empty() ? "" : ", ") + f;
        rows.push_back(header);
        rows.back() += '\n';
        rows.back() += row;
    }
    return rows;
}

}  // namespace

bool isReportDocument(const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    return suffix == QLatin1String("html") || suffix == QLatin1String("htm") || suffix == QLatin1String("pdf");
}

void addSampleContent(hearth::report::RunPage& page)
{
    if (page.samples.empty())
        return;
    hearth::DataConfig data;
    try {
        data = hearth::configFromJson(page.run.summary.config_json).data;
    } catch (const std::exception& e) {
        page.samples_note = QObject::tr("The samples' images or texts are not shown: this Hearth cannot read the run's "
                                        "config (%1).").arg(QString::fromStdString(e.what())).toStdString();
        return;
    }
    const bool test = page.samples_split == "test";
    QString path = sourceFile(data, test);
    try {
        if (data.kind == "idx") {
            addImages(page, data, test);
        } else if (data.kind == "text_csv") {
            addTexts(page, hearth::readTextCsv(path.toStdString(), data.text_column, "").texts, path);
        } else if (data.kind == "wordnet") {
            if (QFileInfo(path).isDir())
                path = QDir(path).filePath(QStringLiteral("data.noun"));
            addTexts(page, hearth::readWordNetGlosses(path.toStdString()).texts, path);
        } else if (data.kind == "csv") {
            addTexts(page, csvRows(path.toStdString()), path);
        } else if (data.kind == "image_folder") {
            hearth::report::addImageFolderFiles(page, data.path, test);
        }
    } catch (const std::exception& e) {
        page.samples_note = QObject::tr("The samples' texts are not shown: the run's data cannot be read here (%1).")
                                .arg(QString::fromStdString(e.what())).toStdString();
    }
}

std::string runReportHtml(const hearth::RunStore& store, qint64 runId)
{
    hearth::report::RunPage page = hearth::report::loadRunPage(store, runId);
    addSampleContent(page);
    return hearth::report::runPageHtml(page);
}

std::string comparisonReportHtml(const hearth::RunStore& store, const QList<qint64>& runIds, qint64 baselineId)
{
    const std::vector<int64_t> ids(runIds.begin(), runIds.end());
    std::optional<int64_t> baseline;
    if (baselineId > 0)
        baseline = baselineId;
    return hearth::report::comparisonPageHtml(hearth::report::loadComparisonPage(store, ids, baseline));
}

void writeReportDocument(const std::string& html, const QString& path)
{
    if (QFileInfo(path).suffix().toLower() == QLatin1String("pdf")) {
        hearth::report::writePdf(html, path.toStdString());   // ExportError is a std::runtime_error
        return;
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(html.data(), qint64(html.size())) < 0 || !file.commit())
        throw std::runtime_error(QObject::tr("Cannot write %1: %2").arg(path, file.errorString()).toStdString());
}

void announceReportExported(QWidget* parent, const QString& path)
{
    QMessageBox box(QMessageBox::Information, QObject::tr("Report Exported"),
                    QObject::tr("The report is in\n%1").arg(QDir::toNativeSeparators(path)), QMessageBox::Close, parent);
    QPushButton* open = box.addButton(QObject::tr("Open"), QMessageBox::AcceptRole);
    box.exec();
    if (box.clickedButton() == open)
        QDesktopServices::openUrl(QUrl::fromLocalFile(path));
}

void announceReportExportFailed(QWidget* parent, const QString& message)
{
    QMessageBox::warning(parent, QObject::tr("Cannot Export Report"), message);
}

}  // namespace hearth::ui
