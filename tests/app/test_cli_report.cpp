// hearth-cli's reports in a real browser: a trained run's HTML report, a technique ladder's
// comparison report and a failed run's report are opened in a headless Chromium with no way
// out to the network (a dead proxy; the page's policy counts any blocked load), and the test
// reads what the page's scripts drew back from the DOM: as many points as the store has steps,
// the speedups the store's training throughputs give. Screenshots are taken (HEARTH_REPORT_SCREENSHOTS
// names a folder to keep them in), and the PDF export is printed. Skipped without Chromium
// (scripts/test installs it).
#include "CliTestSupport.h"
#include "StoreTestEvents.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace hearth;
using hearth::test::runCli;

namespace {

QString findChromium() {
    for (const char* name : {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}) {
        const QString path = QStandardPaths::findExecutable(QString::fromLatin1(name));
        if (!path.isEmpty()) return path;
    }
    return {};
}

// The value of attribute `name` on the element with id `id` in the dumped DOM ("" when absent).
QString attribute(const QString& dom, const QString& id, const QString& name) {
    const QRegularExpression tag(QStringLiteral("<[a-z]+ [^>]*id=\"%1\"[^>]*>").arg(QRegularExpression::escape(id)));
    const QString element = tag.match(dom).captured(0);
    const QRegularExpression value(QStringLiteral("\\b%1=\"([^\"]*)\"").arg(QRegularExpression::escape(name)));
    return value.match(element).captured(1);
}

QString bodyAttribute(const QString& dom, const QString& name) {
    const QString body = QRegularExpression(QStringLiteral("<body [^>]*>")).match(dom).captured(0);
    return QRegularExpression(QStringLiteral("\\b%1=\"([^\"]*)\"").arg(name)).match(body).captured(1);
}

uint32_t bigEndian(const QByteArray& b, int at) {
    return (uint32_t(uint8_t(b[at])) << 24) | (uint32_t(uint8_t(b[at + 1])) << 16) | (uint32_t(uint8_t(b[at + 2])) << 8) |
           uint32_t(uint8_t(b[at + 3]));
}

}  // namespace

class CliReportTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    QString browser_, db_;
    qint64 run_ = 0, failed_ = 0, sweep_ = 0, long_ = 0;

    // Chromium with no network: every request goes to a proxy that does not exist.
    QString run(const QStringList& args) {
        QProcess p;
        p.setProcessChannelMode(QProcess::SeparateChannels);
        const QString profile = dir_.filePath(QStringLiteral("profile"));
        p.start(browser_, QStringList{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                                      "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                                      "--user-data-dir=" + profile} + args);
        if (!p.waitForFinished(120000)) {
            p.kill();
            p.waitForFinished();
        }
        return QString::fromUtf8(p.readAllStandardOutput());
    }
    // The page after its scripts ran (and any pending tasks, such as policy reports).
    QString dom(const QString& html, const QString& fragment = {}) {
        QUrl url = QUrl::fromLocalFile(html);
        url.setFragment(fragment);
        return run({"--virtual-time-budget=5000", "--dump-dom", url.toString()});
    }
    // Takes a screenshot and checks it is a PNG of the window's size.
    void screenshot(const QString& html, const QString& name, int height) {
        const QString keep = qEnvironmentVariable("HEARTH_REPORT_SCREENSHOTS");
        const QString png = (keep.isEmpty() ? dir_.path() : keep) + "/" + name;
        QFile::remove(png);
        run({"--window-size=1280," + QString::number(height), "--screenshot=" + png, QUrl::fromLocalFile(html).toString()});
        QFile file(png);
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(png));
        const QByteArray bytes = file.readAll();
        QVERIFY(bytes.startsWith("\x89PNG\r\n\x1a\n"));
        QCOMPARE(bigEndian(bytes, 16), 1280u);
        QCOMPARE(bigEndian(bytes, 20), uint32_t(height));
        QVERIFY(bytes.size() > 50000);   // a drawn page, not a blank one
    }
    QString exportHtml(const QStringList& what, const QString& name) {
        const QString out = dir_.filePath(name);
        const auto r = runCli(QStringList{"--db", db_, "export"} + what + QStringList{"--format", "html", "--out", out});
        if (r.exit_code != 0) qWarning("%s", qPrintable(r.out));
        return r.exit_code == 0 ? out : QString();
    }
    static void verifyRendered(const QString& page) {
        QVERIFY2(bodyAttribute(page, "data-render") == "done",
                 qPrintable("render: " + bodyAttribute(page, "data-render") + " " + bodyAttribute(page, "data-render-error")));
        QCOMPARE(bodyAttribute(page, "data-csp-violations"), QStringLiteral("0"));   // nothing tried to load
        QVERIFY(bodyAttribute(page, "data-render-ms").toDouble() > 0.0);
    }

private Q_SLOTS:
    void initTestCase();
    void runReportDrawsEveryStoredStepOffline();
    void ladderReportDrawsTheStoresSpeedups();
    void failedRunReportSaysWhatIsMissing();
    void longRunDrawsAtScreenResolutionAndZoomsToEveryStep();
    void pdfIsTheReportPrinted();
};

void CliReportTest::initTestCase() {
    browser_ = findChromium();
    if (browser_.isEmpty()) QSKIP("No Chromium on PATH (Debian: apt-get install chromium; scripts/test installs it).");
    QVERIFY(dir_.isValid());
    db_ = dir_.filePath(QStringLiteral("runs.sqlite"));
    // A real run: Fashion-MNIST subset, every step logged.
    auto r = runCli({"--db", db_, "run", "--set", "data.limit=600", "--set", "trainer.max_epochs=2", "--set",
                     "trainer.log_every_n_steps=1", "--quiet"}, 300000);
    QVERIFY2(r.exit_code == 0, qPrintable(r.out));
    // A real technique ladder on a smaller subset.
    r = runCli({"--db", db_, "sweep", "--ladder", "--repeats", "1", "--set", "data.limit=200", "--set", "trainer.max_epochs=1", "--set",
                "trainer.log_every_n_steps=1", "--quiet"}, 400000);
    QVERIFY2(r.exit_code == 0, qPrintable(r.out));
    const auto sweep = QRegularExpression(QStringLiteral("Sweep #(\\d+) stored")).match(r.out);
    QVERIFY(sweep.hasMatch());
    sweep_ = sweep.captured(1).toLongLong();
    // A run that failed in its first epoch, before any report.
    RunWriter writer(db_.toStdString());
    failed_ = writer.createRun("diverged", "");
    writer.enqueue(failed_, hearth::testing::startedEvent("diverged"));
    for (int64_t i = 0; i < 7; ++i) writer.enqueue(failed_, hearth::testing::stepEvent(i, 15));
    writer.enqueue(failed_, RunFailed{FailureKind::Training, "the loss became NaN at step 7", "lower the learning rate"});
    // A long run: more steps than a chart has pixels.
    long_ = writer.createRun("long", "");
    writer.enqueue(long_, hearth::testing::startedEvent("long"));
    for (int64_t i = 0; i < 12000; ++i) writer.enqueue(long_, hearth::testing::stepEvent(i, 1000));
    writer.enqueue(long_, hearth::testing::finishedEvent());
    writer.flush();
    run_ = RunStore(db_.toStdString()).listRuns({"completed", "", "fashion", 0}).back().id;   // the oldest: the single run
}

void CliReportTest::runReportDrawsEveryStoredStepOffline() {
    const QString html = exportHtml({QString::number(run_)}, QStringLiteral("run.html"));
    QVERIFY(!html.isEmpty());
    const RunStore store(db_.toStdString());
    const auto steps = store.steps(run_);
    const auto epochs = store.epochs(run_);
    const auto test = store.report(run_, "test");
    QVERIFY(steps.size() >= 15 && epochs.size() == 2 && test);
    const QString page = dom(html);
    verifyRendered(page);
    // Every curve holds every stored step; loss and accuracy also each epoch's validation point.
    for (const char* chart : {"chart-loss", "chart-accuracy", "chart-lr", "chart-throughput", "chart-steptime"}) {
        QCOMPARE(attribute(page, chart, "data-points").toInt(), int(steps.size()));
        QCOMPARE(attribute(page, chart, "data-drawn").toInt(), int(steps.size()));
    }
    QCOMPARE(attribute(page, "chart-loss", "data-epoch-points").toInt(), int(epochs.size()));
    QCOMPARE(attribute(page, "chart-accuracy", "data-epoch-points").toInt(), int(epochs.size()));
    // The heatmap: a cell per pair of the 10 classes, holding the stored counts.
    QCOMPARE(attribute(page, "confusion", "data-classes"), QStringLiteral("10"));
    const auto cells = QRegularExpression(QStringLiteral("data-count=\"(\\d+)\"")).globalMatch(page);
    int64_t counted = 0, n = 0;
    for (auto it = cells; it.hasNext(); ++n) counted += it.next().captured(1).toLongLong();
    QCOMPARE(n, int64_t(100));
    QCOMPARE(counted, test->report.total);
    // The most confident mistakes, their images inlined.
    const auto mistakes = store.predictions(run_, "test", true);
    const auto images = QRegularExpression(QStringLiteral("<img alt=\"sample \\d+\" src=\"data:image/png;base64,")).globalMatch(page);
    int shown = 0;
    for (auto it = images; it.hasNext(); it.next()) ++shown;
    QCOMPARE(shown, int(std::min<size_t>(24, mistakes.size())));
    // The breakdown and the memory charts were drawn (mean + each profiled epoch; one memory bar).
    QVERIFY(attribute(page, "breakdown-box", "data-bars").toInt() >= 2);
    QCOMPARE(attribute(page, "memory-box", "data-bars"), QStringLiteral("1"));
    screenshot(html, QStringLiteral("report-run-html.png"), 2600);
}

void CliReportTest::ladderReportDrawsTheStoresSpeedups() {
    const QString html = exportHtml({"--sweep", QString::number(sweep_)}, QStringLiteral("ladder.html"));
    QVERIFY(!html.isEmpty());
    const RunStore store(db_.toStdString());
    std::vector<RunSummary> runs;
    for (const auto& r : store.listRuns())
        if (r.sweep_id == sweep_) runs.insert(runs.begin(), r);   // listRuns is newest first
    QVERIFY(runs.size() >= 3);
    const QString page = dom(html);
    verifyRendered(page);
    // One bar per run: the baseline's training time over each run's, as the store has them.
    QCOMPARE(attribute(page, "speedup-box", "data-bars").toInt(), int(runs.size()));
    const QStringList speedups = attribute(page, "speedup-box", "data-values").split(' ');
    QCOMPARE(speedups.size(), qsizetype(runs.size()));
    for (size_t i = 0; i < runs.size(); ++i)
        QCOMPARE(speedups[qsizetype(i)], QString::number(*runs[i].samples_per_sec / *runs[0].samples_per_sec, 'f', 4));
    const QStringList accuracies = attribute(page, "accuracy-box", "data-values").split(' ');
    QCOMPARE(accuracies.last(), QString::number(100.0 * *runs.back().test_accuracy, 'f', 4));
    // Each run's curve holds each of its stored steps.
    QStringList stored;
    for (const auto& r : runs) stored << QString::number(store.steps(r.id).size());
    QCOMPARE(attribute(page, "curves-box", "data-run-points"), stored.join(' '));
    QCOMPARE(attribute(page, "curves-box", "data-curves").toInt(), int(runs.size()));
    QCOMPARE(attribute(page, "breakdown-box", "data-bars").toInt(), int(runs.size()));
    QVERIFY(page.contains("<code>trainer.precision</code>"));   // the ladder's first change
    // The ladder judged: a row per step with its runs, and the recommendation (or keep the baseline).
    QVERIFY2(page.contains("The ladder, judged over its repeats") && page.contains("id=\"ladder-judged\""),
             qPrintable(page.left(4000)));
    QVERIFY(page.contains("Recommended: ") || page.contains("keep '"));
    QVERIFY(page.contains(">1/1<"));   // one run per step here
    // Each step's prediction against its run: "295.1 MiB / 301.2 MiB (-2.0%)".
    QVERIFY(page.contains("peak memory: predicted / measured"));
    QVERIFY2(QRegularExpression(R"(\d MiB / [\d.]+ MiB \([+-]\d+\.\d%\))").match(page).hasMatch(),
             qPrintable(page.left(4000)));
    screenshot(html, QStringLiteral("report-ladder-html.png"), 2200);
}

void CliReportTest::failedRunReportSaysWhatIsMissing() {
    const QString html = exportHtml({QString::number(failed_)}, QStringLiteral("failed.html"));
    QVERIFY(!html.isEmpty());
    const QString page = dom(html);
    verifyRendered(page);
    QVERIFY(page.contains("id=\"missing\""));
    QVERIFY(page.contains("No test report: the run failed before testing."));
    QVERIFY(page.contains("the loss became NaN at step 7"));
    QCOMPARE(attribute(page, "chart-loss", "data-points"), QStringLiteral("7"));
    QCOMPARE(attribute(page, "chart-loss", "data-epoch-points"), QStringLiteral("0"));
    QVERIFY(attribute(page, "breakdown-box", "class").contains("empty"));   // said, not drawn
    screenshot(html, QStringLiteral("report-failed-html.png"), 1400);
}

void CliReportTest::longRunDrawsAtScreenResolutionAndZoomsToEveryStep() {
    const QString html = exportHtml({QString::number(long_)}, QStringLiteral("long.html"));
    QVERIFY(!html.isEmpty());
    QString page = dom(html);
    verifyRendered(page);
    QVERIFY(page.contains("All 12,000 logged steps"));
    // The page holds every step; a chart of ~1,000 pixels draws each column's extremes.
    QCOMPARE(attribute(page, "chart-loss", "data-points"), QStringLiteral("12000"));
    const int drawn = attribute(page, "chart-loss", "data-drawn").toInt();
    QVERIFY2(drawn > 500 && drawn < 5000, qPrintable(QString::number(drawn)));
    // Zoomed to 100 steps: all of them, and the one beyond each edge.
    page = dom(html, QStringLiteral("steps=6001-6100"));
    verifyRendered(page);
    for (const char* chart : {"chart-loss", "chart-accuracy", "chart-lr", "chart-throughput", "chart-steptime"})
        QCOMPARE(attribute(page, chart, "data-drawn"), QStringLiteral("102"));
}

void CliReportTest::pdfIsTheReportPrinted() {
    const QString pdf = dir_.filePath(QStringLiteral("run.pdf"));
    const auto r = runCli({"--db", db_, "export", QString::number(run_), "--format", "pdf", "--out", pdf});
    QVERIFY2(r.exit_code == 0, qPrintable(r.out));
    QVERIFY(r.out.contains("as PDF to " + pdf + " (printed by "));
    QFile file(pdf);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray bytes = file.readAll();
    QVERIFY(bytes.startsWith("%PDF-"));
    // Several A4 pages (one holds the curves, not the whole report), with images: the charts and samples.
    const auto pages = QRegularExpression(QStringLiteral("/Type\\s*/Page[^s]")).globalMatch(QString::fromLatin1(bytes));
    int count = 0;
    for (auto it = pages; it.hasNext(); it.next()) ++count;
    QVERIFY2(count >= 4, qPrintable(QString::number(count)));
    QVERIFY(bytes.size() > 100000);
    QVERIFY(bytes.contains("/Subtype /Image") || bytes.contains("/Subtype/Image"));
}

QTEST_GUILESS_MAIN(CliReportTest)
#include "test_cli_report.moc"
