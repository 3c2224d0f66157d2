// hearth-cli resume as a user meets it: a run stopped with Ctrl+C, or killed with kill -9, is
// resumed and ends bit for bit as the same run never stopped (CPU, trainer.deterministic; loader
// workers 0 and 2), and so does a 2-process data-parallel run (ddp; zero2, whose optimizer state
// and gradients are sharded; zero3, whose parameters are too; zero2 with its optimizer offloaded;
// the pipeline, each process one stage of the model); a damaged state, another model's state, a state of another world size, a
// completed run and a run without a state are refused with a clear message, and the stored run
// stays as it was.
#include "CliTestSupport.h"

#include "engine/train/StateFiles.h"
#include "storage/RunStore.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <csignal>

using hearth::RunStore;
using hearth::test::CliResult;

namespace {

// The default CNN at an eighth of its width ([8,16] channels): the same layers (convolutions,
// BatchNorm with its running statistics, dropout with its generator) in a quarter of the time.
QStringList experiment(const QString& name, int workers) {
    return {"--set", "name=" + name, "--set", "data.limit=2400", "--set", "trainer.max_epochs=2",
            "--set", "model.channels=[8,16]",
            "--set", "trainer.batch_size=32", "--set", "trainer.deterministic=true",
            "--set", "trainer.log_every_n_steps=1", "--set", "trainer.num_workers=" + QString::number(workers),
            "--set", "trainer.safety_checkpoint.every_n_steps=4", "--set", "trainer.safety_checkpoint.keep_last=2"};
}

// The same on 2 CPU processes (the local launcher, gloo), on a GPU machine too: there auto would put
// both ranks on one GPU, which NCCL refuses.
// strategy: ddp, zero1, zero2, zero3; "+offload" adds trainer.offload_optimizer.
QStringList dataParallel(const QString& name, const QString& strategy) {
    QStringList args = experiment(name, 0) + QStringList{"--set", "trainer.devices=2", "--set",
                                                         "trainer.strategy=" + strategy.section('+', 0, 0), "--set",
                                                         "trainer.accelerator=cpu"};
    if (strategy.endsWith("+offload")) args << "--set" << "trainer.offload_optimizer=true";
    return args;
}

// What must come out the same whether the run was interrupted or not.
struct Outcome {
    QString status;
    std::vector<hearth::StepMetrics> steps;
    std::vector<hearth::EpochMetrics> epochs;
    double test_loss = 0.0, test_accuracy = 0.0;
    std::vector<hearth::Prediction> predictions;
    QStringList log;
    QString stop_reason;   // early stopping's
};

Outcome readRun(const QString& db, int64_t id) {
    RunStore store(db.toStdString());
    Outcome o;
    o.status = QString::fromStdString(store.run(id)->status);
    o.stop_reason = QString::fromStdString(store.run(id)->stop_reason);
    o.steps = store.steps(id);
    o.epochs = store.epochs(id);
    if (const auto report = store.report(id, "test")) {
        o.test_loss = report->loss;
        o.test_accuracy = report->report.accuracy;
    }
    o.predictions = store.predictions(id, "test");
    for (const auto& line : store.logLines(id)) o.log << QString::fromStdString(line);
    return o;
}

}  // namespace

class TestCliResume : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    Outcome m_reference;

    QString db() const { return m_dir.filePath("runs.sqlite"); }
    CliResult cli(const QStringList& args, int timeout_ms = 300000) {
        return hearth::test::runCli(QStringList{"--db", db()} + args, timeout_ms);
    }
    QString artifacts(int64_t id) const { return m_dir.filePath("runs.sqlite.artifacts/" + QString::number(id)); }

    // Starts `run --events`, waits for the step event `after_step`, then sends `signal`. Returns
    // the run's id (0 on failure).
    int64_t interruptedRun(const QStringList& settings, int after_step, int signal) {
        QProcess p;
        p.start(HEARTH_CLI_PATH, QStringList{"--db", db(), "run", "--events"} + settings);
        if (!p.waitForStarted()) return 0;
        int64_t id = 0;
        bool sent = false;
        QByteArray pending;
        QElapsedTimer clock;
        clock.start();
        while (!sent && clock.elapsed() < 120000 && p.state() == QProcess::Running) {
            p.waitForReadyRead(1000);
            pending += p.readAllStandardOutput();
            while (pending.contains('\n')) {
                const int end = pending.indexOf('\n');
                const QJsonObject e = QJsonDocument::fromJson(pending.left(end)).object();
                pending.remove(0, end + 1);
                if (e.value("event").toString() == "run") id = e.value("run_id").toInteger();
                if (!sent && e.value("event").toString() == "step" && e.value("global_step").toInt() >= after_step) {
                    ::kill(static_cast<pid_t>(p.processId()), signal);
                    sent = true;
                }
            }
        }
        p.waitForFinished(120000);
        if (!sent) qWarning("the run ended before it could be interrupted: %s", p.readAllStandardError().constData());
        return sent ? id : 0;
    }

    void compareWithReference(const Outcome& got) { compareRuns(got, m_reference); }

    void compareRuns(const Outcome& got, const Outcome& reference) {
        const Outcome& m_reference = reference;
        QCOMPARE(got.status, QString("completed"));
        QCOMPARE(got.stop_reason, m_reference.stop_reason);
        QCOMPARE(got.steps.size(), m_reference.steps.size());
        for (size_t i = 0; i < got.steps.size(); ++i) {
            const auto& a = got.steps[i];
            const auto& b = m_reference.steps[i];
            QCOMPARE(a.global_step, b.global_step);
            QCOMPARE(a.epoch, b.epoch);
            QCOMPARE(a.batch, b.batch);
            if (a.loss != b.loss || a.accuracy != b.accuracy || a.lr != b.lr)
                QFAIL(qPrintable(QString("step %1 differs: loss %2 vs %3, accuracy %4 vs %5")
                                     .arg(a.global_step).arg(a.loss, 0, 'g', 17).arg(b.loss, 0, 'g', 17)
                                     .arg(a.accuracy).arg(b.accuracy)));
        }
        QCOMPARE(got.epochs.size(), m_reference.epochs.size());
        for (size_t i = 0; i < got.epochs.size(); ++i) {
            QCOMPARE(got.epochs[i].train_loss, m_reference.epochs[i].train_loss);
            QCOMPARE(got.epochs[i].train_accuracy, m_reference.epochs[i].train_accuracy);
            QCOMPARE(got.epochs[i].val_loss, m_reference.epochs[i].val_loss);
            QCOMPARE(got.epochs[i].val_accuracy, m_reference.epochs[i].val_accuracy);
        }
        QCOMPARE(got.test_loss, m_reference.test_loss);
        QCOMPARE(got.test_accuracy, m_reference.test_accuracy);
        QCOMPARE(got.predictions.size(), m_reference.predictions.size());
        for (size_t i = 0; i < got.predictions.size(); ++i) {
            QCOMPARE(got.predictions[i].predicted, m_reference.predictions[i].predicted);
            QCOMPARE(got.predictions[i].confidence, m_reference.predictions[i].confidence);   // the final weights
        }
        QVERIFY2(got.log.filter(QRegularExpression("resumed (at epoch|after)")).size() == 1,
                 qPrintable(got.log.join('\n')));
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        // Hearth's own thread count in the runs (ctest sets OMP_NUM_THREADS=2 for every test): the
        // two processes of a data-parallel run share the cores instead of running two threads each.
        qunsetenv("OMP_NUM_THREADS");
        qunsetenv("MKL_NUM_THREADS");
        const CliResult r = cli(QStringList{"run", "-q"} + experiment("reference", 0));
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        m_reference = readRun(db(), 1);
        QVERIFY(m_reference.steps.size() > 60);
        QVERIFY(m_reference.test_accuracy > 0.3);
        // A completed run keeps no training state.
        QVERIFY(hearth::trainingStatesIn(artifacts(1).toStdString()).empty());
    }

    void ctrlCThenResumeIsBitIdenticalWithoutWorkers() {
        const int64_t id = interruptedRun(experiment("ctrl-c", 0), 10, SIGINT);
        QVERIFY(id > 0);
        const Outcome stopped = readRun(db(), id);
        QCOMPARE(stopped.status, QString("stopped"));
        QVERIFY(stopped.steps.size() < m_reference.steps.size());
        // The stop itself saved a state at the step it ended on.
        const auto states = hearth::trainingStatesIn(artifacts(id).toStdString());
        QVERIFY(!states.empty());
        QCOMPARE(hearth::trainingStateStep(states.front()), stopped.steps.back().global_step);

        const CliResult r = cli({"resume", QString::number(id), "-q"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("Resuming run #" + QString::number(id)), qPrintable(r.out));
        compareWithReference(readRun(db(), id));
        QVERIFY(hearth::trainingStatesIn(artifacts(id).toStdString()).empty());
    }

    void killThenResumeIsBitIdenticalWithTwoWorkers() {
        const int64_t id = interruptedRun(experiment("killed", 2), 14, SIGKILL);
        QVERIFY(id > 0);
        const Outcome killed = readRun(db(), id);
        QCOMPARE(killed.status, QString("interrupted"));
        const auto states = hearth::trainingStatesIn(artifacts(id).toStdString());
        QVERIFY(!states.empty());
        QVERIFY(states.size() <= 2);   // keep_last
        // The resume continues from the newest state that the stored steps reach: on a GPU the
        // steps outrun the store's writer, and kill -9 can leave the newest state ahead of them.
        const int64_t last_stored = killed.steps.empty() ? 0 : killed.steps.back().global_step;
        int64_t saved_at = -1;
        for (const auto& s : states) {
            if (hearth::trainingStateStep(s) <= last_stored) {
                saved_at = hearth::trainingStateStep(s);
                break;
            }
        }
        QVERIFY2(saved_at >= 4 && saved_at % 4 == 0,
                 qPrintable(QString("states up to %1, steps stored up to %2")
                                .arg(hearth::trainingStateStep(states.front())).arg(last_stored)));

        // A state newer than every stored step (as a kill between the state's save and the store's
        // commit leaves it) is passed over, saying so.
        const QString ahead = artifacts(id) + "/" + QString::fromStdString(hearth::trainingStateFileName(999));
        QVERIFY(QFile::copy(QString::fromStdString(states.front()), ahead));

        const CliResult r = cli({"resume", QString::number(id), "-q"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("state-000000999.pt, was saved after the last step the run store holds"),
                 qPrintable(r.out));
        QVERIFY(!QFile::exists(ahead));   // the resumed run removed the states after its start
        const Outcome resumed = readRun(db(), id);
        compareWithReference(resumed);
        QVERIFY(resumed.log.filter("resumed at epoch 1, micro-batch " + QString::number(saved_at)).size() == 1);
    }

    void damagedOrForeignStatesAreRefusedAndTheRunStaysAsItWas() {
        // Its data through a link that can be taken away and put back.
        const QString data = m_dir.filePath("fashion-link");
        QVERIFY(QFile::link("/usr/share/datasets/fashion-mnist", data));
        const int64_t id = interruptedRun(experiment("to-damage", 0) + QStringList{"--set", "data.path=" + data}, 6,
                                          SIGINT);
        QVERIFY(id > 0);
        const Outcome before = readRun(db(), id);
        const auto states = hearth::trainingStatesIn(artifacts(id).toStdString());
        QVERIFY(!states.empty());
        const QString newest = QString::fromStdString(states.front());
        QFile file(newest);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray good = file.readAll();
        file.close();

        // Damaged: cut in half.
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(good.left(good.size() / 2));
        file.close();
        CliResult r = cli({"resume", QString::number(id)});
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.out.contains(QFileInfo(newest).fileName()), qPrintable(r.out));
        QVERIFY2(r.out.contains("left as it was"), qPrintable(r.out));
        Outcome after = readRun(db(), id);
        QCOMPARE(after.status, QString("stopped"));
        QCOMPARE(after.steps.size(), before.steps.size());
        QCOMPARE(after.log.size(), before.log.size());

        // Another model's state (an MLP's, for this CNN run).
        const int64_t mlp = interruptedRun(experiment("mlp", 0) + QStringList{"--set", "model.name=mlp",
                                                                              "--set", "data.limit=12000"},
                                           6, SIGINT);
        QVERIFY(mlp > 0);
        const auto mlp_states = hearth::trainingStatesIn(artifacts(mlp).toStdString());
        QVERIFY(!mlp_states.empty());
        r = cli({"resume", QString::number(id), "--from", QString::fromStdString(mlp_states.front())});
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.out.contains("another model") || r.out.contains("other model"), qPrintable(r.out));
        after = readRun(db(), id);
        QCOMPARE(after.status, QString("stopped"));
        QCOMPARE(after.steps.size(), before.steps.size());

        // Its data gone (moved since the run): refused before anything loads, naming the path.
        QVERIFY(QFile::remove(data));
        r = cli({"resume", QString::number(id)});
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.out.contains("data.path: no such file or folder: " + data) && r.out.contains("left as it was"), qPrintable(r.out));
        QVERIFY2(!r.out.contains("Resuming"), qPrintable(r.out));
        after = readRun(db(), id);
        QCOMPARE(after.status, QString("stopped"));
        QCOMPARE(after.steps.size(), before.steps.size());
        QVERIFY(QFile::link("/usr/share/datasets/fashion-mnist", data));

        // The good state back: the run resumes.
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(good);
        file.close();
        r = cli({"resume", QString::number(id), "-q"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QCOMPARE(readRun(db(), id).status, QString("completed"));
    }

    void completedRunsAndRunsWithoutStateAreRefused() {
        CliResult r = cli({"resume", "1"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("completed") && r.out.contains("nothing to resume"), qPrintable(r.out));

        // A stopped run whose states were removed.
        const int64_t id = interruptedRun(experiment("no-state", 0), 5, SIGINT);
        QVERIFY(id > 0);
        QDir(artifacts(id)).removeRecursively();
        r = cli({"resume", QString::number(id)});
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.out.contains("no saved training state"), qPrintable(r.out));
        QCOMPARE(readRun(db(), id).status, QString("stopped"));

        r = cli({"resume", "no-such-run"});
        QCOMPARE(r.exit_code, 2);
    }

    // 2 processes: Ctrl+C to the launcher stops every rank at the same step; rank 0's state file
    // holds each rank's part (its generators and sample counts; zero2: its optimizer share); the
    // resumed run launches its ranks again and ends as the same run never stopped.
    void dataParallelRunsResumeBitIdentically_data() {
        QTest::addColumn<QString>("strategy");
        QTest::newRow("ddp") << "ddp";
        QTest::newRow("zero2") << "zero2";
        QTest::newRow("zero3") << "zero3";
        // The offloaded optimizer's state is saved and loaded as its host-side optimizer's.
        QTest::newRow("zero2, offloaded optimizer") << "zero2+offload";
        // Model parallel: the CNN's two conv blocks on two processes (the head with the second).
        QTest::newRow("pipeline") << "pipeline";
    }

    void dataParallelRunsResumeBitIdentically() {
        QFETCH(QString, strategy);
        const CliResult ref = cli(QStringList{"run", "-q"} + dataParallel(strategy + "-reference", strategy));
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.out));
        int64_t ref_id = 0;   // the newest
        for (const auto& run : RunStore(db().toStdString()).listRuns()) ref_id = std::max(ref_id, run.id);
        const Outcome reference = readRun(db(), ref_id);
        QVERIFY(reference.steps.size() > 30);
        // Offload's cost is in the run's log ("optimizer offloaded: a CPU run, …; each step took … ms").
        QCOMPARE(reference.log.filter("optimizer offloaded: a CPU run").size(), strategy.endsWith("+offload") ? 1 : 0);
        {
            // The strategy ran as asked, and sharded evaluation counted every test sample once.
            RunStore store(db().toStdString());
            const auto started = store.runStarted(ref_id);
            const auto test = store.report(ref_id, "test");
            QVERIFY(started && test);
            int64_t support = 0;
            for (const auto& row : test->report.confusion)
                for (const auto count : row) support += count;
            QCOMPARE(support, started->test_size);
            const CliResult shown = cli({"show", QString::number(ref_id)});
            const QString name = strategy.section('+', 0, 0);
            QVERIFY2(shown.out.contains(name + (name == "ddp" ? " over gloo" : " (")), qPrintable(shown.out));
            QCOMPARE(shown.out.contains("optimizer stepped on separate host copies"), strategy.endsWith("+offload"));
        }

        const int64_t id = interruptedRun(dataParallel(strategy + "-stopped", strategy), 12, SIGINT);
        QVERIFY(id > 0);
        const Outcome stopped = readRun(db(), id);
        QCOMPARE(stopped.status, QString("stopped"));
        QVERIFY(stopped.steps.size() < reference.steps.size());
        const auto states = hearth::trainingStatesIn(artifacts(id).toStdString());
        QVERIFY(!states.empty());
        QCOMPARE(hearth::trainingStateStep(states.front()), stopped.steps.back().global_step);

        // A state of 2 processes does not resume a run of one (same model otherwise).
        const int64_t single = interruptedRun(experiment(strategy + "-single", 0), 3, SIGINT);
        QVERIFY(single > 0);
        CliResult r = cli({"resume", QString::number(single), "--from", QString::fromStdString(states.front())});
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.out.contains("2 process(es); this one has 1"), qPrintable(r.out));
        QCOMPARE(readRun(db(), single).status, QString("stopped"));

        r = cli({"resume", QString::number(id), "-q"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        compareRuns(readRun(db(), id), reference);
        QVERIFY(hearth::trainingStatesIn(artifacts(id).toStdString()).empty());
    }

    // Ctrl+C as the first epoch's last step is logged: the stop lands in that step, in the epoch's
    // validation (four times the training data: seconds, even on a busy machine) or just after it. Wherever, the stop saves
    // a state at the epoch's end (no safety checkpoint is due there: every 4 steps), and the
    // resumed run, validating the epoch again or going on with the next, ends as never stopped.
    void aStopAtAnEpochsEndResumesBitIdentically_data() {
        QTest::addColumn<int>("devices");
        QTest::addColumn<bool>("early");   // early stopping ends the run after its first epoch
        QTest::newRow("one process") << 1 << false;
        QTest::newRow("ddp, 2 processes") << 2 << false;
        QTest::newRow("one process, early stopping") << 1 << true;
    }

    void aStopAtAnEpochsEndResumesBitIdentically() {
        QFETCH(int, devices);
        QFETCH(bool, early);
        const QString tag = QString(devices == 1 ? "epoch-end" : "ddp-epoch-end") + (early ? "-early" : "");
        const auto settings = [devices, early](const QString& name) {
            QStringList args = experiment(name, 0) + QStringList{"--set", "data.val_fraction=0.8"};
            if (devices > 1) args += QStringList{"--set", "trainer.devices=2", "--set", "trainer.strategy=ddp",
                                                 "--set", "trainer.accelerator=cpu"};
            if (early) args += QStringList{"--set", "trainer.early_stopping.monitor=val_acc", "--set",
                                           "trainer.early_stopping.stop_at=0"};
            return args;
        };
        const CliResult ref = cli(QStringList{"run", "-q"} + settings(tag + "-reference"));
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.out));
        int64_t ref_id = 0;   // the newest
        for (const auto& run : RunStore(db().toStdString()).listRuns()) ref_id = std::max(ref_id, run.id);
        const Outcome reference = readRun(db(), ref_id);
        QCOMPARE(reference.epochs.size(), early ? size_t{1} : size_t{2});
        QCOMPARE(reference.stop_reason.isEmpty(), !early);
        const int64_t epoch_end = reference.epochs.front().global_step;
        QVERIFY2(epoch_end % 4 != 0, "the epoch must not end on a timed safety checkpoint");

        const int64_t id = interruptedRun(settings(tag + "-stopped"), static_cast<int>(epoch_end), SIGINT);
        QVERIFY(id > 0);
        const Outcome stopped = readRun(db(), id);
        QCOMPARE(stopped.status, QString("stopped"));
        const auto states = hearth::trainingStatesIn(artifacts(id).toStdString());
        QVERIFY(!states.empty());
        QCOMPARE(hearth::trainingStateStep(states.front()), epoch_end);
        QVERIFY2(stopped.log.filter("no training state could be saved").isEmpty(), qPrintable(stopped.log.join('\n')));

        const CliResult r = cli({"resume", QString::number(id), "-q"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        const Outcome resumed = readRun(db(), id);
        compareRuns(resumed, reference);
        const bool in_validation = !resumed.log.filter("the epoch trained: validating it").isEmpty();
        const bool after_it =
            !resumed.log.filter(early ? "resumed after early stopping ended the fit" : "resumed at epoch 2, micro-batch 0")
                 .isEmpty();
        QVERIFY2(in_validation != after_it, qPrintable(resumed.log.join('\n')));
        qInfo("the stop landed %s", in_validation ? "in the epoch's validation" : "in its last step or after its validation");
    }
};

QTEST_GUILESS_MAIN(TestCliResume)
#include "test_cli_resume.moc"
