// The HTML report pages without a browser: self-contained documents (policy, no outside
// references, the chart libraries inlined with their licenses), the data their charts draw
// (every stored step), what a partial or damaged run's page says it lacks, the comparison's
// speedups and differing settings, and the PNG encoder of the samples' images.
#include "RawDb.h"
#include "StoreTestEvents.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "storage/report/ComparisonPage.h"
#include "storage/report/HtmlPage.h"
#include "storage/report/PngImage.h"
#include "storage/report/ReportScripts.h"
#include "storage/report/RunComparison.h"
#include "storage/report/RunPage.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <zlib.h>

#include <cmath>

using namespace hearth;
using namespace hearth::testing;

namespace {

// The page's data block, parsed.
QJsonObject pageData(const std::string& html) {
    const std::string open = "<script type=\"application/json\" id=\"hearth-data\">";
    const auto start = html.find(open);
    if (start == std::string::npos) return {};
    const auto begin = start + open.size();
    const auto end = html.find("</script>", begin);
    return QJsonDocument::fromJson(QByteArray::fromStdString(html.substr(begin, end - begin))).object();
}

uint32_t bigEndian(const std::string& s, size_t at) {
    return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) | (uint32_t(uint8_t(s[at + 2])) << 8) |
           uint32_t(uint8_t(s[at + 3]));
}

std::string fileText(const char* path) {
    QFile f(QString::fromUtf8(path));
    return f.open(QIODevice::ReadOnly) ? f.readAll().toStdString() : std::string();
}

// A completed run of `steps` logged steps over two epochs, with reports and predictions.
int64_t writeRun(RunWriter& writer, const std::string& name, const std::string& config_json, double train_time,
                 int64_t steps = 30, std::optional<int64_t> sweep = std::nullopt) {
    const int64_t id = writer.createRun(name, "", sweep);
    RunStarted started = startedEvent(name);
    started.config_json = config_json;
    writer.enqueue(id, started);
    for (int64_t i = 0; i < steps; ++i) {
        StepMetrics s = stepEvent(i, steps / 2);
        if (i == steps / 3) s.loss = 9.5;   // a spike a thinned curve must keep
        writer.enqueue(id, s);
        if (i % (steps / 2) == steps / 2 - 1) {
            EpochMetrics e = epochEvent(i / (steps / 2), 0.75);
            e.global_step = i + 1;
            writer.enqueue(id, e);
        }
    }
    writer.enqueue(id, reportEvent("val", 100));
    writer.enqueue(id, reportEvent("test", 120));
    writer.enqueue(id, predictionsEvent("test", 120));
    RunFinished finished = finishedEvent();
    finished.train_time_s = train_time;
    finished.samples_per_sec = 60000.0 / train_time;   // every run trains the same samples
    writer.enqueue(id, finished);
    return id;
}

std::string config(const std::string& precision, double lr, const std::string& extra = {}) {
    return R"({"name":"n","optimizer":{"lr":)" + std::to_string(lr) + R"(},"trainer":{"max_epochs":2,"precision":")" +
           precision + R"("})" + extra + "}";
}

}  // namespace

class ReportPagesTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    std::string db_;
    int64_t completed_ = 0, fast_ = 0, failed_ = 0, long_ = 0;

private Q_SLOTS:
    void initTestCase();
    void pngRoundTripsThroughZlib();
    void base64FollowsRfc4648();
    void scriptsAreTheDebianFilesWithoutSourceMaps();
    void runPageIsSelfContained();
    void runPageDataHoldsEveryStoredStep();
    void runPageShowsReportHeatmapAndSettings();
    void textCannotEndTheDataBlock();
    void partialRunSaysWhatIsMissing();
    void damagedReportIsNamedAndTheRestShows();
    void comparisonComputesSpeedupsAgainstTheBaseline();
    void differingSettingsFollowTheSchema();
    void comparisonThinsLongCurvesKeepingExtremes();
    void sweepRunsComeInTheOrderTheyRan();
    void dataWaitShareUsesTheBreakdown();
    void memoryLadderPageShowsItsTable();
    void keyFiguresShowComputeAndMfuApart();
    void runsAreOneLadderOnlyWhenEveryRunIsOfIt();
};

void ReportPagesTest::initTestCase() {
    QVERIFY(dir_.isValid());
    db_ = dir_.filePath("runs.sqlite").toStdString();
    RunWriter writer(db_);
    const int64_t sweep = writer.createSweep("cnn ladder", "ladder");
    completed_ = writeRun(writer, "baseline", config("32-true", 0.001), 12.0, 30, sweep);
    fast_ = writeRun(writer, "bf16", config("bf16-mixed", 0.001), 4.8, 30, sweep);
    long_ = writeRun(writer, "long", config("32-true", 0.01, R"(,"data":{"limit":500})"), 30.0, 25000);
    failed_ = writer.createRun("failed-early", "");
    RunStarted started = startedEvent("failed-early");
    writer.enqueue(failed_, started);
    for (int64_t i = 0; i < 5; ++i) writer.enqueue(failed_, stepEvent(i, 15));
    writer.enqueue(failed_, RunFailed{FailureKind::Training, "the loss became NaN at step 5", "lower the learning rate"});
    writer.flush();
    RunStore(db_).setNotes(completed_, "the baseline of the study");
    RunStore(db_).setTags(completed_, {"baseline", "cnn"});
}

void ReportPagesTest::pngRoundTripsThroughZlib() {
    report::GrayImage image{5, 3, {}};
    for (int i = 0; i < 15; ++i) image.pixels.push_back(static_cast<uint8_t>(i * 17));
    const std::string png = report::encodePng(image);
    QCOMPARE(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    // Chunks: length, type, data, CRC of type + data.
    size_t at = 8;
    std::string idat;
    QStringList types;
    while (at < png.size()) {
        const uint32_t length = bigEndian(png, at);
        const std::string type = png.substr(at + 4, 4);
        const std::string data = png.substr(at + 8, length);
        const auto crc = crc32(0L, reinterpret_cast<const Bytef*>(png.data() + at + 4), length + 4);
        QCOMPARE(bigEndian(png, at + 8 + length), static_cast<uint32_t>(crc));
        types << QString::fromStdString(type);
        if (type == "IHDR") {
            QCOMPARE(bigEndian(data, 0), 5u);
            QCOMPARE(bigEndian(data, 4), 3u);
            QCOMPARE(int(data[8]), 8);   // bit depth
            QCOMPARE(int(data[9]), 0);   // grayscale
        }
        if (type == "IDAT") idat += data;
        at += 12 + length;
    }
    QCOMPARE(types, QStringList({"IHDR", "IDAT", "IEND"}));
    std::string raw(size_t{3} * 6, '\0');
    uLongf raw_size = raw.size();
    QCOMPARE(uncompress(reinterpret_cast<Bytef*>(raw.data()), &raw_size, reinterpret_cast<const Bytef*>(idat.data()),
                        idat.size()), Z_OK);
    QCOMPARE(raw_size, uLongf(18));
    for (int y = 0; y < 3; ++y) {
        QCOMPARE(int(raw[size_t(y * 6)]), 0);   // filter: none
        for (int x = 0; x < 5; ++x) QCOMPARE(uint8_t(raw[size_t(y * 6 + 1 + x)]), image.pixels[size_t(y * 5 + x)]);
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, report::encodePng(report::GrayImage{4, 4, {1, 2, 3}}));
    QVERIFY(report::pngDataUrl(image).rfind("data:image/png;base64,iVBORw0KGgo", 0) == 0);
}

void ReportPagesTest::base64FollowsRfc4648() {
    const std::vector<std::pair<std::string, std::string>> vectors = {
        {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"}, {std::string("\xff\x00\xfe", 3), "/wD+"}};
    for (const auto& [in, out] : vectors) QCOMPARE(report::base64(in), out);
}

void ReportPagesTest::scriptsAreTheDebianFilesWithoutSourceMaps() {
    // The build needs these files; a machine that only runs a build made elsewhere (a GPU machine)
    // has the embedded copies alone.
    if (!QFile::exists(HEARTH_DYGRAPHS_JS) || !QFile::exists(HEARTH_CHARTJS_JS))
        QSKIP("Debian's script files are not on this machine (the build was made on another)");
    const std::string dygraphs = fileText(HEARTH_DYGRAPHS_JS), chart = fileText(HEARTH_CHARTJS_JS);
    QVERIFY(!dygraphs.empty() && !chart.empty());
    const std::string embedded = report::scripts::dygraphs();
    QVERIFY(embedded.find("sourceMappingURL") == std::string::npos);
    QCOMPARE(embedded, dygraphs.substr(0, dygraphs.rfind("//# sourceMappingURL=")));
    QVERIFY(report::scripts::chartJs().find("Released under the MIT License") != std::string::npos);
    QCOMPARE(report::scripts::chartJs(), chart);   // it has no source-map line
    QVERIFY(embedded.find("@license") != std::string::npos);
    QVERIFY2(report::scripts::librariesLine().find("dygraphs 2.") != std::string::npos, report::scripts::librariesLine().c_str());
    QVERIFY(report::scripts::librariesLine().find("Chart.js 3.") != std::string::npos);
}

void ReportPagesTest::runPageIsSelfContained() {
    auto page = report::loadRunPage(RunStore(db_), completed_);
    page.samples.at(0).image = report::GrayImage{2, 2, {0, 255, 255, 0}};   // what the CLI or the workbench read
    const std::string html = report::runPageHtml(page);
    QVERIFY(html.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
                      "style-src 'unsafe-inline'; img-src data:;") != std::string::npos);
    // The markup refers to nothing outside the file: every src is a data: URL; no href, no url().
    // (What the scripts do at run time is the browser test's: test_cli_report.)
    QString text = QString::fromStdString(html);
    text.remove(QRegularExpression(QStringLiteral("<script[^>]*>.*?</script>"),
                                   QRegularExpression::DotMatchesEverythingOption));
    QVERIFY(text.contains(QStringLiteral("<img alt=\"sample ") + QString::number(page.samples[0].prediction.index) +
                          QStringLiteral("\" src=\"data:image/png;base64,")));
    const QRegularExpression src(QStringLiteral("\\bsrc\\s*=\\s*[\"']?(?!data:)[^\"'\\s>]+"));
    QVERIFY2(!src.match(text).hasMatch(), qPrintable(src.match(text).captured(0)));
    QVERIFY(!QRegularExpression(QStringLiteral("<(link|iframe|object|embed|base)\\b")).match(text).hasMatch());
    QVERIFY(!QRegularExpression(QStringLiteral("\\bhref\\s*=\\s*[\"']?(https?:|//)")).match(text).hasMatch());
    QVERIFY(!QRegularExpression(QStringLiteral("url\\(\\s*[\"']?(https?:|//)")).match(text).hasMatch());
    QVERIFY(html.find("sourceMappingURL") == std::string::npos);
    // Both libraries inlined, their license comments kept.
    QVERIFY(html.find("/*! @license https://github.com/danvk/dygraphs") != std::string::npos);
    QVERIFY(html.find(" * Chart.js v3.") != std::string::npos);
}

void ReportPagesTest::runPageDataHoldsEveryStoredStep() {
    const RunStore store(db_);
    const auto page = report::loadRunPage(store, completed_);
    const QJsonObject data = pageData(report::runPageHtml(page));
    const QJsonObject steps = data["steps"].toObject();
    const auto stored = store.steps(completed_);
    QCOMPARE(steps["n"].toInt(), int(stored.size()));
    const QJsonArray step = steps["step"].toArray(), loss = steps["loss"].toArray(), lr = steps["lr"].toArray();
    QCOMPARE(step.size(), qsizetype(stored.size()));
    for (size_t i = 0; i < stored.size(); ++i) {
        QCOMPARE(step[qsizetype(i)].toInteger(), stored[i].global_step);
        QVERIFY(std::abs(loss[qsizetype(i)].toDouble() - stored[i].loss) <= 1e-6 * std::abs(stored[i].loss));
        QVERIFY(std::abs(lr[qsizetype(i)].toDouble() - stored[i].lr) <= 1e-6 * stored[i].lr);
    }
    const QJsonObject epochs = data["epochs"].toObject();
    QCOMPARE(epochs["val_acc"].toArray().size(), 2);
    QCOMPARE(epochs["step"].toArray()[1].toInt(), 30);
    QCOMPARE(data["breakdown"].toObject()["rows"].toArray().size(), 3);   // the mean, then both epochs
    QCOMPARE(data["memory"].toObject()["peak_bytes"].toInteger(), 61000);
}

void ReportPagesTest::runPageShowsReportHeatmapAndSettings() {
    const std::string html = report::runPageHtml(report::loadRunPage(RunStore(db_), completed_));
    const auto report = reportEvent("test", 120).report;
    QVERIFY(html.find("id=\"confusion\" data-classes=\"3\"") != std::string::npos);
    for (size_t t = 0; t < 3; ++t)
        for (size_t p = 0; p < 3; ++p) {
            const std::string cell = "data-count=\"" + std::to_string(report.confusion[t][p]) + "\"";
            QVERIFY(html.find(cell) != std::string::npos);
        }
    QVERIFY(html.find("<td>" + report::formatFixed(report.macro_f1, 4) + "</td>") != std::string::npos);
    // 120 predictions, every 7th wrong: 18 misclassified, all shown (fewer than 24), most confident first.
    QVERIFY2(html.find("The 18 most confident of 18 misclassified test samples") != std::string::npos, "sample count");
    QVERIFY(html.find("id=\"sample-grid\"") != std::string::npos);
    // Settings asked for beside what ran; pin memory ran otherwise.
    QVERIFY(html.find("<tr class=\"differs\"><td><code>trainer.pin_memory</code></td><td>true</td><td>n/a on CPU: no pinned "
                      "memory</td></tr>") != std::string::npos);
    QVERIFY(html.find("the baseline of the study") != std::string::npos);
    QVERIFY(html.find("<span class=\"badge\">cnn</span>") != std::string::npos);
    QVERIFY(html.find("1.13.1") != std::string::npos);   // LibTorch
    QVERIFY(html.find("id=\"missing\"") == std::string::npos);   // a complete run lacks nothing
}

void ReportPagesTest::textCannotEndTheDataBlock() {
    RunStore store(db_);
    store.rename(fast_, "</script><script>alert(1)</script>");
    store.setNotes(fast_, "a note with </script> and \xe2\x80\xa8 in it");
    const std::string html = report::runPageHtml(report::loadRunPage(store, fast_));
    QVERIFY(html.find("<script>alert(1)") == std::string::npos);
    QVERIFY(html.find("<title>Run #" + std::to_string(fast_) + " &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>") !=
            std::string::npos);
    QVERIFY(!pageData(html).isEmpty());
    QCOMPARE(report::html::scriptSafe("{\"a\":\"</b>\xe2\x80\xa8\"}"), std::string("{\"a\":\"\\u003c/b>\\u2028\"}"));
    store.rename(fast_, "bf16");
    store.setNotes(fast_, "");
}

void ReportPagesTest::partialRunSaysWhatIsMissing() {
    const auto page = report::loadRunPage(RunStore(db_), failed_);
    const auto missing = report::missingParts(page);
    const auto has = [&missing](const std::string& part) {
        return std::any_of(missing.begin(), missing.end(), [&](const std::string& m) { return m.find(part) != std::string::npos; });
    };
    QVERIFY(has("No test report: the run failed before testing."));
    QVERIFY(has("No finished epoch, so no validation curve and no epoch table: the run failed during its first epoch."));
    QVERIFY(has("No classification report or confusion matrix."));
    QVERIFY(!has("No logged training steps"));
    const std::string html = report::runPageHtml(page);
    QVERIFY(html.find("id=\"missing\"") != std::string::npos);
    QVERIFY(html.find("the loss became NaN at step 5") != std::string::npos);
    QCOMPARE(pageData(html)["steps"].toObject()["n"].toInt(), 5);

    // A run that failed before it started has no environment and no steps.
    RunWriter writer(db_);
    const int64_t bare = writer.createRun("bad-config", "{}");
    writer.enqueue(bare, RunFailed{FailureKind::Config, "trainer.batch_size: must be at least 1", ""});
    writer.flush();
    const auto bare_missing = report::missingParts(report::loadRunPage(RunStore(db_), bare));
    QVERIFY(std::any_of(bare_missing.begin(), bare_missing.end(), [](const std::string& m) {
        return m == "No logged training steps, so no step curves: the run failed before its first logged step.";
    }));
    QVERIFY(!report::runPageHtml(report::loadRunPage(RunStore(db_), bare)).empty());
}

void ReportPagesTest::damagedReportIsNamedAndTheRestShows() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("damaged.sqlite").toStdString();
    int64_t id = 0;
    {
        RunWriter writer(db);
        id = writeRun(writer, "damaged", config("32-true", 0.001), 5.0);
        writer.flush();
    }
    RawDb(db).exec("UPDATE reports SET report_json = '{not json' WHERE split = 'test'");
    const auto page = report::loadRunPage(RunStore(db), id);
    QCOMPARE(page.unreadable.size(), size_t(1));
    QVERIFY2(page.unreadable[0].rfind("The test report could not be read: ", 0) == 0, page.unreadable[0].c_str());
    QVERIFY(page.run.val.has_value());   // the validation report still shows, and the steps
    QCOMPARE(page.steps.size(), size_t(30));
    const std::string html = report::runPageHtml(page);
    QVERIFY(html.find("Classification report (val split)") != std::string::npos);
    QVERIFY(html.find("The test report could not be read") != std::string::npos);
    QVERIFY_THROWS_EXCEPTION(StoreError, report::loadRunPage(RunStore(db), id + 100));
}

void ReportPagesTest::comparisonComputesSpeedupsAgainstTheBaseline() {
    const RunStore store(db_);
    auto page = report::loadComparisonPage(store, {completed_, fast_});
    QCOMPARE(page.baseline_id, completed_);
    QCOMPARE(page.title, std::string("Sweep #1: cnn ladder"));
    QCOMPARE(page.sweep_kind, std::string("ladder"));
    QJsonArray runs = QJsonDocument::fromJson(QByteArray::fromStdString(report::comparisonPageData(page))).object()["runs"].toArray();
    QCOMPARE(runs.size(), 2);
    QCOMPARE(runs[0].toObject()["speedup"].toDouble(), 1.0);
    QCOMPARE(runs[1].toObject()["speedup"].toDouble(), 2.5);   // 12 s / 4.8 s
    QCOMPARE(runs[1].toObject()["steps"].toObject()["step"].toArray().size(), 30);
    const std::string html = report::comparisonPageHtml(page);
    QVERIFY(html.find("<td data-sort=\"2.500000\">2.50×</td>") != std::string::npos);
    QVERIFY(html.find("1.00× (baseline)") != std::string::npos);
    QVERIFY(html.find("<code>trainer.precision</code>") != std::string::npos);
    QVERIFY(html.find("<code>trainer.max_epochs</code>") == std::string::npos);   // the same in both

    page = report::loadComparisonPage(store, {completed_, fast_}, fast_);
    runs = QJsonDocument::fromJson(QByteArray::fromStdString(report::comparisonPageData(page))).object()["runs"].toArray();
    QCOMPARE(runs[0].toObject()["speedup"].toDouble(), 0.4);
    QVERIFY_THROWS_EXCEPTION(StoreError, report::loadComparisonPage(store, {completed_, fast_}, long_));
    // A failed run without a training time has no speedup, and the page says so.
    page = report::loadComparisonPage(store, {completed_, failed_});
    QVERIFY(report::comparisonPageHtml(page).find("is failed (the loss became NaN at step 5): it shows what it stored, "
                                                  "without a training time or speedup.") != std::string::npos);
}

void ReportPagesTest::differingSettingsFollowTheSchema() {
    const auto d = report::differingSettings({R"({"name":"a","trainer":{"precision":"bf16-mixed"},"data":{"limit":10}})",
                                              R"({"name":"b","trainer":{"precision":"32-true"}})"});
    QCOMPARE(d.size(), size_t(2));
    QCOMPARE(d[0].key, std::string("data.limit"));   // data before trainer, as in the schema
    QCOMPARE(d[0].values, (std::vector<std::string>{"10", "null"}));
    QCOMPARE(d[1].key, std::string("trainer.precision"));
    QCOMPARE(report::differingSettings({R"({"name":"a"})", R"({"name":"b"})"}, true).front().key, std::string("name"));
    // A config this build cannot read is compared as it is.
    const auto unknown = report::differingSettings({R"({"future":{"key":1}})", R"({"future":{"key":2}})"});
    QCOMPARE(unknown.size(), size_t(1));
    QCOMPARE(unknown[0].key, std::string("future.key"));
    const auto ran = report::differingEffective({{{"a", "1"}, {"b", "x"}}, {{"a", "1"}, {"b", "y"}}});
    QCOMPARE(ran.size(), size_t(1));
    QCOMPARE(ran[0].key, std::string("b"));
    // Each run's checkpoints go to its own folder: that tells no runs apart; another monitor does.
    const std::map<std::string, std::string> first{
        {"trainer.checkpoint", "val_acc (max) -> /d/runs.sqlite.artifacts/4/best.pt"},
        {"trainer.safety_checkpoint", "every 10 min and at a stop, last 1 kept -> /d/runs.sqlite.artifacts/4/state-<step>.pt"}};
    std::map<std::string, std::string> second{
        {"trainer.checkpoint", "val_acc (max) -> /d/runs.sqlite.artifacts/15/best.pt"},
        {"trainer.safety_checkpoint", "every 10 min and at a stop, last 1 kept -> /d/runs.sqlite.artifacts/15/state-<step>.pt"}};
    QVERIFY(report::differingEffective({first, second}).empty());
    second["trainer.checkpoint"] = "val_loss (min) -> /d/runs.sqlite.artifacts/15/best.pt";
    const auto monitor = report::differingEffective({first, second});
    QCOMPARE(monitor.size(), size_t(1));
    QCOMPARE(monitor[0].values[1], second["trainer.checkpoint"]);   // shown as it is
    // A setting that did nothing differs in neither its reason nor its absence from an older run,
    // which recorded fewer; one that ran differs from both.
    const std::map<std::string, std::string> older{{"trainer.precision", "32-true (float32)"}};
    const std::map<std::string, std::string> newer{
        {"trainer.precision", "32-true (float32)"},
        {"trainer.fsdp.prefetch", "n/a: only zero3 gathers parameters by block (trainer.strategy is auto)"}};
    std::map<std::string, std::string> ddp = newer;
    ddp["trainer.fsdp.prefetch"] = "n/a: only zero3 gathers parameters by block (trainer.strategy is ddp)";
    QVERIFY(report::differingEffective({older, newer, ddp}).empty());
    std::map<std::string, std::string> zero3 = newer;
    zero3["trainer.fsdp.prefetch"] = "on (the next unit's parameters are gathered during this one's)";
    const auto ran_it = report::differingEffective({older, newer, zero3});
    QCOMPARE(ran_it.size(), size_t(1));
    QCOMPARE(ran_it[0].values, (std::vector<std::string>{"", newer.at("trainer.fsdp.prefetch"), zero3["trainer.fsdp.prefetch"]}));
}

void ReportPagesTest::comparisonThinsLongCurvesKeepingExtremes() {
    const RunStore store(db_);
    const auto page = report::loadComparisonPage(store, {completed_, long_});
    QCOMPARE(page.point_cap, 10000);
    const auto& thinned = page.runs[1];
    QCOMPARE(thinned.stored_steps, int64_t(25000));
    QVERIFY(thinned.steps.size() <= size_t(page.point_cap));
    QVERIFY(thinned.steps.size() > size_t(page.point_cap / 2));
    QCOMPARE(thinned.steps.front().global_step, int64_t(1));
    QCOMPARE(thinned.steps.back().global_step, int64_t(25000));
    QVERIFY(std::any_of(thinned.steps.begin(), thinned.steps.end(), [](const StepMetrics& s) { return s.loss == 9.5; }));
    QCOMPARE(page.runs[0].steps.size(), size_t(30));   // short curves keep every step
    QCOMPARE(report::comparisonPointCap(100), 4000);
    QCOMPARE(report::comparisonPointCap(1000), 400);
    QCOMPARE(report::curvePointCap(2), 2000);
    const std::vector<double> v = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
    const auto keep = report::decimatedIndices(int64_t(v.size()), 6, [&](int64_t i) { return v[size_t(i)]; });
    QCOMPARE(keep.front(), int64_t(0));
    QCOMPARE(keep.back(), int64_t(15));
    QVERIFY(std::is_sorted(keep.begin(), keep.end()));
}

void ReportPagesTest::sweepRunsComeInTheOrderTheyRan() {
    const RunStore store(db_);
    std::string name;
    QCOMPARE(report::sweepRunIds(store, 1, &name), (std::vector<int64_t>{completed_, fast_}));
    QCOMPARE(name, std::string("cnn ladder"));
    QVERIFY_THROWS_EXCEPTION(StoreError, report::sweepRunIds(store, 42));
}

void ReportPagesTest::dataWaitShareUsesTheBreakdown() {
    // epochEvent: data wait 0.5 ms of a 36 ms step (epoch 1; epoch 0 is the warm-up).
    const auto share = report::dataWaitShare({epochEvent(0, 0.5), epochEvent(1, 0.6)});
    QVERIFY(share.has_value());
    QCOMPARE(*share, 0.5 / 36.0);
    EpochMetrics unprofiled = epochEvent(0, 0.5);
    unprofiled.breakdown = {};
    QCOMPARE(*report::dataWaitShare({unprofiled}), 0.125);
    QVERIFY(!report::dataWaitShare({}).has_value());
    RunSummary a, b;
    a.train_time_s = 10.0;
    QVERIFY(!report::speedup(a, b).has_value());
    b.train_time_s = 4.0;
    QCOMPARE(*report::speedup(a, b), 2.5);   // no throughput (an older store): the training times
    // With throughputs, theirs: b trained a third of a's epochs at 1.25x its speed, which its
    // training time alone would call 2.5x.
    a.samples_per_sec = 1000.0;
    b.samples_per_sec = 1250.0;
    QCOMPARE(*report::speedup(a, b), 1.25);
    QCOMPARE(*report::speedup(b, a), 0.8);
}

// A memory ladder's comparison page carries its table: each step's peak (the largest process's),
// its change against the step before, rank 0's activations, and the time against the baseline.
void ReportPagesTest::memoryLadderPageShowsItsTable() {
    const std::string db = dir_.filePath("memory-ladder.sqlite").toStdString();
    std::vector<int64_t> ids;
    {
        RunWriter writer(db);
        const int64_t sweep = writer.createSweep("cnn memory ladder", "memory-ladder");
        const int64_t peaks[] = {400 << 20, 300 << 20};
        const int64_t activations[] = {100 << 20, 40 << 20};
        const double times[] = {10.0, 14.0};
        for (int i = 0; i < 2; ++i) {
            const std::string name = i == 0 ? "baseline" : "checkpointing";
            const int64_t id = writer.createRun(name, "", sweep);
            RunStarted started = startedEvent(name);
            writer.enqueue(id, started);
            RunFinished finished = finishedEvent();
            finished.peak_memory_bytes = peaks[i];
            finished.memory.activations_bytes = activations[i];
            finished.train_time_s = times[i];
            writer.enqueue(id, finished);
            ids.push_back(id);
        }
        writer.flush();
    }
    const RunStore store(db);
    const auto page = report::loadComparisonPage(store, ids);
    QCOMPARE(page.sweep_kind, std::string("memory-ladder"));
    QVERIFY(!page.ladder);
    QVERIFY(page.memory_ladder);
    const auto& rows = page.memory_ladder->rows;
    QCOMPARE(rows.size(), size_t{2});
    QCOMPARE(rows[0].peak_bytes, int64_t{400} << 20);
    QVERIFY(!rows[0].peak_change);
    QCOMPARE(*rows[1].peak_change, -0.25);
    QCOMPARE(*rows[1].activations_bytes, int64_t{40} << 20);
    QCOMPARE(*rows[1].time_vs_baseline, 1.4);
    const std::string html = report::comparisonPageHtml(page);
    for (const char* part : {"id=\"memory-ladder\"", "The memory ladder", "400.0 MiB", "300.0 MiB", "-25.0%", "40.0 MiB",
                             "1.40×", "peak RSS during fit"})
        QVERIFY2(html.find(part) != std::string::npos, part);
}

// A card's value is one line that ellipsizes: the achieved model FLOPs are a number in their own
// card ("0.075 TFLOP/s (MFU …)" was cut to "0.075 TFL…"), the MFU another, only where it is known.
void ReportPagesTest::keyFiguresShowComputeAndMfuApart() {
    auto page = report::loadRunPage(RunStore(db_), completed_);
    page.run.summary.tflops = 412.34;
    page.run.summary.mfu = 0.417;
    std::string html = report::runPageHtml(page);
    const auto card = [](const std::string& value, const std::string& label) {
        return "\">" + value + "</div><div class=\"k\">" + label + "</div>";
    };
    QVERIFY(html.find(card("412.3", "TFLOP/s per device (model FLOPs)")) != std::string::npos);
    QVERIFY(html.find(card("41.7 %", "MFU (model FLOPs utilisation)")) != std::string::npos);
    page.run.summary.mfu.reset();   // a CPU: no peak to measure against
    html = report::runPageHtml(page);
    QVERIFY(html.find(card("412.3", "TFLOP/s per device (model FLOPs)")) != std::string::npos);
    QVERIFY(html.find("MFU (model FLOPs utilisation)") == std::string::npos);
}


// Compare, `hearth-cli compare` and the comparison page show a ladder's judgement only when every
// run compared is of that one ladder: not for a ladder's run beside another run, two ladders' runs,
// or a grid sweep's.
void ReportPagesTest::runsAreOneLadderOnlyWhenEveryRunIsOfIt() {
    const std::string db = dir_.filePath("which-ladder.sqlite").toStdString();
    int64_t ladder = 0, other_ladder = 0, grid = 0;
    std::vector<int64_t> ladder_runs, grid_runs;
    int64_t lone = 0, other = 0;
    {
        RunWriter writer(db);
        ladder = writer.createSweep("cnn ladder", "ladder");
        ladder_runs.push_back(writeRun(writer, "baseline", config("32-true", 0.001), 12.0, 30, ladder));
        ladder_runs.push_back(writeRun(writer, "bf16", config("bf16-mixed", 0.001), 6.0, 30, ladder));
        other_ladder = writer.createSweep("mlp ladder", "ladder");
        other = writeRun(writer, "baseline", config("32-true", 0.001), 11.0, 30, other_ladder);
        grid = writer.createSweep("lr grid", "grid");
        grid_runs.push_back(writeRun(writer, "lr=0.001", config("32-true", 0.001), 12.0, 30, grid));
        grid_runs.push_back(writeRun(writer, "lr=0.01", config("32-true", 0.01), 12.0, 30, grid));
        lone = writeRun(writer, "by hand", config("32-true", 0.001), 9.0, 30);
        writer.flush();
    }
    const RunStore store(db);
    // ladderOfRuns, commonSweep: of the stored runs `ids`
    const auto of = [&](const std::vector<int64_t>& ids, auto&& ask) {
        std::vector<RunSummary> runs;
        runs.reserve(ids.size());
        for (int64_t id : ids) runs.push_back(*store.run(id));
        std::vector<const RunSummary*> pointers;
        pointers.reserve(runs.size());
        for (const auto& run : runs) pointers.push_back(&run);
        return ask(pointers);
    };
    const auto ladder_of = [&](const std::vector<int64_t>& ids) {
        return of(ids, [&](const auto& runs) { return ladderOfRuns(store, runs); });
    };
    const auto sweep_of = [&](const std::vector<int64_t>& ids) {
        return of(ids, [](const auto& runs) { return commonSweep(runs); });
    };
    const auto of_ladder = ladder_of(ladder_runs);
    QVERIFY(of_ladder);
    QCOMPARE(of_ladder->summary.sweep_id, ladder);
    QCOMPARE(of_ladder->summary.steps.size(), size_t{2});
    QVERIFY(!of_ladder->memory);
    QCOMPARE(sweep_of(ladder_runs), std::optional<int64_t>(ladder));

    QVERIFY(!ladder_of({ladder_runs[0], lone}));
    QVERIFY(!sweep_of({ladder_runs[0], lone}));
    QVERIFY(!ladder_of({lone, ladder_runs[0]}));
    QVERIFY(!ladder_of({ladder_runs[0], other}));
    QVERIFY(!ladder_of(grid_runs));
    QCOMPARE(sweep_of(grid_runs), std::optional<int64_t>(grid));
    QVERIFY(!ladder_of({}));

    const auto mixed = report::loadComparisonPage(store, {ladder_runs[0], ladder_runs[1], lone});
    QVERIFY(!mixed.ladder);
    QCOMPARE(mixed.title, std::string("3 runs compared"));
    const auto whole = report::loadComparisonPage(store, ladder_runs);
    QVERIFY(whole.ladder);
    QCOMPARE(whole.title, std::string("Sweep #1: cnn ladder"));
    const auto grid_page = report::loadComparisonPage(store, grid_runs);
    QVERIFY(!grid_page.ladder && !grid_page.memory_ladder);
    QCOMPARE(grid_page.sweep_kind, std::string("grid"));
}

QTEST_GUILESS_MAIN(ReportPagesTest)
#include "test_report_pages.moc"
