// hearth-cli's sweeps as a user drives them: the speed ladder planned, repeated and judged, the
// memory ladder's table, steps predicted not to fit, bad option values, a step whose process
// dies, and a ladder that outlives a rebuild of hearth-cli. Each step is a child `hearth-cli run`
// with its own run.
#include "CliTestSupport.h"

#include "RawDb.h"
#include "engine/config/ExperimentConfig.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "storage/report/LadderSummary.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using hearth::test::CliResult;
using hearth::test::cliOn;

class TestCliSweep : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // The memory ladder: one run per memory toggle, in one sweep, and a table of what each saves.
    // Per-block checkpointing must leave fewer activation bytes than the baseline (counted
    // tensor bytes, so the comparison does not depend on the C heap).
    void memoryLadderRunsEachToggleAndPrintsTheTable() {
        const QString database = m_dir.filePath("memory-ladder.sqlite");
        // On the CPU (auto would pick a GPU where there is one): the same seed must give the same
        // accuracy with every toggle, which a GPU's nondeterministic kernels do not promise.
        const CliResult r = cliOn(database, {"sweep", "--ladder=memory", "--set", "data.limit=400", "--set",
                                             "trainer.max_epochs=1", "--set", "trainer.num_workers=0", "--set",
                                             "trainer.accelerator=cpu", "-q"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        for (const char* part : {"baseline", "+ grads set to none", "+ in-place ReLU", "+ checkpointing", "peak memory",
                                 "activations", "hearth-cli compare 1 2 3 4"})
            QVERIFY2(r.out.contains(part), qPrintable(QString("missing '%1' in:\n%2").arg(part, r.out)));
        hearth::RunStore store(database.toStdString());
        const auto runs = store.listRuns();
        QCOMPARE(runs.size(), size_t{4});
        for (const auto& run : runs) {
            QCOMPARE(QString::fromStdString(run.status), QString("completed"));
            QCOMPARE(run.sweep_id.value_or(0), runs[0].sweep_id.value_or(-1));
        }
        const auto baseline = hearth::configFromJson(store.run(1)->config_json);
        const auto last = hearth::configFromJson(store.run(4)->config_json);
        QVERIFY(!baseline.trainer.set_grads_to_none && !baseline.model.gradient_checkpointing);
        QVERIFY(last.trainer.set_grads_to_none && last.model.inplace_activations && last.model.gradient_checkpointing);
        const auto plain = store.memoryBreakdown(1);
        const auto checkpointed = store.memoryBreakdown(4);
        QVERIFY(plain && checkpointed);
        QVERIFY2(checkpointed->activations_bytes < plain->activations_bytes,
                 qPrintable(QString("%1 vs %2").arg(checkpointed->activations_bytes).arg(plain->activations_bytes)));
        // Every toggle changes memory only: the same seed trains to the same accuracy.
        QCOMPARE(store.run(4)->test_accuracy.value_or(-1), store.run(1)->test_accuracy.value_or(-2));
        // `compare` on the ladder's runs ends with the same table.
        const CliResult compared = cliOn(database, {"compare", "1", "2", "3", "4"});
        QVERIFY2(compared.exit_code == 0 && compared.out.contains("The memory ladder (sweep #") &&
                     compared.out.contains("+ checkpointing") && compared.out.contains("peak memory") &&
                     compared.out.contains("1.00x"),
                 qPrintable(compared.out));

        // The kind after a space, as the help's "--ladder TEXT:{speed,memory}" reads (not only --ladder=memory).
        const CliResult bad = cliOn(database, {"sweep", "--ladder", "memory", "--target-batch", "128"});
        QCOMPARE(bad.exit_code, 2);
        QVERIFY2(bad.out.contains("--target-batch") && bad.out.contains("speed ladder"), qPrintable(bad.out));
        const CliResult unknown = cliOn(database, {"sweep", "--ladder=fast"});
        QVERIFY(unknown.exit_code != 0);
        QVERIFY2(unknown.out.contains("fast"), qPrintable(unknown.out));
        QCOMPARE(hearth::RunStore(database.toStdString()).listRuns().size(), size_t{4});   // nothing lost
    }

    // The planned speed ladder: --plan lists the rungs and runs nothing; chosen rungs each alone,
    // repeated twice with the steps alternating, every repeat stored with its step and a seed of
    // its own; the table gives median (min-max), verdicts and why-lines; --show prints it again
    // and --apply-best writes a config that loads.
    void plannedLadderRepeatsEveryStepAndStoresEachRun() {
        const QString database = m_dir.filePath("planned-ladder.sqlite");
        const QStringList base{"--set", "data.limit=300", "--set", "trainer.max_epochs=2", "--set",
                               "trainer.accelerator=cpu", "--set", "trainer.profile_every_n_steps=1"};
        const CliResult plan = cliOn(database, QStringList{"sweep", "--ladder", "--plan"} + base);
        QVERIFY2(plan.exit_code == 0 && plan.out.contains("[x] mixed") && plan.out.contains("n/a tf32") &&
                     plan.out.contains("9 runs"),
                 qPrintable(plan.out));
        const QString best = m_dir.filePath("best.json");
        const CliResult r = cliOn(database,
                                  QStringList{"sweep", "--ladder", "--rungs", "workers,mixed", "--alone", "--repeats", "2",
                                              "--apply-best", best, "-q"} + base,
                                  400000);
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        for (const char* part : {"samples/s (steady)", "2/2", "round 2/2", "Why:", "+ workers:", "Sweep #1 stored",
                                 "Predicted (probe at batch 16 and 32", "Predicted before each step's first run"})
            QVERIFY2(r.out.contains(part), qPrintable(QString("missing '%1' in:\n%2").arg(part, r.out)));
        QVERIFY2(r.out.contains("Recommended: ") || r.out.contains("keep 'baseline'"), qPrintable(r.out));
        hearth::RunStore store(database.toStdString());
        const auto sweep = store.sweep(1);
        QVERIFY(sweep && !sweep->plan_json.empty());
        QCOMPARE(sweep->runs.size(), size_t{6});
        // Every step was predicted before its first run, and the prediction is set against that run.
        const hearth::LadderSummary judged = hearth::summarizeLadder(store, 1);
        for (const auto& step : judged.steps) {
            QVERIFY2(step.prediction && step.check && step.check->peak_error, step.label.c_str());
            QVERIFY(step.prediction->memory.activations_bytes > 0 && step.prediction->step_ms > 0.0);
            QVERIFY2(std::abs(*step.check->activations_error) < 0.15,
                     qPrintable(QString::fromStdString(hearth::footprintErrorText(step.check->activations_error))));
        }
        for (size_t i = 0; i < sweep->runs.size(); ++i) {
            const auto& run = sweep->runs[i];
            QCOMPARE(run.step, static_cast<int64_t>(i % 3));   // round by round: 0 1 2 0 1 2
            QCOMPARE(run.repeat, static_cast<int64_t>(i / 3));
            QCOMPARE(hearth::configFromJson(store.run(run.run_id)->config_json).seed, uint64_t(42 + i / 3));
        }
        // Alone: the workers step trains in 32-true, as the baseline does.
        QCOMPARE(QString::fromStdString(hearth::configFromJson(store.run(sweep->runs[2].run_id)->config_json)
                                            .trainer.precision),
                 QString("32-true"));
        const CliResult shown = cliOn(database, {"sweep", "--show", "1"});
        QVERIFY2(shown.exit_code == 0 && shown.out.contains("alone, 2 repeats") && shown.out.contains("+ bf16-mixed"),
                 qPrintable(shown.out));
        const CliResult compared = cliOn(database, {"compare", "1", "2", "3"});
        QVERIFY2(compared.exit_code == 0 && compared.out.contains("judged over every repeat") &&
                     compared.out.contains("2/2"),
                 qPrintable(compared.out));
        QFile file(best);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const auto applied = hearth::configFromJson(file.readAll().toStdString());
        QVERIFY(QString::fromStdString(applied.name).endsWith("recommended"));

        // Bad plans are refused before anything runs, naming the flag.
        const CliResult unknown = cliOn(database, QStringList{"sweep", "--ladder", "--rungs", "turbo"} + base);
        QVERIFY2(unknown.exit_code == 2 && unknown.out.contains("--rungs") && unknown.out.contains("'turbo'"),
                 qPrintable(unknown.out));
        const CliResult memory = cliOn(database, QStringList{"sweep", "--ladder=memory", "--repeats", "2"} + base);
        QVERIFY2(memory.exit_code == 2 && memory.out.contains("--repeats"), qPrintable(memory.out));
        const CliResult none = cliOn(database, {"sweep", "--show", "99"});
        QVERIFY2(none.exit_code == 3 && none.out.contains("No sweep #99"), qPrintable(none.out));
        QCOMPARE(hearth::RunStore(database.toStdString()).listRuns().size(), size_t{6});   // nothing added

        // A plan this build cannot read: compare still compares, and says why there is no verdict.
        hearth::testing::RawDb(database.toStdString()).exec("UPDATE sweeps SET plan_json = '{not json' WHERE id = 1");
        const CliResult unreadable = cliOn(database, {"compare", "1", "2", "3"});
        QVERIFY2(unreadable.exit_code == 0 && unreadable.out.contains("its plan cannot be read") &&
                     !unreadable.out.contains("judged over every repeat"),
                 qPrintable(unreadable.out));

        // Time to accuracy: the rung trains until it reaches the baseline's best, at most the cap.
        const QString timed = m_dir.filePath("ladder-to-accuracy.sqlite");
        const CliResult acc = cliOn(timed, QStringList{"sweep", "--ladder", "--measure", "accuracy", "--rungs", "mixed",
                                                       "--repeats", "1", "--cap-epochs", "3", "-q"} + base,
                                    300000);
        QVERIFY2(acc.exit_code == 0 && acc.out.contains("Target: validation accuracy") &&
                     acc.out.contains("time to val acc"),
                 qPrintable(acc.out));
        const auto rung = hearth::configFromJson(hearth::RunStore(timed.toStdString()).run(2)->config_json);
        QCOMPARE(rung.trainer.max_epochs, int64_t(3));
        QVERIFY(rung.trainer.early_stopping.stop_at.has_value());
    }

    // A step predicted not to fit the memory given is not run, and the plan says why; a speed
    // ladder whose baseline does not fit is refused; bad sizes are refused before anything runs.
    void stepsPredictedNotToFitAreNotRun() {
        const QString database = m_dir.filePath("not-fit.sqlite");
        const QStringList base{"--set", "data.limit=300", "--set", "trainer.max_epochs=1", "--set",
                               "trainer.accelerator=cpu", "-q"};
        const CliResult memory = cliOn(database, QStringList{"sweep", "--ladder=memory", "--device-memory", "1MiB"} + base);
        QVERIFY2(memory.exit_code == 0 && memory.out.contains("Not run: predicted peak") &&
                     memory.out.contains("> the memory given (1.0 MiB)"),
                 qPrintable(memory.out));
        QVERIFY(hearth::RunStore(database.toStdString()).listRuns().empty());   // nothing trained
        const CliResult shown = cliOn(database, {"sweep", "--show", "1"});
        QVERIFY2(shown.exit_code == 0 && shown.out.contains("not run: predicted peak"), qPrintable(shown.out));

        const CliResult speed = cliOn(database, QStringList{"sweep", "--ladder", "--device-memory", "1MiB"} + base);
        QVERIFY2(speed.exit_code == 4 && speed.out.contains("the baseline is predicted not to fit"), qPrintable(speed.out));
        QVERIFY(hearth::RunStore(database.toStdString()).listRuns().empty());

        const CliResult bad = cliOn(database, QStringList{"sweep", "--ladder", "--device-memory", "lots"} + base);
        QVERIFY2(bad.exit_code == 2 && bad.out.contains("'lots' is not a size"), qPrintable(bad.out));
        const CliResult blind =
            cliOn(database, QStringList{"sweep", "--ladder", "--no-predict", "--device-memory", "1GiB"} + base);
        QVERIFY2(blind.exit_code == 2 && blind.out.contains("--no-predict"), qPrintable(blind.out));
    }

    // A bad option value is refused before anything runs, naming the option as it is typed and
    // the values it takes, in words (not CLI11's "Value x not in range 1 to 100000").
    void badOptionValuesAreNamedAsTyped() {
        const QString database = m_dir.filePath("bad-options.sqlite");
        const QStringList base{"--set", "data.limit=300", "--set", "trainer.accelerator=cpu", "--plan"};
        const CliResult target = cliOn(database, QStringList{"sweep", "--ladder", "--target-batch", "100"} + base);
        QVERIFY2(target.exit_code == 2 &&
                     target.out.contains("--target-batch: must be a multiple of trainer.batch_size (64), got 100") &&
                     !target.out.contains("target_batch"),
                 qPrintable(target.out));
        const CliResult repeats = cliOn(database, QStringList{"sweep", "--ladder", "--repeats", "0"} + base);
        QVERIFY2(repeats.exit_code != 0 && repeats.out.contains("--repeats: 0 is out of range: 1 to 100"),
                 qPrintable(repeats.out));
        const CliResult cap = cliOn(database, QStringList{"sweep", "--ladder", "--cap-epochs", "x"} + base);
        QVERIFY2(cap.exit_code != 0 && cap.out.contains("--cap-epochs: 'x' is not a whole number: 1 to 100000") &&
                     !cap.out.contains("Value x"),
                 qPrintable(cap.out));
        QVERIFY(!QFile::exists(database));   // nothing planned was stored
    }

    // Each step of a sweep runs as a child `run --events` that names its run. A step whose child
    // dies before it has a row is reported as that step failing, never as the previous step's run;
    // with --events the sweep's and each step's lines reach stdout.
    void sweepStepThatDiesBeforeItsRowIsReportedAsFailed() {
        const QString database = m_dir.filePath("one-run-only.sqlite");
        { hearth::RunWriter create(database.toStdString()); }   // the store, with its schema
        hearth::testing::RawDb(database.toStdString())
            .exec("CREATE TRIGGER one_run BEFORE INSERT ON runs WHEN (SELECT COUNT(*) FROM runs) >= 1 "
                  "BEGIN SELECT RAISE(ABORT, 'this store takes one run'); END");
        const CliResult r = cliOn(database, {"sweep", "--ladder", "--events", "--set", "data.limit=200", "--set",
                                             "trainer.max_epochs=1", "--set", "trainer.num_workers=0"});
        QVERIFY2(r.exit_code == 3, qPrintable(r.out));
        QVERIFY2(r.out.contains("\"event\":\"sweep\"") && r.out.contains("\"event\":\"run\",\"run_id\":1"),
                 qPrintable(r.out));
        QVERIFY2(r.out.contains("failed: its process exited with 3 before it recorded a run") &&
                     r.out.contains("this store takes one run"),
                 qPrintable(r.out));
        QVERIFY2(r.out.contains("Ladder ended early"), qPrintable(r.out));
        // The table's second row is the failed step with no run (0 of 0), not run 1 again.
        const auto row = QRegularExpression("(?m)^\\+ \\S+\\s+(\\d+)/(\\d+)\\s").match(r.out);
        QVERIFY2(row.hasMatch() && row.captured(1) == "0" && row.captured(2) == "0", qPrintable(r.out));
        hearth::RunStore store(database.toStdString());
        QCOMPARE(store.listRuns().size(), size_t{1});
        QCOMPARE(store.run(1)->status, std::string("completed"));
    }

    // A rebuild or an upgrade that replaces hearth-cli while a sweep runs: every later step still
    // runs the build the sweep started with (they exec /proc/self/exe, not the path on disk, which
    // now holds another program).
    void sweepRunsItsOwnBuildAfterTheExecutableIsReplaced() {
        const QString bin = m_dir.filePath("replaced-bin");
        QVERIFY(QDir().mkpath(bin));
        const QString exe = bin + "/hearth-cli";
        QVERIFY(QFile::copy(HEARTH_CLI_PATH, exe));
        const QString database = m_dir.filePath("replaced.sqlite");
        QProcess sweep;
        sweep.setProcessChannelMode(QProcess::MergedChannels);
        sweep.start(exe, {"--db", database, "sweep", "--ladder", "--rungs", "mixed", "--repeats", "1", "--set",
                          "data.limit=200", "--set", "trainer.max_epochs=1", "--set", "trainer.num_workers=0"});
        QVERIFY(sweep.waitForReadyRead(hearth::test::scaledTimeoutMs(60000)));   // it runs: replace it
        QVERIFY(QFile::remove(exe));
        QFile other(exe);
        QVERIFY(other.open(QIODevice::WriteOnly));
        other.write("#!/bin/sh\necho 'not the build the sweep started with'\nexit 97\n");
        other.close();
        QVERIFY(other.setPermissions(other.permissions() | QFileDevice::ExeOwner));
        QVERIFY(sweep.waitForFinished(hearth::test::scaledTimeoutMs(180000)));
        const QString out = QString::fromUtf8(sweep.readAll());
        QVERIFY2(sweep.exitStatus() == QProcess::NormalExit && sweep.exitCode() == 0, qPrintable(out));
        QVERIFY2(!out.contains("not the build"), qPrintable(out));
        hearth::RunStore store(database.toStdString());
        const auto runs = store.listRuns();
        QCOMPARE(runs.size(), size_t{2});
        for (const auto& run : runs) QCOMPARE(run.status, std::string("completed"));
    }
};

QTEST_GUILESS_MAIN(TestCliSweep)
#include "test_cli_sweep.moc"
