// hearth-cli tune as a user drives it: the LR sweep's table and suggestion, the batch-size trials
// and result, --apply, and bad inputs with their exit codes and messages.
#include "CliTestSupport.h"
#include "engine/config/ByteSize.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

using hearth::test::CliResult;

CliResult cli(const QStringList& args, int timeout_ms = 180000) { return hearth::test::runCli(args, timeout_ms); }

// A small MLP on a few hundred Fashion-MNIST images.
QStringList small() {
    return {"--set", "data.limit=600", "--set", "model.name=mlp", "--set", "trainer.num_workers=0",
            "--set", "trainer.accelerator=cpu"};
}

}  // namespace

class TestCliTune : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void lrPrintsTableAndSuggestion() {
        const CliResult r = cli(QStringList{"tune", "--lr", "--steps", "60"} + small());
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("smoothed loss"), qPrintable(r.out));
        // About 15 rows of (lr, smoothed loss), one marked.
        const auto rows = QRegularExpression(R"(^\s+\d\.\d{3}e[-+]\d\d\s+\d+\.\d{4})", QRegularExpression::MultilineOption)
                              .globalMatch(r.out);
        int count = 0;
        for (auto it = rows; it.hasNext(); it.next()) ++count;
        QVERIFY2(count >= 12 && count <= 17, qPrintable(r.out));
        QVERIFY(r.out.contains("<- steepest descent"));
        const auto suggestion = QRegularExpression(R"(--set optimizer\.lr=([0-9.e+-]+))").match(r.out);
        QVERIFY2(suggestion.hasMatch(), qPrintable(r.out));
        const double lr = suggestion.captured(1).toDouble();
        QVERIFY(lr >= 1e-7 && lr <= 1.0);
        QVERIFY(r.out.contains("Suggested learning rate"));
    }

    void batchSizeFindsTheCapAndApplies() {
        const QString out = m_dir.filePath("tuned.json");
        const CliResult r = cli(QStringList{"tune", "--batch-size", "--memory-limit", "64GiB", "--max-batch", "48",
                                            "--steps", "1", "--apply", out} + small());
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains(QRegularExpression(R"(\n\s+32\s+fits\s)")), qPrintable(r.out));
        QVERIFY2(r.out.contains("Largest batch that fits: 48"), qPrintable(r.out));
        QVERIFY(r.out.contains("--set trainer.batch_size=48"));
        QVERIFY2(r.out.contains("bisecting in multiples of 8 to within 5% (at least 8)"), qPrintable(r.out));
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject config = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(config["trainer"].toObject()["batch_size"].toInt(), 48);
        QCOMPARE(config["model"].toObject()["name"].toString(), QString("mlp"));
    }

    // trainer.devices=2 with ddp: tune launches two ranks that run the same trials and agree on
    // each one (a batch fits only where it fits on both), so both end on the same batch. The limit
    // lies between the measured peaks of batch 2 and 256 on one process.
    void ddpRanksAgreeOnEveryTrial() {
#ifndef HEARTH_WITH_C10D
        QSKIP("this build has no c10d (ddp)");
#else
        const QStringList cnn = {"--set", "data.limit=2400", "--set", "trainer.num_workers=0",
                                 "--set", "trainer.accelerator=cpu"};
        const CliResult probe = cli(QStringList{"tune", "--batch-size", "--memory-limit", "64GiB", "--max-batch",
                                                "256", "--steps", "1"} + cnn);
        QVERIFY2(probe.exit_code == 0, qPrintable(probe.out));
        const auto peak = [&](int batch) {  // in MiB (formatBytes writes GiB from 1 GiB on: ASan's peaks)
            const QRegularExpression row(QString(R"(\n\s+%1\s+fits\s+([0-9.]+ [KMG]iB))").arg(batch));
            const auto m = row.match(probe.out);
            const auto bytes = m.hasMatch() ? hearth::parseByteSize(m.captured(1).toStdString()) : std::nullopt;
            return bytes ? static_cast<double>(*bytes) / (1 << 20) : 0.0;
        };
        QVERIFY2(peak(2) > 0 && peak(256) > peak(2) + 100, qPrintable(probe.out));
        const QString limit = QString::number(static_cast<int>((peak(2) + peak(256)) / 2)) + "MiB";
        const QString db = m_dir.filePath("ddp.sqlite");
        const CliResult r = cli(QStringList{"--db", db, "tune", "--batch-size", "--memory-limit", limit, "--max-batch",
                                            "256", "--steps", "1", "--set", "trainer.devices=2", "--set",
                                            "trainer.strategy=ddp"} + cnn);
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("strategy ddp"), qPrintable(r.out));
        const auto found = QRegularExpression(R"(Largest batch that fits: (\d+))").match(r.out);
        QVERIFY2(found.hasMatch(), qPrintable(r.out));
        const int batch = found.captured(1).toInt();
        QVERIFY2(batch >= 2 && batch < 256, qPrintable(r.out));
        // Rank 1's log: the same trials in the same order, the same result.
        QDir logs(db + ".artifacts/rank-logs");
        const QStringList launches = logs.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
        QVERIFY(!launches.isEmpty());
        QFile rank1(logs.filePath(launches.last() + "/rank1.log"));
        QVERIFY(rank1.open(QIODevice::ReadOnly));
        const QString log = QString::fromUtf8(rank1.readAll());
        QVERIFY2(log.contains(found.captured(0)), qPrintable(log));
        const QRegularExpression trial(R"(^\s+(\d+)\s+(fits|oom)\s)", QRegularExpression::MultilineOption);
        const auto trials = [&](const QString& text) {
            QStringList out;
            for (auto it = trial.globalMatch(text); it.hasNext();) out << it.next().captured(0).simplified();
            return out;
        };
        QVERIFY(trials(r.out).size() >= 3);
        QCOMPARE(trials(log), trials(r.out));
#endif
    }

    // --multiple-of and --tolerance say where the bisection ends, and the header says it back;
    // a tolerance past one half, or a multiple of 0, is refused before anything runs.
    void bisectionSettingsAreReadAndChecked() {
        const CliResult exact = cli(QStringList{"tune", "--batch-size", "--memory-limit", "64GiB", "--max-batch", "8",
                                                "--steps", "1", "--multiple-of", "1", "--tolerance", "0"} + small());
        QVERIFY2(exact.exit_code == 0, qPrintable(exact.out));
        QVERIFY2(exact.out.contains("bisecting to the exact batch"), qPrintable(exact.out));
        const CliResult sixteen = cli(QStringList{"tune", "--batch-size", "--memory-limit", "64GiB", "--max-batch",
                                                  "8", "--steps", "1", "--multiple-of", "16", "--tolerance", "0.1"} +
                                      small());
        QVERIFY2(sixteen.out.contains("bisecting in multiples of 16 to within 10% (at least 16)"), qPrintable(sixteen.out));
        for (const QStringList& bad : {QStringList{"--tolerance", "0.9"}, QStringList{"--multiple-of", "0"}}) {
            const CliResult r = cli(QStringList{"tune", "--batch-size", "--memory-limit", "64GiB"} + bad + small());
            QVERIFY2(r.exit_code != 0 && r.out.contains(bad.first()), qPrintable(bad.join(' ') + ": " + r.out));
            QVERIFY2(!r.out.contains("Batch-size finder:"), qPrintable(r.out));
        }
    }

    void batchSizeOnCpuNeedsAMemoryLimit() {
        const CliResult r = cli(QStringList{"tune", "--batch-size"} + small());
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("--memory-limit") && r.out.contains("CPU"), qPrintable(r.out));
    }

    // The footprint: a probe at a quarter and half the batch, each in a process of its own, the
    // prediction by category in the report and as JSON; a capacity it does not fit says so.
    void footprintPredictsByCategory() {
        const CliResult r = cli(QStringList{"tune", "--footprint", "--json", "--set", "trainer.batch_size=64"} + small());
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        for (const char* part : {"probed at batch 16 and 32", "Predicted at batch 64 on cpu", "Activations",
                                 "Optimizer state", "fits this machine's RAM", "optimizer step"})
            QVERIFY2(r.out.contains(part), qPrintable(QString("missing '%1' in:\n%2").arg(part, r.out)));
        const QString line = r.out.split('\n').filter(QRegularExpression("^\\{")).value(0);
        const QJsonObject json = QJsonDocument::fromJson(line.toUtf8()).object();
        QCOMPARE(json.value("batch_size").toInt(), 64);
        QCOMPARE(json.value("probes").toArray().size(), 2);
        QVERIFY(json.value("fits").toBool());
        const QJsonObject memory = json.value("memory").toObject();
        QVERIFY(memory.value("activations_bytes").toDouble() > 0);
        QCOMPARE(memory.value("gradients_bytes").toDouble(), memory.value("parameters_bytes").toDouble());
        QVERIFY(json.value("step_ms").toDouble() > 0);

        const CliResult small_device =
            cli(QStringList{"tune", "--footprint", "--device-memory", "1MiB"} + small());
        QVERIFY2(small_device.exit_code == 0 && small_device.out.contains("does not fit: predicted peak") &&
                     small_device.out.contains("the memory given (1.0 MiB)"),
                 qPrintable(small_device.out));
        const CliResult bad = cli(QStringList{"tune", "--footprint", "--device-memory", "lots"} + small());
        QVERIFY2(bad.exit_code == 2 && bad.out.contains("'lots' is not a size"), qPrintable(bad.out));
        const CliResult events = cli(QStringList{"tune", "--footprint", "--events"} + small());
        QVERIFY2(events.exit_code == 2 && events.out.contains("--json"), qPrintable(events.out));
        const CliResult stray = cli(QStringList{"tune", "--lr", "--probe-batch", "4"} + small());
        QVERIFY2(stray.exit_code == 2 && stray.out.contains("--probe-batch"), qPrintable(stray.out));
    }

    void badInputsGiveTheirExitCodes() {
        CliResult r = cli(QStringList{"tune", "--batch-size", "--memory-limit", "lots"} + small());
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("'lots' is not a size"), qPrintable(r.out));
        r = cli({"tune", "--lr", "--set", "trainer.batch_size=0"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("trainer.batch_size"), qPrintable(r.out));
        r = cli({"tune"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("--batch-size") && r.out.contains("--lr") && r.out.contains("--footprint"),
                 qPrintable(r.out));
        r = cli({"tune", "--lr", "--min-lr", "1", "--max-lr", "0.1"});
        QCOMPARE(r.exit_code, 2);
        r = cli(QStringList{"tune", "--lr"} + small() + QStringList{"--set", "data.path=" + m_dir.filePath("none")});
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.out.contains("data.path"), qPrintable(r.out));
    }
};

QTEST_GUILESS_MAIN(TestCliTune)
#include "test_cli_tune.moc"
