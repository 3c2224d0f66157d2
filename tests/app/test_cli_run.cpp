// hearth-cli run as a user drives it: good and bad configs, broken data files, Ctrl+C.
// Each bad input must give its exit code and a message naming the problem, never a crash.
#include "CliTestSupport.h"

#include "storage/RunStore.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>

using hearth::test::CliResult;
using hearth::test::cliOn;

namespace {

QStringList quickRun() {
    return {"run", "--set", "data.limit=300", "--set", "trainer.max_epochs=1", "--set", "model.name=mlp",
            "--set", "trainer.num_workers=0", "--set", "name=quick"};
}

}  // namespace

class TestCliRun : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

    QString db() const { return m_dir.filePath("runs.sqlite"); }

    CliResult cli(const QStringList& args, int timeout_ms = 120000) { return cliOn(db(), args, timeout_ms); }

    QString writeFile(const QString& name, const QByteArray& content) {
        return hearth::test::writeFileIn(QDir(m_dir.path()), name, content);
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void quickRunPrintsTheReportAndIsStored() {
        const CliResult r = cli(quickRun());
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("weighted avg"), qPrintable(r.out));
        QVERIFY(r.out.contains("macro avg"));
        QVERIFY(r.out.contains("Ankle boot"));
        QVERIFY(r.out.contains("Confusion matrix"));
        QVERIFY(r.out.contains("Epoch 1/1"));
        QVERIFY(r.out.contains("Run #"));
        const CliResult runs = cli({"runs"});
        QCOMPARE(runs.exit_code, 0);
        QVERIFY2(runs.out.contains("quick") && runs.out.contains("completed"), qPrintable(runs.out));
    }

    // A CPU run on a machine whose driver (the fake NVML) reports two GPUs: their statistics,
    // the step-time breakdown and the memory breakdown are stored and `show` summarises them.
    void showSummarisesDevicesBreakdownAndMemory() {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("HEARTH_NVML_LIBRARY", FAKE_NVML_PATH);
        // Hearth's own thread count (ctest sets OMP_NUM_THREADS for every test).
        env.remove("OMP_NUM_THREADS");
        env.remove("MKL_NUM_THREADS");
        const QString database = m_dir.filePath("profile.sqlite");
        QStringList args = quickRun();
        // On the CPU: on a GPU machine auto would train on the real GPU, which the fake NVML's
        // devices then do not match.
        args += {"--set", "trainer.profile_every_n_steps=1", "--set", "optimizer.name=adam", "--set",
                 "trainer.accelerator=cpu"};
        const CliResult run = cliOn(database, args, 120000, env);
        QVERIFY2(run.exit_code == 0, qPrintable(run.out));
        const CliResult show = cliOn(database, {"show", "1"});
        QCOMPARE(show.exit_code, 0);
        for (const char* part : {"Step-time breakdown", "Forward", "Backward", "Optimizer step", "Step (measured)",
                                 "Memory breakdown", "Parameters", "Optimizer state", "Activations", "Devices",
                                 "Fake GPU 0", "Fake GPU 1", "56 C", "151 W / 700 W", "1980 MHz", "80.00 GiB",
                                 "model FLOPs", "TFLOP/s", "engine.mfu_peak"})
            QVERIFY2(show.out.contains(part), qPrintable(QString("missing '%1' in:\n%2").arg(part, show.out)));
        // trainer.num_threads=0: one intra-op thread per physical core (Debian's 1.13 alone would
        // take half the logical CPUs, one core on a 2-vCPU VM), unless a thread variable says.
        QVERIFY2(QRegularExpression(R"(trainer\.num_threads +=\s+[1-9][0-9]* \(default: one per physical core\))")
                     .match(show.out).hasMatch(),
                 qPrintable(show.out));
        // What `show` printed is what the store holds: Adam's state is twice the parameters.
        hearth::RunStore store(database.toStdString());
        const auto memory = store.memoryBreakdown(1);
        QVERIFY(memory);
        QVERIFY(memory->parameters_bytes > 0);
        QCOMPARE(memory->optimizer_state_bytes, 2 * memory->parameters_bytes);
        // The achieved model FLOPs are stored with the run (no MFU without a device peak: a CPU).
        const auto run_row = store.run(1);
        QVERIFY(run_row->tflops && *run_row->tflops > 0.0);
        QVERIFY(!run_row->mfu);
        int gpu_samples = 0;
        for (const auto& d : store.deviceSamples(1)) gpu_samples += d.device == 1 && d.power_w == 151.0;
        QVERIFY(gpu_samples >= 1);
    }

    // Early stopping from the command line: the run completes and is tested, and the reason is
    // printed, stored and shown.
    void earlyStoppingIsStoredAndShown() {
        const QString database = m_dir.filePath("early.sqlite");
        const CliResult r = cliOn(database, {"run", "--set", "data.limit=400", "--set", "trainer.max_epochs=6", "--set",
                                             "model.name=mlp", "--set", "trainer.num_workers=0", "--set",
                                             "trainer.early_stopping.monitor=val_loss", "--set",
                                             "trainer.early_stopping.min_delta=100", "--set",
                                             "trainer.early_stopping.patience=1"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("Completed after 2 epoch(s)"), qPrintable(r.out));
        QVERIFY2(r.out.contains("Ended before the last epoch: early stopping: val_loss did not fall by more than 100"),
                 qPrintable(r.out));
        QVERIFY(r.out.contains("Test set (best checkpoint)"));
        hearth::RunStore store(database.toStdString());
        const auto run = store.run(1);
        QCOMPARE(QString::fromStdString(run->status), QString("completed"));
        QCOMPARE(run->epochs_completed, int64_t(2));
        QVERIFY(run->test_accuracy.has_value());
        QVERIFY(run->stop_reason.find("best ") != std::string::npos);
        const CliResult shown = cliOn(database, {"show", "1"});
        QVERIFY2(shown.out.contains("ended after epoch 2: early stopping: val_loss"), qPrintable(shown.out));
        const CliResult bad = cliOn(database, {"run", "--set", "trainer.early_stopping.monitor=val_f1"});
        QCOMPARE(bad.exit_code, 2);
        QVERIFY2(bad.out.contains("trainer.early_stopping.monitor"), qPrintable(bad.out));
    }

    // The build is what --version says it is: the cuda preset reports CUDA built in (with its
    // cuDNN and NCCL) and the devices it finds; the dev preset (Debian's CPU LibTorch) says it has
    // no CUDA. Runs record the same line in their environment.
    void versionReportsLibTorchAndCudaSupport() {
        const CliResult r = cli({"--version"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QVERIFY2(r.out.startsWith("hearth-cli " HEARTH_EXPECT_VERSION " (git "), qPrintable(r.out));
        QVERIFY2(r.out.contains("LibTorch " HEARTH_EXPECT_TORCH "."), qPrintable(r.out));
        const QRegularExpression builtIn(
            R"(CUDA \d+\.\d+ built in \(cuDNN \d+\.\d+\.\d+, NCCL \d+\.\d+\.\d+\), )"
            R"((no CUDA device found|\d+ CUDA devices? \(driver supports CUDA \d+\.\d+\):\n  cuda:0  ))");
        if (HEARTH_EXPECT_CUDA) {
            QVERIFY2(builtIn.match(r.out).hasMatch(), qPrintable(r.out));
            QVERIFY(!r.out.contains("not built in"));
        } else {
            QVERIFY2(r.out.contains("CUDA not built in (CPU-only LibTorch)"), qPrintable(r.out));
            QVERIFY(!r.out.contains("built in (cuDNN"));
        }
        QVERIFY2(r.out.contains("logical CPUs"), qPrintable(r.out));

        const CliResult run = cli({"run", "--set", "data.limit=200", "--set", "trainer.max_epochs=1", "--set",
                                   "model.name=mlp", "--set", "trainer.num_workers=0", "--set", "name=versioned"});
        QVERIFY2(run.exit_code == 0, qPrintable(run.out));
        const CliResult shown = cli({"show", "versioned"});
        const QString expected = HEARTH_EXPECT_CUDA ? "built in (cuDNN" : "CUDA not built in";
        QVERIFY2(shown.out.contains(expected), qPrintable(shown.out));
    }

    // The store fails while setting a run up (here: a file sits where the artifacts folder goes):
    // exit 3 with the store's message, never std::terminate; the run's row is kept as failed.
    // The ladder takes the same path and stops at its first step.
    void storeFailingToSetUpARunExits3() {
        const QString blocked = m_dir.filePath("blocked.sqlite");
        writeFile("blocked.sqlite.artifacts", "a file where the artifacts folder should be");
        CliResult r = cliOn(blocked, quickRun());
        QVERIFY2(r.exit_code == 3, qPrintable(r.out));
        QVERIFY2(r.out.contains("run store could not set up the run") && r.out.contains("artifacts folder"),
                 qPrintable(r.out));
        QVERIFY(!r.out.contains("terminate called"));
        const CliResult runs = cliOn(blocked, {"runs"});
        QVERIFY2(runs.out.contains("quick") && runs.out.contains("failed"), qPrintable(runs.out));

        r = cliOn(blocked, {"sweep", "--ladder", "--set", "data.limit=200", "--set", "trainer.max_epochs=1"});
        QVERIFY2(r.exit_code == 3, qPrintable(r.out));
        QVERIFY(r.out.contains("Ladder ended early"));
        QVERIFY(!r.out.contains("terminate called"));
    }

    void printConfigShowsDefaultsWithOverridesAndTrainsNothing() {
        const CliResult r = cli({"run", "--set", "trainer.max_epochs=7", "--print-config"});
        QCOMPARE(r.exit_code, 0);
        QVERIFY2(r.out.contains("\"max_epochs\": 7"), qPrintable(r.out));
        QVERIFY(r.out.contains("\"path\": \"/usr/share/datasets/fashion-mnist\""));
        QVERIFY(!r.out.contains("Epoch"));
        // The committed preset is exactly the built-in default experiment.
        QFile preset(QStringLiteral(HEARTH_FIXTURES_DIR "/../../resources/presets/fashion-mnist-cnn.json"));
        QVERIFY(preset.open(QIODevice::ReadOnly));
        const CliResult defaults = cli({"run", "--print-config"});
        QCOMPARE(defaults.out.trimmed(), QString::fromUtf8(preset.readAll()).trimmed());
    }

    void keysListsEveryKeyWithItsDefault() {
        const CliResult all = cli({"keys"});
        QCOMPARE(all.exit_code, 0);
        QVERIFY2(all.out.contains("trainer.precision  (choice)  default \"32-true\"  one of: 32-true, 16-mixed, bf16-mixed"),
                 qPrintable(all.out));
        QVERIFY(all.out.contains("data.limit  (integer or null)  default null  at least 1"));
        const CliResult some = cli({"keys", "optimizer"});
        QVERIFY(some.out.contains("optimizer.lr") && !some.out.contains("trainer."));
        const CliResult none = cli({"keys", "trainr"});
        QCOMPARE(none.exit_code, 2);
        QVERIFY(none.out.contains("no config key starts with 'trainr'"));
    }

    void ddpOnTwoProcessesStoresOneRun() {
#ifndef HEARTH_WITH_C10D
        QSKIP("this build has no c10d (ddp)");
#endif
        // 300 rows of 4 features; the class is the feature that is largest.
        QByteArray rows = "f0,f1,f2,f3,label\n";
        for (int i = 0; i < 300; ++i) {
            const int c = i % 3;
            for (int f = 0; f < 4; ++f) rows += QByteArray::number(((i * 7 + f * 13) % 10) / 10.0 + (f == c ? 3 : 0)) + ",";
            rows += "c" + QByteArray::number(c) + "\n";
        }
        const QString csv = writeFile("ddp.csv", rows);
        const QString db = m_dir.filePath("ddp.sqlite");
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("OMP_NUM_THREADS");   // ctest sets it for every test: Hearth's own default here
        env.remove("MKL_NUM_THREADS");
        const CliResult r = cliOn(db, {"run", "--set", "data.kind=csv", "--set", "data.path=" + csv,
                                 "--set", "model.name=mlp", "--set", "trainer.max_epochs=2", "--set",
                                 "trainer.num_workers=0", "--set", "trainer.devices=2", "--set", "trainer.strategy=ddp",
                                 // CPU ranks over Gloo, on a GPU machine too (NCCL refuses two ranks on one GPU)
                                 "--set", "trainer.accelerator=cpu", "--set", "trainer.ddp.timeout_s=60", "-q"},
                                  120000, env);
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QVERIFY(r.out.contains("Started 2 processes"));
        const CliResult runs = cliOn(db, {"runs"});
        QCOMPARE(runs.out.count("completed"), 1);   // rank 0 alone records the run
        const CliResult shown = cliOn(db, {"show", "1"});
        QVERIFY2(shown.out.contains("ddp over gloo, rank 0 of 2"), qPrintable(shown.out));
        QVERIFY(shown.out.contains("2 processes, one device each"));
        // The two processes share the physical cores, as torchrun shares them.
        QVERIFY2(shown.out.contains("(default: the physical cores shared by the 2 processes on this machine)"),
                 qPrintable(shown.out));
        // Both ranks' timings, rank 1's log linked from the run, and every rank's device samples.
        QVERIFY2(shown.out.contains("Ranks (2 processes, gloo)"), qPrintable(shown.out));
        hearth::RunStore store(db.toStdString());
        const auto ranks = store.ranks(1);
        QCOMPARE(ranks.size(), size_t{2});
        for (const auto& rank : ranks) {
            QVERIFY(rank.samples > 0 && rank.train_time_s > 0.0);
            // c10d's Logger timed the gradient allreduce of every synchronised step.
            QCOMPARE(rank.comm_steps, rank.steps);
            QVERIFY(rank.steps > 0 && rank.comm_ms > 0.0 && rank.overlap_ms <= rank.comm_ms);
        }
        QVERIFY(shown.out.contains("EXPOSED COMM"));
        QVERIFY(ranks[0].log_path.empty());
        QFile log(QString::fromStdString(ranks[1].log_path));
        QVERIFY2(log.open(QIODevice::ReadOnly), ranks[1].log_path.c_str());
        QVERIFY(log.readAll().contains("rank 1: epoch 2 done"));
        QVERIFY(shown.out.contains(QString::fromStdString(ranks[1].log_path)));
        // Rank 1's history is stored once (the live copies rank 0 relayed are not stored).
        std::vector<double> rank1_times;
        for (const auto& sample : store.deviceSamples(1))
            if (sample.rank == 1 && sample.device == -1) rank1_times.push_back(sample.elapsed_s);
        QVERIFY(!rank1_times.empty());
        QVERIFY(std::is_sorted(rank1_times.begin(), rank1_times.end()));
        QVERIFY(std::adjacent_find(rank1_times.begin(), rank1_times.end()) == rank1_times.end());
        // Sharded evaluation gathered every test sample once: the report's support is the split.
        const auto started = store.runStarted(1);
        const auto test = store.report(1, "test");
        QVERIFY(started && test);
        int64_t support = 0;
        for (const auto& row : test->report.confusion)
            for (const auto count : row) support += count;
        QCOMPARE(support, started->test_size);
        QCOMPARE(static_cast<int64_t>(store.predictions(1, "test").size()), started->test_size);
        // What each rank held: every ddp rank the whole optimizer state (as the run's memory
        // breakdown, rank 0's, says) and no gradients between steps (set to none after each).
        const auto memory = store.memoryBreakdown(1);
        QVERIFY(memory && memory->optimizer_state_bytes > 0);
        for (const auto& rank : ranks) {
            QCOMPARE(rank.optimizer_state_bytes, memory->optimizer_state_bytes);
            QCOMPARE(rank.gradients_bytes, memory->gradients_bytes);
        }
        QVERIFY(shown.out.contains("OPTIMIZER STATE"));
        // The run's peak is what has to fit: its largest process's (the breakdown is rank 0's).
        QCOMPARE(store.run(1)->peak_memory_bytes.value_or(0),
                 std::max(ranks[0].peak_memory_bytes, ranks[1].peak_memory_bytes));
        QVERIFY(shown.out.contains("(the largest of 2 processes)"));
        QVERIFY(shown.out.contains("rank 0's; every rank's gradients and optimizer state are under Ranks"));
        // zero1's ranks hold a part each (whole parameters), together all of it.
        const CliResult zero1 = cliOn(db, {"run", "--set", "data.kind=csv", "--set", "data.path=" + csv,
                                     "--set", "model.name=mlp", "--set", "trainer.max_epochs=1", "--set",
                                     "trainer.num_workers=0", "--set", "trainer.devices=2", "--set", "trainer.strategy=zero1",
                                     "--set", "trainer.accelerator=cpu", "--set", "trainer.ddp.timeout_s=60", "-q"});
        QVERIFY2(zero1.exit_code == 0, qPrintable(zero1.out));
        const auto shares = store.ranks(2);
        QCOMPARE(shares.size(), size_t{2});
        const QString held = QString("zero1 ranks %1 + %2 bytes of %3")
                                 .arg(shares[0].optimizer_state_bytes).arg(shares[1].optimizer_state_bytes)
                                 .arg(memory->optimizer_state_bytes);
        QVERIFY2(shares[0].optimizer_state_bytes > 0 && shares[1].optimizer_state_bytes > 0, qPrintable(held));
        QVERIFY2(shares[0].optimizer_state_bytes + shares[1].optimizer_state_bytes == memory->optimizer_state_bytes,
                 qPrintable(held));
        QCOMPARE(store.memoryBreakdown(2)->optimizer_state_bytes, shares[0].optimizer_state_bytes);
        QCOMPARE(store.run(2)->peak_memory_bytes.value_or(0),
                 std::max(shares[0].peak_memory_bytes, shares[1].peak_memory_bytes));
    }

    // Launched by PyTorch 2.11's own torchrun (issue 26): a build whose LibTorch is 1.x cannot talk
    // to the store torchrun's agent hosts. It must fail within seconds, say so and what to launch
    // instead, and leave a failed run in the store, never hang.
    void torchrunOfAnotherPyTorchFailsFastSayingWhatToUse() {
#ifndef HEARTH_WITH_C10D
        QSKIP("this build has no c10d (ddp)");
#endif
        if (!QString(HEARTH_EXPECT_TORCH).startsWith("1."))
            QSKIP("this build's LibTorch speaks the store protocol of PyTorch 2.11's torchrun: nothing to refuse");
        const QString torchrun = QStringLiteral(HEARTH_SOURCE_DIR "/.deps/python/bin/torchrun");
        if (!QFile::exists(torchrun))
            QSKIP("no torchrun in .deps/python (scripts/install-deps installs PyTorch 2.11 there)");
        const QString db = m_dir.filePath("torchrun.sqlite");
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        QElapsedTimer timer;
        timer.start();
        p.start(torchrun, QStringList{"--nnodes=1", "--nproc-per-node=2", "--rdzv-backend=c10d",
                                      "--rdzv-endpoint=127.0.0.1:0", "--no-python", HEARTH_CLI_PATH, "--db", db} +
                              quickRun() +
                              QStringList{"--set", "trainer.devices=2", "--set", "trainer.strategy=ddp", "-q"});
        if (!p.waitForFinished(120000)) {
            p.kill();
            p.waitForFinished();
            QFAIL("torchrun with the dev build still ran after 120 s");
        }
        const double seconds = static_cast<double>(timer.elapsed()) / 1000.0;
        const QString out = QString::fromUtf8(p.readAll());
        // torchrun itself (Python, importing PyTorch) takes some of these seconds on a busy machine.
        QVERIFY2(seconds < 30.0, qPrintable(QString::number(seconds) + " s\n" + out));
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() != 0, qPrintable(out));
        QVERIFY2(out.contains(QRegularExpression("cannot talk to its launcher's rendezvous store at (localhost|127\\.0\\.0\\.1):\\d+")),
                 qPrintable(out));
        QVERIFY2(out.contains("torchrun from PyTorch 1.13") && out.contains("hearth-cli's own launcher") &&
                     out.contains("cuda build of Hearth (LibTorch 2.11) with PyTorch 2.11's torchrun"),
                 qPrintable(out));
        // Every rank exits 2, a launch problem, as a bad config does.
        QVERIFY2(out.contains(QRegularExpression("exitcode\\s*:\\s*2")), qPrintable(out));
        // Rank 0 recorded the run as failed, with the message; nothing is left 'running'.
        const auto runs = hearth::RunStore(db.toStdString()).listRuns();
        QCOMPARE(runs.size(), size_t{1});
        QCOMPARE(QString::fromStdString(runs[0].status), QString("failed"));
    }

    void unknownConfigKeyExits2NamingIt() {
        const QString cfg = writeFile("bad-key.json", R"({"trainer": {"max_epoch": 2}})");
        const CliResult r = cli({"run", "--config", cfg});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("trainer.max_epoch") && r.out.contains("unknown key"), qPrintable(r.out));
        QVERIFY2(r.out.contains("did you mean 'max_epochs'?"), qPrintable(r.out));
        QVERIFY(!r.out.contains("terminate called"));
    }

    // A run asked to join a sweep the store does not have is refused before it trains, not failed
    // with the store's SQL once its row is written.
    void runInAMissingSweepIsRefusedBeforeItTrains() {
        const QString database = m_dir.filePath("no-sweep.sqlite");
        const CliResult r = cliOn(database, {"run", "--sweep", "77", "--set", "data.limit=100", "-q"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("--sweep: no sweep #77 in '" + database + "'") && !r.out.contains("INSERT"),
                 qPrintable(r.out));
        QVERIFY(hearth::RunStore(database.toStdString()).listRuns().empty());
    }

    // A typo of a command, an option or a `keys` prefix is named with what was likely meant; each
    // exits 2 and stores nothing.
    void mistypedCommandsAndOptionsNameWhatWasMeant() {
        const auto stored = [this] { return QFile::exists(db()) ? hearth::RunStore(db().toStdString()).listRuns().size() : 0; };
        const size_t before = stored();
        CliResult r = cli({"rnu"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("'rnu' is not a hearth-cli command (did you mean 'run'?)"), qPrintable(r.out));
        QVERIFY2(!r.out.contains("A subcommand is required"), qPrintable(r.out));
        r = cli({"run", "--sett", "trainer.max_epochs=1"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("hearth-cli run has no option --sett (did you mean --set?)"), qPrintable(r.out));
        // A config key's name as an option: the --set that sets it, with the value typed.
        r = cli({"run", "--precision", "bf16-mixed"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("--set trainer.precision=bf16-mixed"), qPrintable(r.out));
        // Spelled as Lightning's and argparse's options are, or by the form's label.
        r = cli({"run", "--max-epochs", "3", "--learning-rate=0.01"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("--set trainer.max_epochs=3") && r.out.contains("--set optimizer.lr=0.01"), qPrintable(r.out));
        // A value outside an option's set: CLI11's message, then the value likely meant.
        r = cli({"runs", "--status", "complete"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("hint: did you mean --status completed?"), qPrintable(r.out));
        r = cli({"keys", "traner"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("no config key starts with 'traner' (did you mean 'trainer'?)"), qPrintable(r.out));
        r = cli({"keys", "Source"});   // the form's label
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("no config key starts with 'Source' (did you mean 'data.path'?)"), qPrintable(r.out));
        // Nothing close: the plain message, no guess.
        r = cli({"zzzzzz"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("'zzzzzz' is not a hearth-cli command\n"), qPrintable(r.out));
        // An image given to predict as a second word: the option that takes it.
        r = cli({"predict", "1", "shirt.png", "-o", "out.csv"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("hint: predict takes image files and folders with --images"), qPrintable(r.out));
        QCOMPARE(stored(), before);
    }

    void unknownOverrideAndBadValueExit2() {
        CliResult r = cli({"run", "--set", "trainer.batchsize=3"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("trainer.batchsize"), qPrintable(r.out));
        r = cli({"run", "--set", "trainer.precision=fp8"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("trainer.precision") && r.out.contains("bf16-mixed"), qPrintable(r.out));
        r = cli({"run", "--set", "trainer.precision=bf16"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("(did you mean 'bf16-mixed'?)"), qPrintable(r.out));
    }

    // trainer.cuda_graph=step without a GPU (every CI machine): refused before anything runs,
    // naming the key and why, whichever build this is.
    void cudaGraphWithoutCudaExits2NamingTheKey() {
        if (QFile::exists("/dev/nvidiactl")) QSKIP("this machine has a GPU: the capture itself is tested in test_cuda");
        const CliResult r = cli({"run", "--set", "trainer.cuda_graph=step", "--set", "name=graph-cpu"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("trainer.cuda_graph") &&
                     (r.out.contains("needs a CUDA build") || r.out.contains("trains on the CPU")),
                 qPrintable(r.out));
        QVERIFY(!r.out.contains("terminate called"));
    }

    // 16-mixed on CPU: LibTorch 1.13 has no float16 CPU autocast, so validation refuses it before
    // anything runs; 2.x trains with it (autocast to float16 and the GradScaler's CPU kernels).
    void sixteenMixedOnCpuFollowsWhatLibTorchSupports() {
        const CliResult r = cli({"run", "--set", "trainer.precision=16-mixed", "--set", "trainer.accelerator=cpu",
                                 "--set", "data.limit=300", "--set", "trainer.max_epochs=1", "--set", "model.name=mlp",
                                 "--set", "trainer.num_workers=0", "--set", "name=fp16-cpu"});
        if (HEARTH_EXPECT_CPU_FP16) {
            QVERIFY2(r.exit_code == 0, qPrintable(r.out));
            QVERIFY2(r.out.contains("weighted avg"), qPrintable(r.out));
            const CliResult shown = cli({"show", "fp16-cpu"});
            QVERIFY2(shown.out.contains("16-mixed"), qPrintable(shown.out));
        } else {
            QCOMPARE(r.exit_code, 2);
            QVERIFY2(r.out.contains("trainer.precision") && r.out.contains("CUDA"), qPrintable(r.out));
        }
    }

    // A CSV saved by Excel on Windows (class names in Windows-1252): it trains, says how it was
    // read, and the run is stored whole with the names in UTF-8 (it used to exit 0 with a store
    // warning and leave the run without report, stuck as running).
    void windows1252CsvTrainsAndIsStoredWhole() {
        QByteArray csv = "f1,f2,label\n";
        for (int i = 0; i < 120; ++i)
            csv += QByteArray::number(i % 3 + (i % 7) * 0.01) + "," + QByteArray::number((i * 5) % 11) + "," +
                   (i % 3 == 0   ? QByteArray("caf\xe9")
                    : i % 3 == 1 ? QByteArray("th\xe9")
                                 : QByteArray("eau")) +
                   "\n";
        const QString path = writeFile("excel.csv", csv);
        const CliResult r =
            cli({"run", "--set", "data.kind=csv", "--set", "data.path=" + path, "--set", "model.name=mlp", "--set",
                 "trainer.max_epochs=2", "--set", "trainer.num_workers=0", "--set", "name=excel"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("excel.csv is not valid UTF-8; it was read as Windows-1252"), qPrintable(r.out));
        QVERIFY2(!r.out.contains("run store"), qPrintable(r.out));
        QVERIFY2(r.out.contains(QString::fromUtf8("café")), qPrintable(r.out));
        const CliResult shown = cli({"show", "excel"});
        QVERIFY2(shown.out.contains("completed") && shown.out.contains(QString::fromUtf8("thé")),
                 qPrintable(shown.out));
        QVERIFY2(shown.out.contains("weighted avg"), qPrintable(shown.out));
    }

    // A run given only --set keys (or a blank name) is named after its data and model; the built-in
    // experiment and a chosen name keep theirs.
    void defaultNameFollowsTheDataAndModel() {
        const QString path = writeFile("iris.csv", "f1,label\n1,a\n2,b\n");
        const CliResult csv = cli({"run", "--set", "data.kind=csv", "--set", "data.path=" + path, "--set",
                                   "model.name=mlp", "--print-config"});
        QVERIFY2(csv.exit_code == 0, qPrintable(csv.out));
        QVERIFY2(csv.out.contains("\"name\": \"iris-mlp\""), qPrintable(csv.out));
        const CliResult mlp = cli({"run", "--set", "model.name=mlp", "--print-config"});
        QVERIFY2(mlp.out.contains("\"name\": \"fashion-mnist-mlp\""), qPrintable(mlp.out));
        const CliResult builtIn = cli({"run", "--print-config"});
        QVERIFY2(builtIn.out.contains("\"name\": \"fashion-cnn\""), qPrintable(builtIn.out));
        const CliResult chosen = cli({"run", "--set", "model.name=mlp", "--set", "name=mine", "--print-config"});
        QVERIFY2(chosen.out.contains("\"name\": \"mine\""), qPrintable(chosen.out));
        // A name is one line; a blank one is no name.
        const CliResult spaced = cli({"run", "--set", "name= my\trun\n", "--print-config"});
        QVERIFY2(spaced.out.contains("\"name\": \"my run\""), qPrintable(spaced.out));
        const CliResult blank = cli({"run", "--set", "model.name=mlp", "--set", "name= ", "--print-config"});
        QVERIFY2(blank.out.contains("\"name\": \"fashion-mnist-mlp\""), qPrintable(blank.out));
    }

    void invalidJsonExits2WithLine() {
        const QString cfg = writeFile("broken.json", "{\n  \"name\": \"x\",\n  \"trainer\": {\n}");
        const CliResult r = cli({"run", "--config", cfg});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.contains("not valid JSON") && r.out.contains("broken.json"), qPrintable(r.out));
    }

    // A path that is not there stops every job before it stores anything: no failed run, no
    // sweep whose table would judge steps that never ran.
    void missingDataPathExits3NamingItAndStoresNothing() {
        const QString fresh = m_dir.filePath("missing-data.sqlite");
        const CliResult r = cliOn(fresh, {"run", "--set", "data.path=/nonexistent/fashion", "--set",
                                          "model.name=resnet18", "--set", "model.pretrained=no-such-checkpoint"});
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.out.contains("error: data.path: no such file or folder: /nonexistent/fashion"), qPrintable(r.out));
        QVERIFY2(r.out.contains("error: model.pretrained: no such file or folder: no-such-checkpoint (relative to "),
                 qPrintable(r.out));
        QVERIFY2(!QFile::exists(fresh), "a run that never started was stored");
        const CliResult sweep = cliOn(fresh, {"sweep", "--ladder", "--set", "data.path=/nonexistent/fashion"});
        QCOMPARE(sweep.exit_code, 3);
        QVERIFY2(sweep.out.contains("data.path: no such file or folder: /nonexistent/fashion"), qPrintable(sweep.out));
        QVERIFY2(!sweep.out.contains("keep"), qPrintable(sweep.out));
        QVERIFY2(!QFile::exists(fresh), "a sweep that never ran was stored");
        const CliResult tune = cliOn(fresh, {"tune", "--lr", "--set", "data.path=/nonexistent/fashion"});
        QCOMPARE(tune.exit_code, 3);
        QVERIFY2(tune.out.contains("data.path: no such file or folder: /nonexistent/fashion"), qPrintable(tune.out));
        // A folder where csv data reads one file: said before anything is stored too.
        const CliResult folder = cliOn(fresh, {"run", "--set", "data.kind=csv", "--set", "model.name=mlp", "--set", "data.path=" + m_dir.path()});
        QCOMPARE(folder.exit_code, 3);
        QVERIFY2(folder.out.contains("error: data.path: " + m_dir.path() + " is a folder; csv data is one CSV file"),
                 qPrintable(folder.out));
        QVERIFY2(!QFile::exists(fresh), "a run that never started was stored");
        // A CSV without the label column the config reads: said from its header, before anything
        // is stored, with the column likely meant.
        const QString csv = writeFile("capital-label.csv", "a,b,Label\n1,2,x\n3,4,y\n");
        const CliResult column = cliOn(fresh, {"run", "--set", "data.kind=csv", "--set", "model.name=mlp", "--set", "data.path=" + csv});
        QCOMPARE(column.exit_code, 3);
        QVERIFY2(column.out.contains("error: data.label_column: " + csv +
                                     ": no label column 'label' (did you mean 'Label'?); the columns are [a, b, Label]"),
                 qPrintable(column.out));
        QVERIFY2(column.out.contains("--set data.label_column=NAME"), qPrintable(column.out));
        QVERIFY2(!QFile::exists(fresh), "a run that never started was stored");
    }

    void truncatedIdxExits3NamingFileAndSize() {
        const QString folder = m_dir.filePath("truncated-fashion");
        QDir().mkpath(folder);
        const QString src = "/usr/share/datasets/fashion-mnist/";
        for (const char* name : {"train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"})
            QVERIFY(QFile::copy(src + name, folder + "/" + name));
        QFile full(src + "train-images-idx3-ubyte.gz");
        QVERIFY(full.open(QIODevice::ReadOnly));
        QFile cut(folder + "/train-images-idx3-ubyte.gz");
        QVERIFY(cut.open(QIODevice::WriteOnly));
        cut.write(full.read(full.size() / 2));
        cut.close();
        const CliResult r = cli({"run", "--set", "data.path=" + folder});
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.out.contains("train-images-idx3-ubyte.gz"), qPrintable(r.out));
        QVERIFY2(r.out.contains("47040016"), qPrintable(r.out));   // the size the header promises
    }

    void malformedCsvRowExits3NamingTheLine() {
        QByteArray csv = "a,b,label\n";
        for (int i = 0; i < 40; ++i) csv += QByteArray::number(i) + "," + QByteArray::number(i * 2) + "," + (i % 2 ? "x" : "y") + "\n";
        csv += "1,2\n";   // line 42: a field short
        const QString path = writeFile("short-row.csv", csv);
        const CliResult r = cli({"run", "--set", "data.kind=csv", "--set", "data.path=" + path, "--set", "model.name=mlp"});
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.out.contains("short-row.csv:42"), qPrintable(r.out));
    }

    void notADatabaseExits3AndLeavesTheFileAlone() {
        const QByteArray junk = "this is not a database, it is a shopping list\n";
        const QString path = writeFile("junk.sqlite", junk);
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(HEARTH_CLI_PATH, QStringList{"--db", path} + quickRun());
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 3);
        QVERIFY2(QString::fromUtf8(p.readAll()).contains("junk.sqlite"), "message names the file");
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), junk);
    }

    void ctrlCStopsCleanlyWithExit130() {
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(HEARTH_CLI_PATH, {"--db", db(), "run", "--set", "model.name=mlp", "--set", "trainer.num_workers=0",
                                  "--set", "name=interrupted-by-user", "--set", "trainer.log_every_n_steps=1"});
        QVERIFY(p.waitForStarted());
        QString out;
        QTRY_VERIFY_WITH_TIMEOUT((out += QString::fromUtf8(p.readAll())).contains("Epoch 1/"), 60000);
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(60000));
        out += QString::fromUtf8(p.readAll());
        QCOMPARE(p.exitCode(), 130);
        QVERIFY2(out.contains("Stopped"), qPrintable(out));
        const CliResult runs = cli({"runs"});
        QVERIFY2(runs.out.contains("interrupted-by-user") && runs.out.contains("stopped"), qPrintable(runs.out));
    }
};

QTEST_GUILESS_MAIN(TestCliRun)
#include "test_cli_run.moc"
