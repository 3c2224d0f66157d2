// hearth-cli's history commands (runs, show, compare, export, tag, note, rename, delete) on a
// database written by the real RunWriter: output, files, exit codes.
#include "StoreTestEvents.h"
#include "StoreCommands.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

using namespace hearth;
using namespace hearth::testing;

namespace {

struct Result {
    int code = -1;
    std::string out, err;
    bool has(const std::string& part) const { return out.find(part) != std::string::npos; }
    bool errHas(const std::string& part) const { return err.find(part) != std::string::npos; }
    // "key = value" in an aligned key/value listing (keys are padded to one width).
    bool hasSetting(const std::string& key, const std::string& value) const {
        return std::regex_search(out, std::regex("\\n  " + key + " *= " + value));
    }
};

// Parses and runs `args` the way hearth-cli's main does, with captured streams.
Result runCli(const std::vector<std::string>& args, const std::string& stdin_text = {}) {
    CLI::App app{"hearth-cli", "hearth-cli"};
    app.require_subcommand(1);
    std::string db;
    app.add_option("--db", db);
    int exit_code = 0;
    std::istringstream in(stdin_text);
    std::ostringstream out, err;
    cli::StoreCommandContext context{db};
    context.in = &in;
    context.out = &out;
    context.err = &err;
    cli::registerStoreCommands(app, context, exit_code);
    std::vector<std::string> argv_text{"hearth-cli"};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    Result result;
    try {
        app.parse(static_cast<int>(argv.size()), argv.data());
        result.code = exit_code;
    } catch (const CLI::ParseError& e) {
        result.code = app.exit(e, out, err) == 0 ? 0 : 2;
    }
    result.out = out.str();
    result.err = err.str();
    return result;
}

struct StoredRunIds {
    int64_t cnn = 0, mlp = 0, broken = 0;
};

StoredRunIds writeHistory(const std::string& path) {
    StoredRunIds ids;
    RunWriter writer(path);
    auto addRun = [&](const std::string& name, const std::string& precision, double lr, double train_time) {
        const int64_t id = writer.createRun(name, "");
        RunStarted started = startedEvent(name);
        started.config_json = R"({"name":")" + name + R"(","optimizer":{"lr":)" + std::to_string(lr) +
                              R"(},"trainer":{"max_epochs":2,"precision":")" + precision + R"("}})";
        writer.enqueue(id, started);
        for (int64_t i = 0; i < 30; ++i) {
            writer.enqueue(id, stepEvent(i, 15));
            if (i % 15 == 14) writer.enqueue(id, epochEvent(i / 15, 0.75 + 0.125 * static_cast<double>(i / 15)));
        }
        writer.enqueue(id, reportEvent("val", 100));
        writer.enqueue(id, reportEvent("test", 120));
        writer.enqueue(id, predictionsEvent("test", 120));
        RunFinished finished = finishedEvent();
        finished.train_time_s = train_time;
        finished.samples_per_sec = 60000.0 / train_time;   // the same samples in each
        writer.enqueue(id, finished);
        return id;
    };
    ids.cnn = addRun("fashion-cnn", "32-true", 0.001, 12.5);
    ids.mlp = addRun("fashion-mlp", "bf16-mixed", 0.01, 6.25);
    ids.broken = writer.createRun("broken", "{}");
    writer.enqueue(ids.broken, RunFailed{FailureKind::Data, "cannot read /nowhere/train.csv", ""});
    writer.flush();
    RunStore(path).setTags(ids.cnn, {"baseline"});
    return ids;
}

// RFC 4180: rows of fields; quoted fields may hold commas, quotes ("") and line breaks.
std::vector<std::vector<std::string>> parseCsv(const std::string& text) {
    std::vector<std::vector<std::string>> rows(1);
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += text[++i];
            else if (c == '"') quoted = false;
            else field += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().push_back(field);
            field.clear();
        } else if (c == '\n') {
            rows.back().push_back(field);
            field.clear();
            rows.emplace_back();
        } else {
            field += c;
        }
    }
    if (rows.back().empty()) rows.pop_back();
    return rows;
}

}  // namespace

class CliStoreTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    std::string db_;
    StoredRunIds ids_;
    std::string id(int64_t value) const { return std::to_string(value); }

private Q_SLOTS:
    void initTestCase();
    void runsListsNewestFirstWithMetrics();
    void runsFiltersByStatusTagNameAndLimit();
    void showPrintsConfigEnvironmentReportAndConfusion();
    void compareListsDifferingKeysMetricsAndSpeedup();
    void exportCsvFollowsLightningLayout();
    void exportJsonMarkdownAndHtml();
    void exportTensorBoardWritesARunDirectory();
    void exportHtmlReportHoldsEveryStep();
    void exportComparesRunsAndSweeps();
    void exportPdfSaysWhatToInstallWithoutABrowser();
    void exportHtmlShowsTheMisclassifiedTexts();
    void tagNoteAndRenameEditTheRun();
    void deleteAsksAndRefusesWithoutAnswer();
    void unknownOrAmbiguousRunExitsTwo();
    void unreadableDatabaseExitsThree();
    void builtBinaryKeepsExitCodes();
    void runsCsvIsOneRowPerRunWithTheConfigFlattened();
};

void CliStoreTest::initTestCase() {
    QVERIFY(dir_.isValid());
    db_ = dir_.filePath("history.sqlite").toStdString();
    ids_ = writeHistory(db_);
}

void CliStoreTest::runsListsNewestFirstWithMetrics() {
    const Result r = runCli({"runs", "--db", db_});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.has("BEST VAL ACC") && r.has("SAMPLES/S") && r.has("TRAIN TIME"), r.out.c_str());
    const auto broken = r.out.find("broken"), mlp = r.out.find("fashion-mlp"), cnn = r.out.find("fashion-cnn");
    QVERIFY(broken < mlp && mlp < cnn);
    // The tags beside the name, as the History has them.
    QVERIFY2(std::regex_search(r.out, std::regex("\\n *" + id(ids_.cnn) + "  fashion-cnn  +baseline  +completed")),
             r.out.c_str());
    QVERIFY2(r.has("0.8750") && r.has("0.8500") && r.has("12.5 s") && r.has("6.2 s"), r.out.c_str());
    // The app-level --db (how `hearth-cli --db X runs` arrives) works the same.
    QCOMPARE(runCli({"--db", db_, "runs"}).out, r.out);
}

void CliStoreTest::runsFiltersByStatusTagNameAndLimit() {
    Result r = runCli({"runs", "--db", db_, "--status", "failed"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.has("broken") && !r.has("fashion"));
    r = runCli({"runs", "--db", db_, "--tag", "baseline"});
    QVERIFY(r.has("fashion-cnn") && !r.has("fashion-mlp"));
    r = runCli({"runs", "--db", db_, "--name", "MLP"});
    QVERIFY(r.has("fashion-mlp") && !r.has("fashion-cnn"));
    r = runCli({"runs", "--db", db_, "--limit", "1"});
    QVERIFY(r.has("broken") && !r.has("fashion"));
    r = runCli({"runs", "--db", db_, "--limit", "0"});   // 0: every run
    QVERIFY(r.has("broken") && r.has("fashion-cnn") && r.has("fashion-mlp"));
    r = runCli({"runs", "--db", db_, "--status", "exploded"});
    QCOMPARE(r.code, 2);
    // In words, not CLI11's "Value -3 not in range 0.000000 to 17976931348623157..." (a double's bounds).
    r = runCli({"runs", "--db", db_, "--limit", "-3"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.errHas("--limit: -3 is too small: 0 or more (0: every run)"), r.err.c_str());
    r = runCli({"export", "--sweep", "none", "--format", "html", "--out", "-", "--db", db_});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.errHas("--sweep: 'none' is not a whole number: 1 or more") && !r.errHas("1797693"), r.err.c_str());
}

void CliStoreTest::showPrintsConfigEnvironmentReportAndConfusion() {
    const Result r = runCli({"show", id(ids_.mlp), "--db", db_});
    QCOMPARE(r.code, 0);
    const auto report = reportEvent("test", 120).report;
    QVERIFY2(r.has("Run #" + id(ids_.mlp) + " fashion-mlp [completed]"), r.out.c_str());
    QVERIFY2(r.hasSetting("trainer\\.precision", "bf16-mixed"), r.out.c_str());
    QVERIFY2(r.hasSetting("optimizer\\.lr", "0\\.01"), r.out.c_str());
    QVERIFY(r.has("Effective settings") && r.hasSetting("trainer\\.pin_memory", "n/a on CPU"));
    // Config lists the keys set away from their defaults; --all lists every key the run stored.
    const Result cnn = runCli({"show", id(ids_.cnn), "--db", db_});
    QVERIFY2(cnn.has("Config (the keys set; 3 more at their defaults: `hearth-cli show " + id(ids_.cnn) +
                     " --all` lists all 4)") && cnn.hasSetting("trainer\\.max_epochs", "2"),
             cnn.out.c_str());
    const std::string config = cnn.out.substr(cnn.out.find("\nConfig"), cnn.out.find("\nEffective settings") -
                                                                          cnn.out.find("\nConfig"));
    QVERIFY2(config.find("optimizer.lr") == std::string::npos && config.find("trainer.precision") == std::string::npos &&
                 config.find("name ") == std::string::npos,
             config.c_str());
    const Result all = runCli({"show", id(ids_.cnn), "--all", "--db", db_});
    QVERIFY2(all.hasSetting("optimizer\\.lr", "0\\.001") && all.hasSetting("trainer\\.precision", "32-true") &&
                 all.hasSetting("name", "fashion-cnn"),
             all.out.c_str());
    if (qEnvironmentVariableIsSet("HEARTH_SHOW_OUTPUT")) qInfo("%s", r.out.c_str());
    QVERIFY(r.has("LibTorch 1.13.1"));
    QVERIFY(r.has("train time") && r.has("6.2 s"));
    QVERIFY2(r.has(report.toText()), "the classification report is printed as sklearn lays it out");
    QVERIFY(r.has(report.confusionText()));
    const Result broken = runCli({"show", id(ids_.broken), "--db", db_});
    QVERIFY(broken.has("cannot read /nowhere/train.csv") && broken.has("\nConfig: none stored\n"));
}

void CliStoreTest::compareListsDifferingKeysMetricsAndSpeedup() {
    const Result r = runCli({"compare", id(ids_.cnn), "fashion-m", "--db", db_});
    QCOMPARE(r.code, 0);
    // The keys in the key table's order, as Compare and the HTML comparison list them; the runs'
    // names head the columns.
    QVERIFY2(r.has("optimizer.lr") && r.out.find("optimizer.lr") < r.out.find("trainer.precision"), r.out.c_str());
    QVERIFY2(r.has("#" + id(ids_.cnn) + " fashion-cnn") && r.has("#" + id(ids_.mlp) + " fashion-mlp"), r.out.c_str());
    QVERIFY2(!r.has("trainer.max_epochs"), "identical keys are not listed");
    QVERIFY(r.has("speedup vs #" + id(ids_.cnn)));
    if (qEnvironmentVariableIsSet("HEARTH_SHOW_OUTPUT")) qInfo("%s", (runCli({"runs", "--db", db_}).out + r.out).c_str());
    QVERIFY2(r.has("1.00x") && r.has("2.00x"), r.out.c_str());   // 12.5 s vs 6.25 s
    QCOMPARE(runCli({"compare", id(ids_.cnn), "--db", db_}).code, 2);
}

void CliStoreTest::exportCsvFollowsLightningLayout() {
    const std::string out = dir_.filePath("metrics.csv").toStdString();
    QCOMPARE(runCli({"export", id(ids_.cnn), "--format", "csv", "--out", out, "--db", db_}).code, 0);
    std::ifstream in(out);
    std::string header, line;
    std::getline(in, header);
    QVERIFY2(header.rfind("epoch,step,train_loss,train_acc,lr,", 0) == 0, header.c_str());
    // The columns come from the event field tables: find them by name.
    std::vector<std::string> names;
    {
        std::stringstream header_in(header);
        for (std::string name; std::getline(header_in, name, ',');) names.push_back(name);
    }
    auto column = [&names](const std::string& name) {
        return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
    };
    for (const char* name : {"val_loss", "val_acc", "train_loss_epoch", "train_acc_epoch", "samples_per_sec",
                             "step_time_ms", "data_wait_ms", "epoch_time_s", "loss_scale", "skipped_steps", "tflops", "mfu"})
        QVERIFY2(column(name) < names.size(), (std::string(name) + " in " + header).c_str());
    std::vector<std::vector<std::string>> rows;
    while (std::getline(in, line)) {
        std::vector<std::string> cells;
        std::stringstream cells_in(line);
        for (std::string cell; std::getline(cells_in, cell, ',');) cells.push_back(cell);
        cells.resize(names.size());   // getline drops a trailing empty cell
        rows.push_back(cells);
    }
    QCOMPARE(rows.size(), size_t{30 + 2});               // 30 logged steps + 2 epoch rows
    QCOMPARE(rows[0][0], std::string("0"));
    QCOMPARE(rows[0][1], std::string("0"));              // Lightning's 0-based step
    QVERIFY(!rows[0][2].empty() && rows[0][column("val_loss")].empty());  // a step row: train metrics, no val
    QCOMPARE(std::stod(rows[0][2]), stepEvent(0, 15).loss);
    const auto& epoch_row = rows[15];                    // after the 15th step of epoch 0
    QCOMPARE(epoch_row[0], std::string("0"));
    QCOMPARE(epoch_row[1], std::string("14"));
    QVERIFY(epoch_row[2].empty());
    QCOMPARE(std::stod(epoch_row[column("val_acc")]), 0.75);
}

void CliStoreTest::exportJsonMarkdownAndHtml() {
    const QString json_path = dir_.filePath("run.json");
    QCOMPARE(runCli({"export", "fashion-c", "--format", "json", "--out", json_path.toStdString(), "--db", db_}).code, 0);
    QFile file(json_path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject j = QJsonDocument::fromJson(file.readAll()).object();
    QCOMPARE(j["run"].toObject()["name"].toString(), QString("fashion-cnn"));
    QCOMPARE(j["steps"].toArray().size(), 30);
    QCOMPARE(j["epochs"].toArray().size(), 2);
    QCOMPARE(j["predictions"].toObject()["test"].toArray().size(), 120);
    QCOMPARE(j["config"].toObject()["trainer"].toObject()["precision"].toString(), QString("32-true"));
    QVERIFY(j["reports"].toObject()["test"].toObject().contains("report"));

    RunStore(db_).rename(ids_.broken, "a <b> & c");
    const Result md = runCli({"export", id(ids_.cnn), "--format", "md", "-o", "-", "--db", db_});   // -o: --out
    QCOMPARE(md.code, 0);
    QVERIFY(md.has("# Run #" + id(ids_.cnn) + " fashion-cnn") && md.has("## Confusion matrix"));
    QVERIFY(md.has("| cat | dog | bird |") || md.has("|  | cat | dog | bird |"));
    QVERIFY(md.has("| trainer.precision | 32-true |"));
    const Result html = runCli({"export", id(ids_.broken), "--format", "html", "--out", "-", "--db", db_});
    QVERIFY(html.has("<title>Run #" + id(ids_.broken) + " a &lt;b&gt; &amp; c</title>"));
    // The failed run still exports, saying what it lacks and why.
    QVERIFY(html.has("<div class=\"missing\" id=\"missing\">"));
    QVERIFY2(html.has("No test report: the run failed before testing."), html.out.c_str());
    QVERIFY(html.has("cannot read /nowhere/train.csv"));
    RunStore(db_).rename(ids_.broken, "broken");

    const Result unwritable_pdf = runCli({"export", id(ids_.cnn), "--format", "pdf", "--out", "-", "--db", db_});
    QCOMPARE(unwritable_pdf.code, 2);
    QVERIFY(unwritable_pdf.errHas("--format pdf writes a file"));
    const Result unwritable = runCli({"export", id(ids_.cnn), "--format", "csv", "--out", "/proc/no/such/file", "--db", db_});
    QCOMPARE(unwritable.code, 2);
    QVERIFY(unwritable.errHas("/proc/no/such/file"));
}

void CliStoreTest::exportTensorBoardWritesARunDirectory() {
    const QString out = dir_.filePath("tb");
    const Result r = runCli({"export", id(ids_.cnn), "--format", "tensorboard", "--out", out.toStdString(), "--db", db_});
    QCOMPARE(r.code, 0);
    const QString run_dir = out + "/" + QString::fromStdString(id(ids_.cnn)) + "-fashion-cnn";
    QVERIFY(r.has("Exported run #" + id(ids_.cnn) + " for TensorBoard to " + run_dir.toStdString() + " (30 steps, 2 epochs"));
    QVERIFY(r.has("tensorboard --logdir " + out.toStdString()));
    const QStringList files = QDir(run_dir).entryList({"events.out.tfevents.*"}, QDir::Files);
    QCOMPARE(files.size(), 1);
    QVERIFY(QFileInfo(run_dir + "/" + files[0]).size() > 30 * 50);

    const Result to_stdout = runCli({"export", id(ids_.cnn), "--format", "tensorboard", "--out", "-", "--db", db_});
    QCOMPARE(to_stdout.code, 2);
    QVERIFY(to_stdout.errHas("--out DIR"));
    const Result unwritable = runCli({"export", id(ids_.cnn), "--format", "tensorboard", "--out", "/proc/no/such", "--db", db_});
    QCOMPARE(unwritable.code, 2);
    QVERIFY(unwritable.errHas("Cannot create the directory '/proc/no/such/"));
}

void CliStoreTest::exportHtmlReportHoldsEveryStep() {
    const QString path = dir_.filePath("run.html");
    const Result r = runCli({"export", id(ids_.cnn), "--format", "html", "--out", path.toStdString(), "--db", db_});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.has("Exported run #" + id(ids_.cnn) + " (30 steps, 18 misclassified samples) to " + path.toStdString()), r.out.c_str());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const std::string html = file.readAll().toStdString();
    const std::string open = "id=\"hearth-data\">";
    const auto begin = html.find(open) + open.size();
    const QJsonObject data =
        QJsonDocument::fromJson(QByteArray::fromStdString(html.substr(begin, html.find("</script>", begin) - begin))).object();
    QCOMPARE(data["steps"].toObject()["step"].toArray().size(), 30);
    QVERIFY(html.find("id=\"chart-loss\"") != std::string::npos && html.find("id=\"confusion\"") != std::string::npos);
    QVERIFY(html.find("Content-Security-Policy") != std::string::npos);
}

void CliStoreTest::exportComparesRunsAndSweeps() {
    const QString path = dir_.filePath("compare.html");
    Result r = runCli({"export", id(ids_.cnn), "fashion-m", "--format", "html", "--out", path.toStdString(), "--db", db_});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.has("Exported the comparison of 2 runs to " + path.toStdString()), r.out.c_str());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString html = QString::fromUtf8(file.readAll());
    QVERIFY(html.contains("<title>2 runs compared</title>"));
    QVERIFY(html.contains("<td data-sort=\"2.000000\">2.00×</td>"));   // 12.5 s against 6.25 s
    QVERIFY(html.contains("<code>trainer.precision</code>") && html.contains("<code>optimizer.lr</code>"));

    r = runCli({"export", id(ids_.cnn), id(ids_.mlp), "--baseline", id(ids_.mlp), "--format", "html", "--out", "-", "--db", db_});
    QCOMPARE(r.code, 0);
    QVERIFY(r.has("<td data-sort=\"0.500000\">0.50×</td>"));
    QCOMPARE(runCli({"export", id(ids_.cnn), id(ids_.mlp), "--format", "md", "--out", "-", "--db", db_}).code, 2);
    r = runCli({"export", "--sweep", "7", "--format", "html", "--out", "-", "--db", db_});
    QCOMPARE(r.code, 2);
    QVERIFY(r.errHas("belongs to sweep #7"));
    r = runCli({"export", id(ids_.cnn), id(ids_.mlp), "--baseline", id(ids_.broken), "--format", "html", "--out", "-",
                "--db", db_});
    QCOMPARE(r.code, 2);
    QVERIFY(r.errHas("is not one of the runs compared"));
    QCOMPARE(runCli({"export", "--format", "html", "--out", "-", "--db", db_}).code, 2);
}

void CliStoreTest::exportPdfSaysWhatToInstallWithoutABrowser() {
    const QByteArray saved = qgetenv("HEARTH_BROWSER");
    qputenv("HEARTH_BROWSER", "/nonexistent/chromium");
    const Result r = runCli({"export", id(ids_.cnn), "--format", "pdf", "--out", dir_.filePath("r.pdf").toStdString(), "--db", db_});
    if (saved.isNull()) qunsetenv("HEARTH_BROWSER");
    else qputenv("HEARTH_BROWSER", saved);
    QCOMPARE(r.code, 2);
    QVERIFY2(r.errHas("$HEARTH_BROWSER ('/nonexistent/chromium') is not an executable program") && r.errHas("--format html"),
             r.err.c_str());
    QVERIFY(!QFileInfo::exists(dir_.filePath("r.pdf")));
}

// A text model's report shows the texts it got wrong, read back from the run's CSV (the index
// counts the test file's rows); a file that is gone leaves the labels and says why.
void CliStoreTest::exportHtmlShowsTheMisclassifiedTexts() {
    const QString csv = dir_.filePath("reviews.csv");
    {
        QFile file(csv);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("text,label\n");
        for (int i = 0; i < 120; ++i) file.write(QStringLiteral("\"review number %1, <b>bold</b>\",pos\n").arg(i).toUtf8());
    }
    const std::string db = dir_.filePath("texts.sqlite").toStdString();
    int64_t id = 0;
    {
        RunWriter writer(db);
        id = writer.createRun("texts", "");
        RunStarted started = startedEvent("texts");
        started.config_json = R"({"data":{"kind":"text_csv","path":")" + csv.toStdString() + R"(","test_path":")" +
                              csv.toStdString() + R"("},"model":{"name":"distilbert"}})";
        writer.enqueue(id, started);
        writer.enqueue(id, reportEvent("test", 120));
        writer.enqueue(id, predictionsEvent("test", 120));   // every 7th is wrong: rows 0, 7, ..., 119
        writer.enqueue(id, finishedEvent());
        writer.flush();
    }
    Result r = runCli({"export", std::to_string(id), "--format", "html", "--out", "-", "--db", db});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.has("<q>review number 119, &lt;b&gt;bold&lt;/b&gt;</q>"), "the most confident mistake's text, escaped");
    QVERIFY(r.has("<q>review number 7, "));
    QVERIFY(!r.has("The samples' texts are not shown"));
    QFile::remove(csv);
    r = runCli({"export", std::to_string(id), "--format", "html", "--out", "-", "--db", db});
    QCOMPARE(r.code, 0);
    QVERIFY(r.has("The samples&#39; texts are not shown: the run&#39;s data cannot be read here ("));
    QVERIFY(!r.has("<q>review number"));
}

void CliStoreTest::tagNoteAndRenameEditTheRun() {
    QCOMPARE(runCli({"tag", id(ids_.mlp), "fast", "bf16", "--db", db_}).code, 0);
    QCOMPARE(runCli({"tag", id(ids_.mlp), "bf16", "--remove", "--db", db_}).code, 0);
    QCOMPARE(runCli({"note", id(ids_.mlp), "twice", "as", "fast", "--db", db_}).code, 0);
    QCOMPARE(runCli({"rename", id(ids_.mlp), "mlp-bf16", "--db", db_}).code, 0);
    const auto run = RunStore(db_).run(ids_.mlp);
    QCOMPARE(run->tags, std::vector<std::string>{"fast"});
    QCOMPARE(run->notes, std::string("twice as fast"));
    QCOMPARE(run->name, std::string("mlp-bf16"));
    // Tags and names as they get typed: commas separate tags as the History lists them, blanks
    // around them go, a name stays on one line (a line break would split the runs table's row).
    QCOMPARE(runCli({"tag", id(ids_.mlp), "a, b", " c ", "", ",", "--db", db_}).code, 0);
    QCOMPARE(RunStore(db_).run(ids_.mlp)->tags, (std::vector<std::string>{"a", "b", "c", "fast"}));
    QCOMPARE(runCli({"tag", id(ids_.mlp), "a,c", "--remove", "--db", db_}).code, 0);
    QCOMPARE(RunStore(db_).run(ids_.mlp)->tags, (std::vector<std::string>{"b", "fast"}));
    Result r = runCli({"rename", id(ids_.mlp), " mlp\nbf16\t", "--db", db_});
    QVERIFY2(r.code == 0 && r.has("is now 'mlp bf16'"), r.out.c_str());
    QCOMPARE(RunStore(db_).run(ids_.mlp)->name, std::string("mlp bf16"));
    r = runCli({"rename", id(ids_.mlp), " \t ", "--db", db_});
    QVERIFY2(r.code == 2 && r.errHas("A run's name cannot be blank."), r.err.c_str());
    QCOMPARE(RunStore(db_).run(ids_.mlp)->name, std::string("mlp bf16"));
    QVERIFY_THROWS_EXCEPTION(StoreError, RunStore(db_).rename(ids_.mlp, "\n"));   // the store's own rule
    QCOMPARE(runCli({"rename", id(ids_.mlp), "fashion-mlp", "--db", db_}).code, 0);
    QCOMPARE(runCli({"tag", id(ids_.mlp), "b", "--remove", "--db", db_}).code, 0);
}

void CliStoreTest::deleteAsksAndRefusesWithoutAnswer() {
    int64_t victim = 0;
    {
        RunWriter writer(db_);
        victim = writer.createRun("victim", "{}");
        writer.enqueue(victim, finishedEvent());
    }
    Result r = runCli({"delete", id(victim), "--db", db_});   // stdin at EOF
    QCOMPARE(r.code, 2);
    QVERIFY2(r.errHas("--yes"), r.err.c_str());
    QVERIFY(RunStore(db_).run(victim).has_value());
    r = runCli({"delete", id(victim), "--db", db_}, "n\n");
    QCOMPARE(r.code, 0);
    QVERIFY(RunStore(db_).run(victim).has_value());
    r = runCli({"delete", id(victim), "--db", db_}, "y\n");
    QCOMPARE(r.code, 0);
    QVERIFY(!RunStore(db_).run(victim).has_value());

    RunWriter writer(db_);
    const int64_t live = writer.createRun("live", "{}");   // written by this (living) process
    r = runCli({"delete", id(live), "--yes", "--db", db_});
    QCOMPARE(r.code, 2);
    QVERIFY(r.errHas("still being written"));
    writer.enqueue(live, finishedEvent());
    writer.flush();
    QCOMPARE(runCli({"delete", id(live), "-y", "--db", db_}).code, 0);
    QVERIFY(!RunStore(db_).run(live).has_value());
}

void CliStoreTest::unknownOrAmbiguousRunExitsTwo() {
    Result r = runCli({"show", "999", "--db", db_});
    QCOMPARE(r.code, 2);
    QVERIFY(r.errHas("No run") && r.errHas("999"));
    r = runCli({"show", "fashion", "--db", db_});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.errHas("#" + id(ids_.cnn) + " fashion-cnn") && r.errHas("#" + id(ids_.mlp) + " fashion-mlp"),
             r.err.c_str());
    QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);   // one line
    QCOMPARE(runCli({"show", "--db", db_}).code, 2);               // missing RUN
}

void CliStoreTest::unreadableDatabaseExitsThree() {
    const std::string text_file = dir_.filePath("notes.txt").toStdString();
    std::ofstream(text_file) << std::string(4096, 'x');
    Result r = runCli({"runs", "--db", text_file});
    QCOMPARE(r.code, 3);
    QVERIFY(r.errHas(text_file) && r.errHas("not a SQLite database"));
    r = runCli({"show", "1", "--db", dir_.filePath("missing.sqlite").toStdString()});
    QCOMPARE(r.code, 3);
    QVERIFY(r.errHas("missing.sqlite"));
}

void CliStoreTest::builtBinaryKeepsExitCodes() {
    const QString cli = QStringLiteral(HEARTH_CLI_PATH);
    if (cli.isEmpty() || !QFile::exists(cli)) QSKIP("hearth-cli is not built in this configuration");
    auto run = [&](const QStringList& args, QByteArray* out = nullptr) {
        QProcess p;
        p.start(cli, args);
        p.closeWriteChannel();   // no terminal, no answer
        if (!p.waitForFinished(60000)) return -1;
        if (out) *out = p.readAllStandardOutput() + p.readAllStandardError();
        return p.exitCode();
    };
    const QString db = QString::fromStdString(db_);
    QByteArray output;
    QCOMPARE(run({"runs", "--db", db}, &output), 0);
    QVERIFY(output.contains("fashion-cnn"));
    QCOMPARE(run({"--db", db, "show", "fashion-c"}, &output), 0);
    QVERIFY(output.contains("Confusion matrix"));
    QCOMPARE(run({"show", "424242", "--db", db}), 2);
    QCOMPARE(run({"delete", QString::number(ids_.cnn), "--db", db}), 2);
    QVERIFY(RunStore(db_).run(ids_.cnn).has_value());
    QCOMPARE(run({"runs", "--db", dir_.filePath("notes.txt")}), 3);
}

void CliStoreTest::runsCsvIsOneRowPerRunWithTheConfigFlattened() {
    const std::string db = dir_.filePath("csv.sqlite").toStdString();
    const auto ids = writeHistory(db);
    RunStore(db).setNotes(ids.mlp, "said \"fast\", then\nslow");
    const std::string path = dir_.filePath("history.csv").toStdString();
    const Result r = runCli({"runs", "--db", db, "--csv", path});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.has("Wrote 3 run(s)"), r.out.c_str());
    std::ifstream file(path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const auto rows = parseCsv(text);
    QCOMPARE(rows.size(), size_t{4});   // the header and one row per run (the notes' line break is quoted)
    const auto& header = rows[0];
    const auto column = [&header](const std::string& name) {
        return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    };
    for (const char* name : {"id", "name", "status", "tags", "notes", "best_val_acc", "test_acc", "stop_reason",
                             "config.optimizer.lr", "config.trainer.precision", "config.trainer.max_epochs"})
        QVERIFY2(column(name) < header.size(), name);
    for (const auto& row : rows) QCOMPARE(row.size(), header.size());
    // Newest first, as `runs` lists them.
    QCOMPARE(rows[1][column("name")], std::string("broken"));
    QCOMPARE(rows[1][column("status")], std::string("failed"));
    QCOMPARE(rows[1][column("config.trainer.precision")], std::string());   // its config is {}
    QCOMPARE(rows[2][column("name")], std::string("fashion-mlp"));
    QCOMPARE(rows[2][column("notes")], std::string("said \"fast\", then\nslow"));
    QCOMPARE(rows[2][column("config.trainer.precision")], std::string("bf16-mixed"));
    QCOMPARE(rows[2][column("config.optimizer.lr")], std::string("0.01"));
    QCOMPARE(rows[3][column("tags")], std::string("baseline"));
    QCOMPARE(rows[3][column("config.trainer.precision")], std::string("32-true"));
    QCOMPARE(rows[3][column("best_val_acc")], std::string("0.875000"));
    // Filters apply; '-' writes to standard output.
    const Result filtered = runCli({"runs", "--db", db, "--tag", "baseline", "--csv", "-"});
    QCOMPARE(parseCsv(filtered.out).size(), size_t{2});
    const Result unwritable = runCli({"runs", "--db", db, "--csv", "/nonexistent/folder/h.csv"});
    QCOMPARE(unwritable.code, 2);
    QVERIFY2(unwritable.errHas("Cannot write '/nonexistent/folder/h.csv'"), unwritable.err.c_str());
}

QTEST_GUILESS_MAIN(CliStoreTest)
#include "test_cli_store.moc"
