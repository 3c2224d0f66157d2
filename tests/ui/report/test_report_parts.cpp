// The report's building blocks: IDX images for the sample browser (the engine's reader, on a
// pool thread), config diffs, the
// classification table / exports, and the confusion matrix view.
#include "UiTestSupport.h"

#include "RawDb.h"
#include "StoreTestEvents.h"
#include "engine/config/ExperimentConfig.h"
#include "engine/data/DataError.h"
#include "engine/data/formats/IdxFile.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "ui/experiment/ConfigDiff.h"
#include "ui/report/ConfusionMatrixView.h"
#include "ui/report/IdxImages.h"
#include "ui/report/ReportExporter.h"
#include "ui/report/ReportView.h"
#include "ui/report/SampleBrowser.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QSemaphore>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTest>
#include <QThread>

#include <qcustomplot.h>

#include <atomic>

using namespace hearth::ui;

namespace {

const QString kFashion = QStringLiteral("/usr/share/datasets/fashion-mnist");
const std::vector<std::string> kClasses = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                           "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};

hearth::EvalReport sampleReport()
{
    // y_true / y_pred chosen so that every class has support and some confusion.
    std::vector<int64_t> y_true, y_pred;
    for (int c = 0; c < 10; ++c) {
        for (int k = 0; k < 10; ++k) {
            y_true.push_back(c);
            y_pred.push_back(k < 8 ? c : (c + 1) % 10);
        }
    }
    hearth::EvalReport r;
    r.split = "test";
    r.loss = 0.5;
    r.report = hearth::ClassificationReport::compute(y_true, y_pred, kClasses);
    return r;
}

// A raw IDX image file of `count` images of rows x columns, pixel i of image n = (n * 37 + i) % 256;
// `keep` bytes of it when given (a damaged file).
void writeIdxImages(const QString& path, int count, int rows, int columns, qint64 keep = -1)
{
    QByteArray bytes;
    for (quint32 v : {quint32(0x00000803), quint32(count), quint32(rows), quint32(columns)})
        for (int shift : {24, 16, 8, 0})
            bytes.append(char((v >> shift) & 0xff));
    for (int n = 0; n < count; ++n)
        for (int i = 0; i < rows * columns; ++i)
            bytes.append(char((n * 37 + i) % 256));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(keep < 0 ? bytes : bytes.left(keep)) < 0)
        qFatal("cannot write %s", qPrintable(path));
}

QString idxConfigJson(const QString& folder)
{
    hearth::ExperimentConfig c;
    c.data.kind = "idx";
    c.data.path = folder.toStdString();
    return QString::fromStdString(hearth::configToJson(c));
}

}  // namespace

class TestReportParts : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase() { hearth::test::isolateSettings(m_dir); }

    // A run whose steps cannot be read (the table is gone): the view shows the store's message
    // when the load fails; nothing escapes into Qt's event loop.
    void reportViewShowsAStoreErrorInsteadOfThrowing() {
        const std::string path = m_dir.filePath("broken.sqlite").toStdString();
        int64_t id = 0;
        {
            auto writer = std::make_shared<hearth::RunWriter>(path);
            id = writer->createRun("broken", "{}");
            hearth::RunRecorder recorder(writer, id);
            recorder.onEvent(hearth::testing::startedEvent("broken"));
            for (int64_t i = 1; i <= 5; ++i) recorder.onEvent(hearth::testing::stepEvent(i));
            writer->flush();
        }
        hearth::testing::RawDb(path).exec("DROP TABLE step_metrics");
        ReportView view(QString::fromStdString(path));
        QSignalSpy failed(&view, &ReportView::loadFailed);
        try {
            view.showRun(id);
            QTRY_COMPARE(failed.count(), 1);
        } catch (const std::exception& e) {
            QFAIL(qPrintable(QString("showRun let a store error escape: ") + e.what()));
        }
        QCOMPARE(view.runId(), qint64(0));
        QVERIFY(failed.at(0).at(1).toString().contains("step_metrics"));
        const auto labels = view.findChildren<QLabel*>();
        QVERIFY(std::any_of(labels.begin(), labels.end(),
                            [](const QLabel* l) { return l->text().contains("step_metrics"); }));
    }

    // showRun returns before the store is read ("Loading run N…"); when another run is picked
    // meanwhile, only that one is shown.
    void reportViewLoadsOffTheGuiThreadAndDropsAStaleRun() {
        const std::string path = m_dir.filePath("two-runs.sqlite").toStdString();
        std::vector<int64_t> ids;
        {
            auto writer = std::make_shared<hearth::RunWriter>(path);
            for (const char* name : {"first", "second"}) {
                const int64_t id = writer->createRun(name, "{}");
                hearth::RunRecorder recorder(writer, id);
                recorder.onEvent(hearth::testing::startedEvent(name));
                for (int64_t i = 1; i <= 40; ++i) recorder.onEvent(hearth::testing::stepEvent(i));
                recorder.onEvent(hearth::testing::epochEvent(0, 0.8));
                recorder.onEvent(hearth::testing::reportEvent("test", 60));
                recorder.onEvent(hearth::testing::predictionsEvent("test", 60));
                recorder.onEvent(hearth::testing::finishedEvent());
                ids.push_back(id);
            }
            writer->flush();
        }
        ReportView view(QString::fromStdString(path));
        QSignalSpy loaded(&view, &ReportView::loaded);
        view.showRun(ids[0]);
        view.showRun(ids[1]);
        QVERIFY(view.isLoading());
        QCOMPARE(view.runId(), qint64(0));   // nothing read on this thread yet
        const auto labels = view.findChildren<QLabel*>();
        QVERIFY(std::any_of(labels.begin(), labels.end(), [&](const QLabel* l) {
            return l->text() == QStringLiteral("Loading run %1…").arg(ids[1]);
        }));
        QTRY_COMPARE(loaded.count(), 1);
        QTest::qWait(200);
        QCOMPARE(loaded.count(), 1);   // the first run's result was dropped
        QCOMPARE(loaded.at(0).at(0).toLongLong(), ids[1]);
        QCOMPARE(view.runId(), ids[1]);
        QCOMPARE(view.report().run.name, std::string("second"));
        QCOMPARE(view.classificationTable()->rowCount(), 3 + 3);   // cat, dog, bird + summaries
        QCOMPARE(view.curves()->graph(0)->dataCount(), 40);         // the step curve
        QVERIFY(view.sampleBrowser()->visibleCount() > 0);          // mistakes from the loader

        // File > Export for TensorBoard: the shown run's event file, written off the GUI thread.
        QSignalSpy exported(&view, &ReportView::tensorBoardExported);
        QSignalSpy failed(&view, &ReportView::tensorBoardExportFailed);
        view.exportTensorBoard(m_dir.filePath("tb"));
        QTRY_COMPARE(exported.count(), 1);
        const QString runDir = exported.at(0).at(0).toString();
        QCOMPARE(runDir, m_dir.filePath("tb") + QStringLiteral("/%1-second").arg(ids[1]));
        QCOMPARE(QDir(runDir).entryList({QStringLiteral("events.out.tfevents.*")}, QDir::Files).size(), 1);
        QFile blocker(m_dir.filePath("not-a-folder"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        view.exportTensorBoard(blocker.fileName());
        QTRY_COMPARE(failed.count(), 1);
        QVERIFY(failed.at(0).at(0).toString().startsWith(QStringLiteral("Cannot create the directory")));
    }

    // Export Report: the run shown as the self-contained HTML page hearth-cli writes (every step,
    // the heatmap, the samples' images read from Fashion-MNIST), off the GUI thread; PDF when a
    // Chromium is installed; Markdown as before; an unknown suffix is refused.
    void reportViewExportsTheHtmlReportFromTheStore()
    {
        const std::string path = m_dir.filePath("export.sqlite").toStdString();
        int64_t id = 0;
        {
            auto writer = std::make_shared<hearth::RunWriter>(path);
            id = writer->createRun("exported", "{}");
            hearth::RunRecorder recorder(writer, id);
            auto started = hearth::testing::startedEvent("exported");
            started.config_json = hearth::configToJson(hearth::ExperimentConfig{});   // Fashion-MNIST
            recorder.onEvent(started);
            for (int64_t i = 0; i < 45; ++i) recorder.onEvent(hearth::testing::stepEvent(i, 15));
            recorder.onEvent(hearth::testing::epochEvent(0, 0.8));
            recorder.onEvent(hearth::testing::reportEvent("test", 60));
            recorder.onEvent(hearth::testing::predictionsEvent("test", 60));
            recorder.onEvent(hearth::testing::finishedEvent());
            writer->flush();
        }
        ReportView view(QString::fromStdString(path));
        QSignalSpy loaded(&view, &ReportView::loaded);
        view.showRun(id);
        QTRY_COMPARE(loaded.count(), 1);
        QSignalSpy exported(&view, &ReportView::reportExported);
        QSignalSpy failed(&view, &ReportView::reportExportFailed);
        const QString html = m_dir.filePath(QStringLiteral("run.html"));
        view.exportReport(html);
        QTRY_COMPARE(exported.count(), 1);
        QCOMPARE(exported.at(0).at(0).toString(), html);
        QFile file(html);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray page = file.readAll();
        QVERIFY(page.contains("Content-Security-Policy"));
        QVERIFY(page.contains("\"steps\":{\"n\":45,"));
        QVERIFY(page.contains("id=\"chart-loss\"") && page.contains("id=\"confusion\" data-classes=\"3\""));
        if (QFileInfo::exists(kFashion)) {   // 60 predictions, every 7th wrong: 9 images inlined
            QCOMPARE(page.count("<img alt=\"sample "), 9);
            QVERIFY(page.contains("src=\"data:image/png;base64,iVBORw0KGgo"));
        }
        const QString md = m_dir.filePath(QStringLiteral("run.md"));
        view.exportReport(md);
        QTRY_COMPARE(exported.count(), 2);
        QVERIFY(QFile::exists(md));
        view.exportReport(m_dir.filePath(QStringLiteral("run.doc")));
        QTRY_COMPARE(failed.count(), 1);
        if (QStandardPaths::findExecutable(QStringLiteral("chromium")).isEmpty())
            QSKIP("No Chromium to print the PDF with (apt-get install chromium)");
        const QString pdf = m_dir.filePath(QStringLiteral("run.pdf"));
        view.exportReport(pdf);
        QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 3, 60000);
        QFile printed(pdf);
        QVERIFY(printed.open(QIODevice::ReadOnly));
        QVERIFY(printed.read(5) == "%PDF-");
    }

    void idxReaderDecodesFashionMnistTestImages()
    {
        const QString file = IdxImages::imageFileFor(kFashion, QStringLiteral("test"));
        if (file.isEmpty())
            QSKIP("Fashion-MNIST is not installed");
        QVERIFY(file.contains(QStringLiteral("t10k-images")));
        const IdxImages reader(file);
        QCOMPARE(reader.count(), int64_t(10000));
        QCOMPARE(reader.rows(), 28);
        QCOMPARE(reader.columns(), 28);
        const QImage first = reader.image(0);
        QCOMPARE(first.size(), QSize(28, 28));
        // An ankle boot: a dark border and a bright object in the middle.
        QCOMPARE(qGray(first.pixel(0, 0)), 0);
        int bright = 0;
        for (int y = 0; y < 28; ++y)
            for (int x = 0; x < 28; ++x)
                bright += qGray(first.pixel(x, y)) > 128;
        QVERIFY(bright > 50);
        QVERIFY(reader.image(10000).isNull());
        QVERIFY(reader.image(0) != reader.image(1));
    }

    void idxReaderRejectsOtherFiles()
    {
        const QString path = m_dir.filePath(QStringLiteral("not-idx"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("hello world, this is not an IDX file");
        f.close();
        QString error;
        try {
            IdxImages images(path);
        } catch (const hearth::DataError& e) {
            error = QString::fromStdString(e.what());
        }
        QVERIFY2(error.contains(path) && error.contains(QStringLiteral("bad magic number")), qPrintable(error));
    }

    // The browser reads the test images on a pool thread with the engine's reader: the list shows
    // the samples at once and their images once the file is read, pixel for pixel the engine's.
    void sampleBrowserReadsImagesOffTheGuiThread()
    {
        const QString folder = m_dir.filePath(QStringLiteral("idx-small"));
        QVERIFY(QDir().mkpath(folder));
        const QString file = QDir(folder).filePath(QStringLiteral("t10k-images-idx3-ubyte"));
        writeIdxImages(file, 5, 4, 3);
        // Where the file was read; the read waits (at most 10 s) until the GUI thread has looked.
        auto readOn = std::make_shared<std::atomic<QThread*>>(nullptr);
        auto mayRead = std::make_shared<QSemaphore>();
        SampleBrowser browser;
        browser.setImageReader([readOn, mayRead](const QString& path) {
            readOn->store(QThread::currentThread());
            mayRead->tryAcquire(1, 10000);
            return std::make_shared<const IdxImages>(path);
        });
        browser.setRun(idxConfigJson(folder), {"a", "b", "c"}, {{4, 0, 1, 0.9}, {1, 2, 0, 0.8}, {3, 1, 2, 0.7}});
        QVERIFY(browser.imagesLoading());
        QCOMPARE(browser.visibleCount(), 3);   // the samples are listed while the images load
        auto* list = browser.findChild<QListWidget*>(QStringLiteral("sampleList"));
        QCOMPARE(list->viewMode(), QListView::ListMode);
        QVERIFY2(browser.statusText().contains(QStringLiteral("reading the test images")), qPrintable(browser.statusText()));
        QVERIFY(browser.sampleImage(4).isNull());
        mayRead->release();
        QTRY_VERIFY(!browser.imagesLoading());
        QVERIFY(readOn->load() != nullptr);
        QVERIFY(readOn->load() != QThread::currentThread());
        QCOMPARE(list->viewMode(), QListView::IconMode);
        QVERIFY(!list->item(0)->icon().isNull());
        const hearth::IdxFile engine = hearth::readIdxFile(file.toStdString(), 3);
        for (int n = 0; n < 5; ++n) {
            const QImage shown = browser.sampleImage(n);
            QCOMPARE(shown.size(), QSize(3, 4));
            for (int y = 0; y < 4; ++y)
                for (int x = 0; x < 3; ++x)
                    QCOMPARE(qGray(shown.pixel(x, y)), int(engine.payload()[n * 12 + y * 3 + x]));
        }
        QVERIFY(browser.sampleImage(5).isNull());
    }

    // In the grid of thumbnails each caption has its cell's width, not the thumbnail's: "T-shirt/top
    // → Ankle boot" and the confidence show whole (at the thumbnail's 56 px they were cut to
    // "T-shirt/t…" and the confidence fell off the cell).
    void sampleCaptionsShowWholeUnderTheirThumbnails()
    {
        const QString folder = m_dir.filePath(QStringLiteral("idx-captions"));
        QVERIFY(QDir().mkpath(folder));
        writeIdxImages(QDir(folder).filePath(QStringLiteral("t10k-images-idx3-ubyte")), 3, 28, 28);
        SampleBrowser browser;
        browser.resize(900, 500);
        browser.setRun(idxConfigJson(folder), {"T-shirt/top", "Ankle boot", "Sneaker"},
                       {{0, 0, 1, 0.97}, {1, 2, 1, 0.51}, {2, 1, 2, 0.66}});
        QTRY_VERIFY(!browser.imagesLoading());
        browser.show();
        QVERIFY(QTest::qWaitForWindowExposed(&browser));
        auto* list = browser.findChild<QListWidget*>(QStringLiteral("sampleList"));
        QCOMPARE(list->viewMode(), QListView::IconMode);
        const QFontMetrics metrics = list->fontMetrics();
        for (int row = 0; row < list->count(); ++row) {
            const QStringList lines = list->item(row)->text().split(QLatin1Char('\n'));
            QCOMPARE(lines.size(), 2);
            const QRect cell = list->visualItemRect(list->item(row));
            for (const QString& line : lines)
                QVERIFY2(cell.width() > metrics.horizontalAdvance(line),
                         qPrintable(QStringLiteral("'%1' is %2 px in a %3 px item")
                                        .arg(line).arg(metrics.horizontalAdvance(line)).arg(cell.width())));
            // The thumbnail and both lines of the caption, one under the other.
            QVERIFY2(cell.height() >= list->iconSize().height() + 2 * metrics.height(),
                     qPrintable(QStringLiteral("%1 px high").arg(cell.height())));
        }
    }

    // A damaged test file: the browser lists the samples without images and says what is wrong
    // with the file (the engine reader's message), instead of crashing or showing garbage.
    void sampleBrowserExplainsADamagedImageFile()
    {
        const QString folder = m_dir.filePath(QStringLiteral("idx-damaged"));
        QVERIFY(QDir().mkpath(folder));
        const QString file = QDir(folder).filePath(QStringLiteral("t10k-images-idx3-ubyte"));
        writeIdxImages(file, 10, 28, 28, /*keep=*/16 + 3 * 28 * 28);   // 3 of the 10 images promised
        SampleBrowser browser;
        browser.setRun(idxConfigJson(folder), {"a", "b"}, {{1, 0, 1, 0.9}, {7, 1, 0, 0.6}});
        QTRY_VERIFY(!browser.imagesLoading());
        QCOMPARE(browser.visibleCount(), 2);
        auto* list = browser.findChild<QListWidget*>(QStringLiteral("sampleList"));
        QCOMPARE(list->viewMode(), QListView::ListMode);
        QVERIFY(browser.sampleImage(1).isNull());
        const QString status = browser.statusText();
        QVERIFY2(status.contains(QStringLiteral("the test images cannot be shown")) && status.contains(file)
                     && status.contains(QStringLiteral("truncated")),
                 qPrintable(status));
        bool explained = false;
        for (QLabel* l : browser.findChildren<QLabel*>())
            explained = explained || (l->text().contains(QStringLiteral("cannot be shown")) && l->text().contains(file));
        QVERIFY(explained);
        // Not an IDX file at all: the same, with the reader's reason.
        QFile garbage(file);
        QVERIFY(garbage.open(QIODevice::WriteOnly));
        garbage.write(QByteArray(4096, 'x'));
        garbage.close();
        browser.setRun(idxConfigJson(folder), {"a", "b"}, {{1, 0, 1, 0.9}});
        QTRY_VERIFY(!browser.imagesLoading());
        QVERIFY2(browser.statusText().contains(QStringLiteral("bad magic number")), qPrintable(browser.statusText()));
    }

    void configDiffListsOnlyDifferingDottedKeys()
    {
        hearth::ExperimentConfig a, b;
        a.name = "a";
        b.name = "b";
        b.trainer.precision = "bf16-mixed";
        b.optimizer.lr = 0.01;
        b.data.limit = 500;
        const auto diffs = diffConfigs({QString::fromStdString(hearth::configToJson(a)),
                                        QString::fromStdString(hearth::configToJson(b))});
        QStringList keys;
        for (const auto& d : diffs)
            keys << d.key;
        QCOMPARE(keys, (QStringList{"data.limit", "optimizer.lr", "trainer.precision"}));
        QCOMPARE(diffs[2].values, (QStringList{"32-true", "bf16-mixed"}));
        QCOMPARE(diffs[0].values, (QStringList{"null", "500"}));
    }

    void classificationTableHasClassesThenThreeSummaryRows()
    {
        const hearth::EvalReport r = sampleReport();
        const ReportTable t = classificationTable(r);
        QCOMPARE(t.rows.size(), 13);
        QCOMPARE(t.rows[0][0], QStringLiteral("T-shirt/top"));
        QCOMPARE(t.rows[10][0], QStringLiteral("accuracy"));
        QCOMPARE(t.rows[10][3], QStringLiteral("0.8000"));
        QCOMPARE(t.rows[11][0], QStringLiteral("macro avg"));
        QCOMPARE(t.rows[12][0], QStringLiteral("weighted avg"));
        QCOMPARE(t.rows[12][4], QStringLiteral("100"));
        QCOMPARE(t.rows[0][2], QStringLiteral("0.8000"));   // recall of class 0
    }

    void exportsWriteMarkdownAndJson()
    {
        RunReport report;
        report.run.id = 4;
        report.run.name = "export-me";
        report.run.status = "completed";
        report.run.config_json = hearth::configToJson(hearth::ExperimentConfig{});
        report.run.test_accuracy = 0.8;
        report.test = sampleReport();
        hearth::EpochMetrics e;
        e.val_accuracy = 0.79;
        report.epochs = {e};
        QString error;
        const QString md = m_dir.filePath(QStringLiteral("r.md"));
        const QString html = m_dir.filePath(QStringLiteral("r.html"));
        const QString json = m_dir.filePath(QStringLiteral("r.json"));
        QVERIFY2(exportReport(report, md, &error), qPrintable(error));
        QVERIFY(!exportReport(report, html, &error));   // the HTML report is built from the store (below)
        QVERIFY(error.contains(QStringLiteral("Report view's Export")));
        QVERIFY(exportReport(report, json, &error));
        QVERIFY(!exportReport(report, m_dir.filePath(QStringLiteral("r.doc")), &error));
        QFile mdFile(md);
        QVERIFY(mdFile.open(QIODevice::ReadOnly));
        const QString mdText = QString::fromUtf8(mdFile.readAll());
        QVERIFY(mdText.startsWith(QStringLiteral("# Run 4 — export-me")));
        QVERIFY(mdText.contains(QStringLiteral("| weighted avg |")));
        QVERIFY(mdText.contains(QStringLiteral("trainer.batch_size")));
        QVERIFY(!QFile::exists(html));
        QFile jsonFile(json);
        QVERIFY(jsonFile.open(QIODevice::ReadOnly));
        const QJsonObject root = QJsonDocument::fromJson(jsonFile.readAll()).object();
        QCOMPARE(root["run"].toObject()["name"].toString(), QStringLiteral("export-me"));
        QCOMPARE(root["reports"].toObject()["test"].toObject()["accuracy"].toDouble(), 0.8);
        QCOMPARE(root["config"].toObject()["trainer"].toObject()["batch_size"].toInt(), 64);
        QVERIFY(!mdText.contains(QStringLiteral("## Processes")));   // one device: no such table
    }

    // A data-parallel run's report lists each process with its share of what the optimizer holds
    // (zero1's ranks differ; the memory breakdown is rank 0's), "–" where it was not measured.
    void processesTableListsEachRanksShare()
    {
        RunReport report;
        report.run.id = 5;
        report.run.name = "zero1";
        report.run.config_json = hearth::configToJson(hearth::ExperimentConfig{});
        hearth::RankSummary first{0, 2, "gloo", "cpu", 101, 1000, 2.0, 500.0, 0.02, 300 << 20, ""};
        first.gradients_bytes = 22 << 20;
        first.optimizer_state_bytes = 12 << 20;
        hearth::RankSummary second{1, 2, "gloo", "cpu", 102, 1000, 2.0, 500.0, 0.0, 400 << 20, ""};
        report.ranks = {first, second};
        const ReportTable t = processesTable(report);
        QCOMPARE(t.rows.size(), 2);
        QCOMPARE(t.header[4], QStringLiteral("optimizer state"));
        QCOMPARE(t.rows[0][0], QStringLiteral("rank 0"));
        QCOMPARE(t.rows[0][4], QStringLiteral("12.0 MiB"));
        QCOMPARE(t.rows[0][3], QStringLiteral("22.0 MiB"));
        QCOMPARE(t.rows[1][4], QStringLiteral("–"));   // not measured (a run stored before v10)
        QCOMPARE(t.rows[1][2], QStringLiteral("400.0 MiB"));
        report.run.peak_memory_bytes = int64_t{400} << 20;   // the largest process's
        const ReportTable summary = summaryTable(report);
        QVERIFY(std::any_of(summary.rows.begin(), summary.rows.end(), [](const QStringList& row) {
            return row.value(1) == QStringLiteral("400.0 MiB (the largest of 2 processes)");
        }));
        QString error;
        const QString md = m_dir.filePath(QStringLiteral("ranks.md"));
        QVERIFY2(exportReport(report, md, &error), qPrintable(error));
        QFile mdFile(md);
        QVERIFY(mdFile.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(mdFile.readAll());
        QVERIFY2(text.contains(QStringLiteral("## Processes")) && text.contains(QStringLiteral("12.0 MiB")), qPrintable(text));
        const QString json = m_dir.filePath(QStringLiteral("ranks.json"));
        QVERIFY2(exportReport(report, json, &error), qPrintable(error));
        QFile jsonFile(json);
        QVERIFY(jsonFile.open(QIODevice::ReadOnly));
        const QJsonArray ranks = QJsonDocument::fromJson(jsonFile.readAll()).object()["ranks"].toArray();
        QCOMPARE(ranks.size(), 2);
        QCOMPARE(ranks[0].toObject()["optimizer_state_bytes"].toInteger(), qint64(12) << 20);
        QCOMPARE(ranks[1].toObject()["optimizer_state_bytes"].toInteger(), qint64(-1));
    }

    void confusionMatrixViewReportsClickedCells()
    {
        const hearth::EvalReport r = sampleReport();
        ConfusionMatrixView view;
        QStringList names;
        for (const auto& n : kClasses)
            names << QString::fromStdString(n);
        view.resize(500, 480);
        view.setMatrix(r.report.confusion, names);
        QCOMPARE(view.classCount(), 10);
        QCOMPARE(view.count(0, 0), int64_t(8));
        QCOMPARE(view.count(0, 1), int64_t(2));
        QSignalSpy spy(&view, &ConfusionMatrixView::cellActivated);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTest::mouseClick(&view, Qt::LeftButton, {}, view.cellRect(9, 8).center().toPoint());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.first()[0].toInt(), 9);   // true class (row)
        QCOMPARE(spy.first()[1].toInt(), 8);   // predicted class (column)
        QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(2, 2));   // outside the grid
        QCOMPARE(spy.count(), 1);
        const QString png = m_dir.filePath(QStringLiteral("cm.png"));
        QVERIFY(view.saveImage(png));
        QVERIFY(QImage(png).width() > 100);
    }

    void sampleBrowserShowsMisclassifiedImagesAndFilters()
    {
        if (IdxImages::imageFileFor(kFashion, QStringLiteral("test")).isEmpty())
            QSKIP("Fashion-MNIST is not installed");
        hearth::ExperimentConfig c;
        std::vector<hearth::Prediction> predictions = {{0, 9, 7, 0.9}, {1, 2, 6, 0.6}, {2, 1, 3, 0.95}};
        QStringList names;
        for (const auto& n : kClasses)
            names << QString::fromStdString(n);
        SampleBrowser browser;
        browser.setRun(QString::fromStdString(hearth::configToJson(c)), names, predictions);
        QCOMPARE(browser.visibleCount(), 3);
        QTRY_VERIFY(!browser.imagesLoading());   // read on a pool thread
        auto* list = browser.findChild<QListWidget*>(QStringLiteral("sampleList"));
        QVERIFY(list);
        QCOMPARE(list->viewMode(), QListView::IconMode);
        QVERIFY(!list->item(0)->icon().isNull());
        // Most confident mistake first: sample 2, a trouser taken for a dress.
        QVERIFY(list->item(0)->text().startsWith(QStringLiteral("Trouser → Dress")));
        auto* caption = browser.findChild<QLabel*>(QStringLiteral("sampleCaption"));
        QVERIFY(caption->text().contains(QStringLiteral("Predicted: Dress")));
        browser.setFilter(9, 7);
        QCOMPARE(browser.visibleCount(), 1);
        QVERIFY(caption->text().contains(QStringLiteral("True: Ankle boot")));
        browser.setFilter(-1, -1);
        QCOMPARE(browser.visibleCount(), 3);
    }

    // An image folder: the test split's files (its test/ folder here), listed as training listed
    // them, shown as icons and in the preview, the caption naming the file.
    void sampleBrowserShowsAnImageFolderFiles()
    {
        const QString root = m_dir.filePath(QStringLiteral("photos"));
        for (const QString& split : {QStringLiteral("train"), QStringLiteral("test")})
            for (const QString& cls : {QStringLiteral("cat"), QStringLiteral("dog")})
                for (int i = 0; i < 2; ++i) {
                    QDir().mkpath(root + "/" + split + "/" + cls);
                    QImage img(20, 10, QImage::Format_RGB888);
                    img.fill(cls == QLatin1String("cat") ? Qt::red : Qt::blue);
                    QVERIFY(img.save(root + "/" + split + "/" + cls + "/" + QString::number(i) + ".png"));
                }
        hearth::ExperimentConfig c;
        c.data.kind = "image_folder";
        c.data.path = root.toStdString();
        SampleBrowser browser;
        // Test sample 3 is test/dog/1.png, predicted cat.
        browser.setRun(QString::fromStdString(hearth::configToJson(c)), {"cat", "dog"}, {{3, 1, 0, 0.8}});
        QTRY_VERIFY(!browser.imagesLoading());
        auto* list = browser.findChild<QListWidget*>(QStringLiteral("sampleList"));
        QCOMPARE(list->viewMode(), QListView::IconMode);
        QVERIFY(!list->item(0)->icon().isNull());
        const QImage shown = browser.sampleImage(3);
        QCOMPARE(shown.size(), QSize(20, 10));
        QCOMPARE(shown.pixelColor(5, 5), QColor(Qt::blue));
        auto* caption = browser.findChild<QLabel*>(QStringLiteral("sampleCaption"));
        QVERIFY2(caption->text().contains(QStringLiteral("test/dog/1.png")), qPrintable(caption->text()));
        QVERIFY(browser.sampleImage(9).isNull());   // beyond the folder
    }

    void sampleBrowserShowsCsvRows()
    {
        const QString csv = m_dir.filePath(QStringLiteral("rows.csv"));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("x,y,label\n1,2,a\n3,4,b\n5,6,a\n");
        f.close();
        hearth::ExperimentConfig c;
        c.data.kind = "csv";
        c.data.path = csv.toStdString();
        SampleBrowser browser;
        browser.setRun(QString::fromStdString(hearth::configToJson(c)), {"a", "b"}, {{1, 1, 0, 0.7}});
        auto* list = browser.findChild<QListWidget*>(QStringLiteral("sampleList"));
        QCOMPARE(list->viewMode(), QListView::ListMode);
        QCOMPARE(browser.visibleCount(), 1);
        const auto preview = browser.findChildren<QLabel*>();
        bool found = false;
        for (QLabel* l : preview)
            found = found || l->text().contains(QStringLiteral("3,4,b"));
        QVERIFY(found);
    }

    void sampleBrowserShowsMisclassifiedTexts()
    {
        const QString csv = m_dir.filePath(QStringLiteral("reviews.csv"));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("text,label\n\"loved it, twice<br />over\",pos\nawful,neg\n\"not bad\nat all\",pos\n");
        f.close();
        hearth::ExperimentConfig c;
        c.data.kind = "text_csv";
        c.data.path = csv.toStdString();
        SampleBrowser browser;
        // Row 2 (a positive review) taken for negative, row 0 too, less confidently.
        browser.setRun(QString::fromStdString(hearth::configToJson(c)), {"neg", "pos"}, {{2, 1, 0, 0.8}, {0, 1, 0, 0.6}});
        auto* list = browser.findChild<QListWidget*>(QStringLiteral("sampleList"));
        QCOMPARE(list->viewMode(), QListView::ListMode);
        QCOMPARE(browser.visibleCount(), 2);
        // The texts are read off the GUI thread; the list fills in when they arrive.
        QVERIFY(browser.textsLoading());
        QVERIFY(list->item(0)->text().contains(QStringLiteral("reading the texts")));
        QTRY_VERIFY(!browser.textsLoading());
        QVERIFY2(list->item(0)->text().contains(QStringLiteral("pos → neg")), qPrintable(list->item(0)->text()));
        QVERIFY2(list->item(0)->text().contains(QStringLiteral("not bad at all")), qPrintable(list->item(0)->text()));
        bool found = false;
        for (QLabel* l : browser.findChildren<QLabel*>())
            found = found || l->text() == QStringLiteral("not bad\nat all");
        QVERIFY(found);
        list->setCurrentRow(1);
        found = false;
        for (QLabel* l : browser.findChildren<QLabel*>())
            found = found || l->text() == QStringLiteral("loved it, twice\nover");   // <br /> read as a line break
        QVERIFY(found);
    }
};

QTEST_MAIN(TestReportParts)
#include "test_report_parts.moc"
