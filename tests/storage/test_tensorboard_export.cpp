// TensorBoard export: the event file is well-formed TFRecord (CRC-32C checked here), and
// TensorBoard's own EventAccumulator (from the project's Python environment) reads back every
// stored step, the epochs, the evaluations, the report text and the hparams.

#include "StoreTestEvents.h"
#include "engine/data/formats/WholeFile.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "storage/tensorboard/EventFile.h"
#include "storage/tensorboard/TensorBoardExport.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace hearth;
using namespace hearth::testing;

namespace {

std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

uint32_t le32(const std::string& s, size_t at) {
    uint32_t v = 0;
    std::memcpy(&v, s.data() + at, 4);
    return v;
}

// Splits a TFRecord file, checking both CRCs of every record; fails the test on corruption.
std::vector<std::string> records(const std::string& file) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at < file.size()) {
        if (file.size() - at < 12) return {};
        uint64_t length = 0;
        std::memcpy(&length, file.data() + at, 8);
        if (le32(file, at + 8) != tensorboard::maskedCrc32c(std::string_view(file).substr(at, 8))) return {};
        if (file.size() - at - 12 < length + 4) return {};
        const std::string payload = file.substr(at + 12, length);
        if (le32(file, at + 12 + length) != tensorboard::maskedCrc32c(payload)) return {};
        out.push_back(payload);
        at += 12 + length + 4;
    }
    return out;
}

QString python() { return QStringLiteral(HEARTH_SOURCE_DIR "/.deps/python/bin/python"); }

}  // namespace

class TensorBoardExportTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string db_;
    int64_t id_ = 0;

private Q_SLOTS:
    void initTestCase();
    void crc32cMatchesKnownAnswers();
    void eventFileIsValidTfRecord();
    void tensorBoardReadsEveryStoredValue();
    void secondExportReplacesTheFirst();
    void unwritableDirectoryIsAClearError();
    void aFileIsWrittenWholeOrNotAtAll();
};

void TensorBoardExportTest::initTestCase() {
    db_ = dir_.filePath("runs.sqlite").toStdString();
    auto writer = std::make_shared<RunWriter>(db_);
    const std::string config = R"({"name":"fashion cnn/fp16","trainer":{"max_epochs":2,"lr":0.001,"deterministic":true,)"
                               R"("precision":"16-mixed","milestones":[1,2]},"data":{"path":null}})";
    id_ = writer->createRun("fashion cnn/fp16", config);
    RunRecorder recorder(writer, id_);
    RunStarted started = startedEvent("fashion cnn/fp16");
    started.config_json = config;
    recorder.onEvent(started);
    for (int64_t i = 0; i < 30; ++i) recorder.onEvent(stepEvent(i, 15));
    recorder.onEvent(epochEvent(0, 0.75));
    recorder.onEvent(epochEvent(1, 0.875));
    recorder.onEvent(reportEvent("val", 100));
    recorder.onEvent(reportEvent("test", 120));
    recorder.onEvent(finishedEvent());
    writer->flush();
}

void TensorBoardExportTest::crc32cMatchesKnownAnswers() {
    // RFC 3720's check value and the empty string; TFRecord's mask of a known CRC.
    QCOMPARE(tensorboard::crc32c("123456789"), 0xE3069283u);
    QCOMPARE(tensorboard::crc32c(""), 0u);
    QCOMPARE(tensorboard::crc32c(std::string(32, '\0')), 0x8A9136AAu);
    const uint32_t crc = tensorboard::crc32c("abc");
    QCOMPARE(tensorboard::maskedCrc32c("abc"), ((crc >> 15) | (crc << 17)) + 0xA282EAD8u);
}

void TensorBoardExportTest::eventFileIsValidTfRecord() {
    RunStore store(db_);
    const QString out = dir_.filePath("tb1");
    const auto written = report::exportTensorBoard(store, id_, out.toStdString());
    QCOMPARE(QString::fromStdString(written.run_dir), out + "/" + QString::number(id_) + "-fashion-cnn-fp16");
    QVERIFY(QString::fromStdString(written.file).contains("tfevents"));
    QCOMPARE(written.step_points, 30);
    QCOMPARE(written.epoch_points, 2);
    QCOMPARE(written.hparams, 6);   // name, max_epochs, lr, deterministic, precision, milestones (null skipped)
    const auto recs = records(readAll(written.file));
    // version, experiment, session start, config text, 30 steps, 2 epochs, val, test, report, session end
    QCOMPARE(recs.size(), size_t{1 + 3 + 30 + 2 + 2 + 1 + 1});
    QVERIFY(recs.front().find("brain.Event:2") != std::string::npos);
}

void TensorBoardExportTest::tensorBoardReadsEveryStoredValue() {
    if (!QFile::exists(python())) QSKIP("no .deps/python (scripts/install-deps makes it, with tensorboard)");
    RunStore store(db_);
    const auto written = report::exportTensorBoard(store, id_, dir_.filePath("tb2").toStdString());
    QProcess reader;
    reader.start(python(), {QStringLiteral(HEARTH_FIXTURES_DIR "/read_tensorboard.py"), QString::fromStdString(written.run_dir)});
    QVERIFY(reader.waitForFinished(120000));
    QVERIFY2(reader.exitCode() == 0, reader.readAllStandardError().constData());
    const QJsonObject tb = QJsonDocument::fromJson(reader.readAllStandardOutput()).object();

    // Every stored step, at its global step, with its value (as float32).
    const auto steps = store.steps(id_);
    const QJsonArray loss = tb["scalars"].toObject()["train/loss"].toArray();
    QCOMPARE(loss.size(), static_cast<qsizetype>(steps.size()));
    for (qsizetype i = 0; i < loss.size(); ++i) {
        QCOMPARE(loss[i].toArray()[0].toInteger(), steps[static_cast<size_t>(i)].global_step);
        QCOMPARE(static_cast<float>(loss[i].toArray()[1].toDouble()), static_cast<float>(steps[static_cast<size_t>(i)].loss));
    }
    const QJsonObject scalars = tb["scalars"].toObject();
    for (const char* tag : {"train/accuracy", "train/lr", "train/loss_scale", "speed/samples_per_sec", "speed/data_wait_ms"})
        QVERIFY2(scalars[tag].toArray().size() == 30, tag);
    const QJsonArray val = scalars["epoch/val_accuracy"].toArray();
    QCOMPARE(val.size(), 2);
    QCOMPARE(val[0].toArray()[0].toInteger(), 15);
    QCOMPARE(val[1].toArray()[1].toDouble(), 0.875);
    QCOMPARE(scalars["test/accuracy"].toArray().size(), 1);
    QCOMPARE(scalars["test/loss"].toArray()[0].toArray()[1].toDouble(), static_cast<double>(0.4321f));

    // The report and config as text; the hparams plugin's session and experiment.
    QVERIFY(tb["text"].toObject()["report"].toString().contains("fashion cnn/fp16"));
    QVERIFY(tb["text"].toObject()["config"].toString().contains("\"precision\": \"16-mixed\""));
    const QJsonObject hp = tb["hparams"].toObject();
    QCOMPARE(hp["trainer.max_epochs"].toString(), QStringLiteral("number_value:2.0"));
    QCOMPARE(hp["trainer.deterministic"].toString(), QStringLiteral("bool_value:True"));
    QCOMPARE(hp["trainer.precision"].toString(), QStringLiteral("string_value:16-mixed"));
    QCOMPARE(hp["trainer.milestones"].toString(), QStringLiteral("string_value:[1,2]"));
    QVERIFY(!hp.contains("data.path"));
    QVERIFY(tb["metrics"].toArray().contains(QStringLiteral("epoch/val_accuracy")));
    QCOMPARE(tb["status"].toInt(), 1);   // STATUS_SUCCESS: the run completed
}

void TensorBoardExportTest::secondExportReplacesTheFirst() {
    RunStore store(db_);
    const std::string out = dir_.filePath("tb3").toStdString();
    const auto first = report::exportTensorBoard(store, id_, out);
    const auto second = report::exportTensorBoard(store, id_, out);
    QCOMPARE(second.file, first.file);
    QCOMPARE(QDir(QString::fromStdString(second.run_dir)).entryList(QDir::Files).size(), 1);
    QCOMPARE(records(readAll(second.file)).size(), size_t{40});
}

void TensorBoardExportTest::unwritableDirectoryIsAClearError() {
    RunStore store(db_);
    const std::string blocker = dir_.filePath("a-file").toStdString();
    std::ofstream(blocker) << "not a directory";
    try {
        report::exportTensorBoard(store, id_, blocker);
        QFAIL("exporting under a file succeeded");
    } catch (const report::ExportError& e) {
        QVERIFY2(std::string(e.what()).find("Cannot create the directory '" + blocker) == 0, e.what());
    }
    QCOMPARE(readAll(blocker), std::string("not a directory"));
}

// The exported event files, like the predictions and the token cache, are written whole
// (writeWholeFile): a write that fails midway leaves the earlier file as it was and no temporary
// beside it; a folder that is not there is said, not thrown.
void TensorBoardExportTest::aFileIsWrittenWholeOrNotAtAll() {
    const QString folder = dir_.filePath("whole");
    QVERIFY(QDir().mkpath(folder));
    const std::string path = (folder + "/events.out").toStdString();
    QCOMPARE(writeWholeFile(path, [](std::ostream& out) { out << "first"; }), std::string());
    QCOMPARE(readAll(path), std::string("first"));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, writeWholeFile(path, [](std::ostream& out) {
                                 out << "half of the sec";
                                 throw std::runtime_error("stopped");
                             }));
    QCOMPARE(readAll(path), std::string("first"));
    QCOMPARE(QDir(folder).entryList(QDir::Files), QStringList{"events.out"});
    QCOMPARE(writeWholeFile(path, [](std::ostream& out) { out << "second"; }), std::string());
    QCOMPARE(readAll(path), std::string("second"));
    const std::string nowhere = (folder + "/missing/events.out").toStdString();
    QCOMPARE(writeWholeFile(nowhere, [](std::ostream& out) { out << "x"; }), std::string("No such file or directory"));
    QCOMPARE(QDir(folder).entryList(QDir::Files), QStringList{"events.out"});
}

QTEST_GUILESS_MAIN(TensorBoardExportTest)
#include "test_tensorboard_export.moc"
