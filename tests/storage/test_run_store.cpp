// RunStore + RunWriter: every event type round-trips, runs are found, edited, deleted, and
// a run whose writer died is reported as interrupted.
#include "RawDb.h"
#include "StoreTestEvents.h"
#include "engine/train/StateFiles.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "storage/Sha256.h"
#include "storage/report/RunReport.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace hearth;
using namespace hearth::testing;

class RunStoreTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    int counter_ = 0;
    std::string freshPath() { return dir_.filePath(QString("runs%1.sqlite").arg(++counter_)).toStdString(); }

    // A run with the given name/tags/status written through the writer.
    static int64_t addRun(RunWriter& writer, const std::string& name, bool finished) {
        const int64_t id = writer.createRun(name, "{}");
        writer.enqueue(id, startedEvent(name));
        if (finished) writer.enqueue(id, finishedEvent());
        return id;
    }

private Q_SLOTS:
    void roundTripKeepsEveryEventType();
    void ranksOfADataParallelRunAreStoredWithTheirLogs();
    void stepCurveSpansSeveralBlocksInOrder();
    void failedRunKeepsMessageAndSuggestion();
    void stoppedRunBeforeTestHasNoTestAccuracy();
    void sha256MatchesKnownAnswers();
    void resolveRunByIdPrefixAndAmbiguity();
    void listRunsFiltersNewestFirst();
    void editsRenameTagAndNote();
    void deleteRunRemovesRowsAndArtifactFiles();
    void changeCounterSeesOtherConnections();
    void deadWriterIsReportedInterrupted();
    void stepsAreCommittedWithinASecondWithoutFlush();
    void enqueueDoesNotWaitForALockedDatabase();
    void artifactsDirIsAbsoluteForRelativeDatabase();
    void reopenedRunContinuesAfterTheResumePoint();
    void historyKeptAtAStateIsWhatTheReopenedRunKeeps();
};

void RunStoreTest::roundTripKeepsEveryEventType() {
    const std::string path = freshPath();
    auto writer = std::make_shared<RunWriter>(path);
    const int64_t id = writer->createRun("alpha", R"({"name":"alpha"})");
    RunRecorder recorder(writer, id);
    QCOMPARE(recorder.runId(), id);

    const std::string checkpoint = writer->artifactsDir(id) + "best.pt";
    const std::string payload(70000, 'w');
    std::ofstream(checkpoint, std::ios::binary) << payload;

    const RunStarted started = startedEvent("alpha");
    recorder.onEvent(started);
    for (int64_t i = 0; i < 30; ++i) recorder.onEvent(stepEvent(i, 15));
    recorder.onEvent(epochEvent(0, 0.75));
    recorder.onEvent(epochEvent(1, 0.875));
    recorder.onEvent(reportEvent("val", 100));
    recorder.onEvent(reportEvent("test", 120));
    recorder.onEvent(predictionsEvent("test", 120));
    recorder.onEvent(CheckpointSaved{checkpoint, 1, "val_acc", 0.875, 1, "checkpoint", {}});
    recorder.onEvent(DeviceSample{1.5, -1, "host", 1000, 2000, 3000, 4000, 0.5});
    DeviceSample gpu{2.5, 0, "cuda:0", 5000, 6000, 7000, 8000, -1.0};
    gpu.driver_used_bytes = 6500;
    gpu.temperature_c = 61.0;
    gpu.power_w = 123.5;
    gpu.power_limit_w = 300.0;
    gpu.sm_clock_mhz = 1410.0;
    recorder.onEvent(gpu);
    recorder.onEvent(LogLine{LogLine::Level::Warning, "pin_memory has no effect on CPU"});
    recorder.onEvent(LogLine{LogLine::Level::Info, "epoch 1 done"});
    recorder.onEvent(finishedEvent());
    writer->flush();
    QVERIFY2(writer->lastError().empty(), writer->lastError().c_str());

    RunStore store(path);
    const auto run = store.run(id);
    QVERIFY(run.has_value());
    QCOMPARE(run->name, std::string("alpha"));
    QCOMPARE(run->status, std::string("completed"));
    QCOMPARE(run->config_json, started.config_json);
    QCOMPARE(run->device, std::string("cpu"));
    QVERIFY(run->finished_at >= run->started_at && run->started_at > 0);
    QCOMPARE(*run->best_val_accuracy, 0.875);
    QCOMPARE(*run->test_accuracy, 0.85);
    QCOMPARE(*run->train_time_s, 12.5);
    QCOMPARE(*run->samples_per_sec, 4400.0);
    QCOMPARE(*run->peak_memory_bytes, int64_t{123456789});
    QCOMPARE(run->epochs_completed, int64_t{2});
    QCOMPARE(run->global_steps, int64_t{30});
    QCOMPARE(run->pid, static_cast<int64_t>(getpid()));

    const auto back = store.runStarted(id);
    QVERIFY(back.has_value());
    QCOMPARE(back->effective, started.effective);
    QCOMPARE(back->environment.libtorch_version, started.environment.libtorch_version);
    QCOMPARE(back->environment.devices, started.environment.devices);
    QCOMPARE(back->environment.intra_op_threads, int64_t{2});
    QCOMPARE(back->class_names, started.class_names);
    QCOMPARE(back->model_summary, started.model_summary);
    QCOMPARE(back->test_size, int64_t{120});
    QCOMPARE(back->parameter_count, int64_t{2355});

    const auto steps = store.steps(id);
    QCOMPARE(steps.size(), size_t{30});
    const StepMetrics expected = stepEvent(17, 15);
    QCOMPARE(steps[17].epoch, expected.epoch);
    QCOMPARE(steps[17].batch, expected.batch);
    QCOMPARE(steps[17].global_step, expected.global_step);
    QCOMPARE(steps[17].loss, expected.loss);
    QCOMPARE(steps[17].lr, expected.lr);
    QCOMPARE(steps[17].data_wait_ms, expected.data_wait_ms);
    QCOMPARE(steps[17].eta_s, expected.eta_s);

    const auto epochs = store.epochs(id);
    QCOMPARE(epochs.size(), size_t{2});
    QCOMPARE(epochs[1].val_accuracy, 0.875);
    QCOMPARE(epochs[1].skipped_steps, int64_t{1});
    QCOMPARE(epochs[1].data_wait_share, 0.125);
    QVERIFY(epochs[1].is_best);
    QCOMPARE(epochs[1].breakdown.forward_ms, 11.0);
    QCOMPARE(epochs[1].breakdown.comm_wait_ms, 1.5);
    QCOMPARE(epochs[1].breakdown.sync_ms, 0.125);
    QCOMPARE(epochs[1].breakdown.step_ms, 36.0);
    QCOMPARE(epochs[1].breakdown.profiled, int64_t{4});

    const auto memory = store.memoryBreakdown(id);
    QVERIFY(memory.has_value());
    QCOMPARE(memory->device, std::string("cpu"));
    QCOMPARE(memory->optimizer_state_bytes, int64_t{2000});
    QCOMPARE(memory->activations_bytes, int64_t{50000});
    QCOMPARE(memory->peak_bytes, int64_t{61000});

    const auto test = store.report(id, "test");
    QVERIFY(test.has_value());
    QCOMPARE(test->loss, 0.4321);
    const auto expected_report = reportEvent("test", 120).report;
    QCOMPARE(test->report.confusion, expected_report.confusion);
    QCOMPARE(test->report.toText(), expected_report.toText());
    QVERIFY(store.report(id, "val").has_value());
    QVERIFY(!store.report(id, "train").has_value());

    const auto predictions = store.predictions(id, "test");
    QCOMPARE(predictions.size(), size_t{120});
    QCOMPARE(predictions[7].predicted, int64_t{(7 + 1) % 3});
    QCOMPARE(predictions[9].confidence, 0.95);
    const auto wrong = store.predictions(id, "test", true);
    QVERIFY(!wrong.empty());
    for (const auto& p : wrong) QVERIFY(p.true_label != p.predicted);

    const auto artifacts = store.artifacts(id);
    QCOMPARE(artifacts.size(), size_t{1});
    QCOMPARE(artifacts[0].kind, std::string("checkpoint"));
    QCOMPARE(artifacts[0].bytes, int64_t{70000});
    QCOMPARE(artifacts[0].sha256, Sha256::hex(payload.data(), payload.size()));
    QCOMPARE(artifacts[0].epoch, int64_t{1});
    QCOMPARE(artifacts[0].monitor, std::string("val_acc"));
    QCOMPARE(artifacts[0].path, std::filesystem::absolute(checkpoint).lexically_normal().string());
    QVERIFY(artifacts[0].path.find(".artifacts/" + std::to_string(id) + "/best.pt") != std::string::npos);

    const auto samples = store.deviceSamples(id);
    QCOMPARE(samples.size(), size_t{2});
    QCOMPARE(samples[1].name, std::string("cuda:0"));
    QCOMPARE(samples[1].peak_bytes, int64_t{7000});
    QCOMPARE(samples[0].utilization, 0.5);
    QCOMPARE(samples[0].temperature_c, -1.0);  // the host has none
    QCOMPARE(samples[1].driver_used_bytes, int64_t{6500});
    QCOMPARE(samples[1].temperature_c, 61.0);
    QCOMPARE(samples[1].power_w, 123.5);
    QCOMPARE(samples[1].power_limit_w, 300.0);
    QCOMPARE(samples[1].sm_clock_mhz, 1410.0);

    const auto logs = store.logEntries(id);
    QCOMPARE(logs.size(), size_t{2});
    QCOMPARE(int(logs[0].level), int(LogLine::Level::Warning));
    QCOMPARE(store.logLines(id)[1], std::string("epoch 1 done"));
}

void RunStoreTest::ranksOfADataParallelRunAreStoredWithTheirLogs() {
    const std::string path = freshPath();
    auto writer = std::make_shared<RunWriter>(path);
    const int64_t id = writer->createRun("ddp", "{}");
    const std::string log = writer->artifactsDir(id) + "rank1.log";
    std::ofstream(log) << "rank 1: epoch 1 done\n";
    RunRecorder recorder(writer, id);
    recorder.onEvent(startedEvent("ddp"));
    recorder.onEvent(DeviceSample{1.0, -1, "host", 10, 10, 20, 100, -1.0, 0});
    recorder.onEvent(DeviceSample{1.0, -1, "host", 11, 11, 21, 100, -1.0, 1});
    recorder.onEvent(RankSummary{0, 2, "gloo", "cpu", 101, 1500, 2.5, 600.0, 0.25, 1 << 20, ""});
    RankSummary second{1, 2, "gloo", "cpu", 102, 1500, 3.0, 500.0, 0.5, 2 << 20, log};
    second.gradients_bytes = 4096;           // a sharded rank's share (rank 0's were not measured)
    second.optimizer_state_bytes = 3 << 20;
    recorder.onEvent(second);
    recorder.onEvent(finishedEvent());
    writer->flush();
    QVERIFY2(writer->lastError().empty(), writer->lastError().c_str());

    RunStore store(path);
    const auto ranks = store.ranks(id);
    QCOMPARE(ranks.size(), size_t{2});
    QCOMPARE(ranks[1].rank, int64_t{1});
    QCOMPARE(ranks[1].world_size, int64_t{2});
    QCOMPARE(ranks[1].backend, std::string("gloo"));
    QCOMPARE(ranks[1].pid, int64_t{102});
    QCOMPARE(ranks[1].samples_per_sec, 500.0);
    QCOMPARE(ranks[1].peak_memory_bytes, int64_t{2 << 20});
    QCOMPARE(ranks[1].log_path, log);
    QCOMPARE(ranks[1].gradients_bytes, int64_t{4096});
    QCOMPARE(ranks[1].optimizer_state_bytes, int64_t{3 << 20});
    QCOMPARE(ranks[0].optimizer_state_bytes, int64_t{-1});
    const auto samples = store.deviceSamples(id);
    QCOMPARE(samples.size(), size_t{2});
    QCOMPARE(samples[1].rank, int64_t{1});
    // The log is one of the run's files: listed, checksummed, and shown.
    const auto artifacts = store.artifacts(id);
    QCOMPARE(artifacts.size(), size_t{1});
    QCOMPARE(artifacts[0].kind, std::string("log"));
    QCOMPARE(artifacts[0].bytes, int64_t{21});
    const std::string text = report::runText(report::loadRun(store, id));
    QVERIFY2(text.find("Ranks (2 processes, gloo)") != std::string::npos, text.c_str());
    QVERIFY(text.find(log) != std::string::npos);
    // Each rank's share of the gradients and optimizer state, "-" where not measured.
    const auto line = [&text](const std::string& part) {   // the line that holds `part`
        const size_t at = text.find(part);
        if (at == std::string::npos) return std::string();
        const size_t start = text.rfind('\n', at) + 1;
        return text.substr(start, text.find('\n', at) - start);
    };
    QVERIFY2(text.find("OPTIMIZER STATE") != std::string::npos, text.c_str());
    const std::string rank1 = line("cpu     102");
    QVERIFY2(rank1.find("2.0 MiB    4.0 KiB          3.0 MiB") != std::string::npos, text.c_str());
    QVERIFY2(line("cpu     101").find("1.0 MiB          -                -") != std::string::npos, text.c_str());
    QVERIFY(report::runJson(store, id).find("\"world_size\": 2") != std::string::npos);
    // A run on one device has no rank rows.
    QVERIFY(store.ranks(id + 1).empty());
}

void RunStoreTest::stepCurveSpansSeveralBlocksInOrder() {
    const std::string path = freshPath();
    RunWriter writer(path);
    const int64_t id = writer.createRun("long", "{}");
    for (int64_t i = 0; i < 2500; ++i) {
        writer.enqueue(id, stepEvent(i));
        if (i == 700 || i == 1100) writer.flush();   // partial blocks rewritten, then continued
    }
    writer.flush();
    RunStore store(path);
    const auto steps = store.steps(id);
    QCOMPARE(steps.size(), size_t{2500});
    for (size_t i = 0; i < steps.size(); ++i)
        QCOMPARE(steps[i].global_step, static_cast<int64_t>(i + 1));
    QCOMPARE(store.run(id)->global_steps, int64_t{2500});

    const auto tail = store.stepsAfter(id, 2000);
    QCOMPARE(tail.size(), size_t{500});
    QCOMPARE(tail.front().global_step, int64_t{2001});
    QCOMPARE(store.stepsAfter(id, 0).size(), size_t{2500});
    QVERIFY(store.stepsAfter(id, 2500).empty());
}

void RunStoreTest::failedRunKeepsMessageAndSuggestion() {
    const std::string path = freshPath();
    RunWriter writer(path);
    const int64_t id = writer.createRun("oom", "{}");
    writer.enqueue(id, epochEvent(0, 0.5));
    writer.enqueue(id, RunFailed{FailureKind::Training, "CUDA out of memory at batch 64", "use 16-mixed"});
    writer.flush();
    const auto run = RunStore(path).run(id);
    QCOMPARE(run->status, std::string("failed"));
    QCOMPARE(run->failure_kind, std::string("training"));
    QVERIFY(run->failure_message.find("CUDA out of memory at batch 64") != std::string::npos);
    QVERIFY(run->failure_message.find("use 16-mixed") != std::string::npos);
    QCOMPARE(run->epochs_completed, int64_t{1});
    QCOMPARE(*run->best_val_accuracy, 0.5);
    QVERIFY(run->finished_at > 0);
}

void RunStoreTest::stoppedRunBeforeTestHasNoTestAccuracy() {
    const std::string path = freshPath();
    RunWriter writer(path);
    const int64_t id = writer.createRun("stopped", "{}");
    RunFinished finished = finishedEvent();
    finished.status = "stopped";
    finished.test_accuracy = 0.0;
    writer.enqueue(id, finished);
    writer.flush();
    const auto run = RunStore(path).run(id);
    QCOMPARE(run->status, std::string("stopped"));
    QVERIFY(!run->test_accuracy.has_value());
}

void RunStoreTest::sha256MatchesKnownAnswers() {
    QCOMPARE(Sha256::hex("", 0), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    QCOMPARE(Sha256::hex("abc", 3), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    QCOMPARE(Sha256::hex(two_blocks.data(), two_blocks.size()),
             std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    Sha256 million;
    const std::string chunk(1000, 'a');
    for (int i = 0; i < 1000; ++i) million.update(chunk.data(), chunk.size());
    QCOMPARE(million.hexDigest(), std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

void RunStoreTest::resolveRunByIdPrefixAndAmbiguity() {
    const std::string path = freshPath();
    RunWriter writer(path);
    const int64_t a = addRun(writer, "resnet-a", true);
    const int64_t b = addRun(writer, "resnet-b", true);
    const int64_t m = addRun(writer, "mlp_50%", true);
    writer.flush();
    RunStore store(path);
    QCOMPARE(store.resolveRun(std::to_string(b)), b);
    QCOMPARE(store.resolveRun("resnet-a"), a);
    QCOMPARE(store.resolveRun("mlp"), m);
    QCOMPARE(store.resolveRun("mlp_50%"), m);
    try {
        store.resolveRun("res");
        QFAIL("an ambiguous prefix must be refused");
    } catch (const StoreError& e) {
        const std::string message = e.what();
        QVERIFY2(message.find("#" + std::to_string(a) + " resnet-a") != std::string::npos, e.what());
        QVERIFY2(message.find("#" + std::to_string(b) + " resnet-b") != std::string::npos, e.what());
    }
    QVERIFY_THROWS_EXCEPTION(StoreError, store.resolveRun("zzz"));
    QVERIFY_THROWS_EXCEPTION(StoreError, store.resolveRun("m%"));   // '%' is no wildcard
    QVERIFY_THROWS_EXCEPTION(StoreError, store.resolveRun("999"));
}

void RunStoreTest::listRunsFiltersNewestFirst() {
    const std::string path = freshPath();
    RunWriter writer(path);
    const int64_t first = addRun(writer, "first", true);
    const int64_t second = addRun(writer, "second", false);
    const int64_t third = addRun(writer, "third", true);
    writer.flush();
    RunStore store(path);
    store.setTags(first, {"baseline", "cnn"});
    store.setTags(third, {"cnn"});
    store.setNotes(second, "try a larger batch");

    const auto all = store.listRuns();
    QCOMPARE(all.size(), size_t{3});
    QCOMPARE(all[0].id, third);
    QCOMPARE(all[2].id, first);
    QCOMPARE(all[2].tags, (std::vector<std::string>{"baseline", "cnn"}));

    RunFilter by_tag;
    by_tag.tag = "cnn";
    QCOMPARE(store.listRuns(by_tag).size(), size_t{2});
    RunFilter running;
    running.status = "running";
    const auto live = store.listRuns(running);
    QCOMPARE(live.size(), size_t{1});
    QCOMPARE(live[0].id, second);
    RunFilter text;
    text.text = "LARGER";
    QCOMPARE(store.listRuns(text).at(0).id, second);
    text.text = "basel";
    QCOMPARE(store.listRuns(text).at(0).id, first);
    RunFilter limited;
    limited.limit = 2;
    QCOMPARE(store.listRuns(limited).size(), size_t{2});
    RunFilter completed;
    completed.status = "completed";
    completed.limit = 1;
    QCOMPARE(store.listRuns(completed).at(0).id, third);
}

void RunStoreTest::editsRenameTagAndNote() {
    const std::string path = freshPath();
    RunWriter writer(path);
    const int64_t id = addRun(writer, "draft", true);
    writer.flush();
    RunStore store(path);
    store.rename(id, "final");
    store.setTags(id, {"b", "a", "b"});
    store.setNotes(id, "keeps the best");
    const auto run = RunStore(path).run(id);   // a new connection sees the committed edits
    QCOMPARE(run->name, std::string("final"));
    QCOMPARE(run->tags, (std::vector<std::string>{"a", "b"}));
    QCOMPARE(run->notes, std::string("keeps the best"));
    QVERIFY_THROWS_EXCEPTION(StoreError, store.rename(id + 100, "x"));
}

void RunStoreTest::deleteRunRemovesRowsAndArtifactFiles() {
    const std::string path = freshPath();
    RunWriter writer(path);
    const int64_t keep = addRun(writer, "keep", true);
    const int64_t gone = addRun(writer, "gone", false);
    const std::string file = writer.artifactsDir(gone) + "last.pt";
    std::ofstream(file) << "weights";
    for (int64_t i = 0; i < 50; ++i) writer.enqueue(gone, stepEvent(i));
    writer.enqueue(gone, epochEvent(0, 0.5));
    writer.enqueue(gone, predictionsEvent("test", 30));
    writer.enqueue(gone, CheckpointSaved{file, 0, "val_acc", 0.5, 7, "checkpoint", {}});
    writer.enqueue(gone, finishedEvent());
    writer.flush();

    RunStore store(path);
    store.setTags(gone, {"old"});
    store.deleteRun(gone);
    QVERIFY(!store.run(gone).has_value());
    QVERIFY(store.run(keep).has_value());
    QVERIFY(!std::filesystem::exists(file));
    QVERIFY(!std::filesystem::exists(store.artifactsDir(gone)));
    RawDb raw(path);
    for (const char* table : {"step_metrics", "epoch_metrics", "predictions", "artifacts", "tags"})
        QCOMPARE(raw.integer(std::string("SELECT count(*) FROM ") + table + " WHERE run_id = " + std::to_string(gone)), 0LL);
    QCOMPARE(raw.text("PRAGMA integrity_check"), std::string("ok"));
}

void RunStoreTest::changeCounterSeesOtherConnections() {
    const std::string path = freshPath();
    RunStore store(path);
    const int64_t c0 = store.changeCounter();
    QCOMPARE(store.changeCounter(), c0);
    int64_t id = 0;
    {
        RunWriter writer(path);
        id = addRun(writer, "elsewhere", true);
    }
    const int64_t c1 = store.changeCounter();
    QVERIFY(c1 != c0);
    store.setNotes(id, "seen");
    QVERIFY(store.changeCounter() != c1);
}

void RunStoreTest::deadWriterIsReportedInterrupted() {
    const std::string path = freshPath();
    RunWriter writer(path);
    const int64_t mine = addRun(writer, "mine", false);
    const int64_t dead = addRun(writer, "dead", false);
    const int64_t reused = addRun(writer, "reused", false);
    const int64_t remote = addRun(writer, "remote", false);
    for (int64_t i = 0; i < 10; ++i) writer.enqueue(dead, stepEvent(i));
    writer.flush();

    // A real pid that no longer exists: a child that ran and was reaped.
    QProcess finished_process;
    finished_process.start("true", {});
    QVERIFY(finished_process.waitForStarted());
    const auto dead_pid = std::to_string(finished_process.processId());
    QVERIFY(finished_process.waitForFinished());
    RawDb raw(path);
    raw.exec("UPDATE runs SET pid = " + dead_pid + " WHERE id = " + std::to_string(dead));
    // Same pid as a live process, but that process started at another time: pid reuse.
    raw.exec("UPDATE runs SET process_start = process_start + 12345 WHERE id = " + std::to_string(reused));
    raw.exec("UPDATE runs SET pid = " + dead_pid + ", hostname = 'another-host' WHERE id = " + std::to_string(remote));

    RunStore store(path);
    QCOMPARE(store.run(mine)->status, std::string("running"));
    QCOMPARE(store.run(dead)->status, std::string("interrupted"));
    QCOMPARE(store.run(reused)->status, std::string("interrupted"));
    QCOMPARE(store.run(remote)->status, std::string("running"));   // another host: unknown, not dead
    QCOMPARE(store.steps(dead).size(), size_t{10});                 // data kept
    RunFilter interrupted;
    interrupted.status = "interrupted";
    QCOMPARE(store.listRuns(interrupted).size(), size_t{2});
    RunFilter running;
    running.status = "running";
    QCOMPARE(store.listRuns(running).size(), size_t{2});
}

void RunStoreTest::stepsAreCommittedWithinASecondWithoutFlush() {
    const std::string path = freshPath();
    RunWriter writer(path);
    const int64_t id = writer.createRun("quiet", "{}");
    RunStore store(path);
    for (int64_t i = 0; i < 5; ++i) writer.enqueue(id, stepEvent(i));
    QTRY_COMPARE_WITH_TIMEOUT(store.steps(id).size(), size_t{5}, 1000);
    QCOMPARE(store.run(id)->global_steps, int64_t{5});
}

void RunStoreTest::enqueueDoesNotWaitForALockedDatabase() {
    const std::string path = freshPath();
    RunWriter writer(path);
    const int64_t id = writer.createRun("patient", "{}");
    RawDb other(path);
    other.exec("BEGIN IMMEDIATE");   // another process holds the write lock
    QElapsedTimer timer;
    timer.start();
    for (int64_t i = 0; i < 20000; ++i) writer.enqueue(id, stepEvent(i));
    writer.enqueue(id, epochEvent(0, 0.5));   // asks for an immediate commit: it must wait, not fail
    const qint64 enqueue_ms = timer.elapsed();
    QTest::qWait(1500);
    QVERIFY2(enqueue_ms < 1000, qPrintable(QString("enqueue took %1 ms").arg(enqueue_ms)));
    other.exec("COMMIT");
    writer.flush();
    QVERIFY2(writer.lastError().empty(), writer.lastError().c_str());
    QCOMPARE(RunStore(path).steps(id).size(), size_t{20000});
}

void RunStoreTest::artifactsDirIsAbsoluteForRelativeDatabase() {
    const QString previous = QDir::currentPath();
    QVERIFY(QDir::setCurrent(dir_.path()));
    std::string dir;
    int64_t id = 0;
    {
        RunWriter writer("relative.sqlite");
        id = writer.createRun("here", "{}");
        dir = writer.artifactsDir(id);
    }
    const std::string from_store = RunStore("relative.sqlite").artifactsDir(id);
    QVERIFY(QDir::setCurrent(previous));
    QVERIFY2(std::filesystem::path(dir).is_absolute(), dir.c_str());
    QCOMPARE(dir, dir_.filePath("relative.sqlite.artifacts/" + QString::number(id) + "/").toStdString());
    QCOMPARE(from_store, dir);
    QVERIFY(std::filesystem::is_directory(dir));
}

// Resume: the run becomes running again and loses what was stored after the resume point (the
// step block holding it is cut); its new steps follow in order. Completed and live runs refuse.
void RunStoreTest::reopenedRunContinuesAfterTheResumePoint() {
    const std::string path = freshPath();
    RunWriter writer(path);
    const int64_t id = writer.createRun("resumable", "{}");
    writer.enqueue(id, startedEvent("resumable"));
    for (int64_t i = 0; i < 2500; ++i) writer.enqueue(id, stepEvent(i));   // 3 blocks, epochs 0..2
    writer.enqueue(id, epochEvent(0, 0.5));
    writer.enqueue(id, epochEvent(1, 0.9));
    writer.enqueue(id, reportEvent("test", 30));
    writer.enqueue(id, predictionsEvent("test", 30));
    const std::string state = writer.artifactsDir(id) + "state-000001500.pt";
    std::ofstream(state) << "state";
    writer.enqueue(id, stateSavedEvent(state));
    writer.enqueue(id, stoppedEvent());
    writer.flush();
    {
        const RunStore store(path);
        QCOMPARE(store.run(id)->status, std::string("stopped"));
        QCOMPARE(store.artifacts(id).back().kind, std::string("state"));
    }

    writer.reopenRun(id, 1500, 1, 0.0125 * 1499);
    {
        const RunStore store(path);
        const auto run = store.run(id);
        QCOMPARE(run->status, std::string("running"));
        QCOMPARE(run->pid, static_cast<int64_t>(getpid()));
        QCOMPARE(run->global_steps, int64_t{1500});
        QCOMPARE(run->epochs_completed, int64_t{1});
        QVERIFY(!run->test_accuracy.has_value());
        QCOMPARE(run->best_val_accuracy.value_or(-1), 0.5);   // of the epochs kept
        const auto steps = store.steps(id);
        QCOMPARE(steps.size(), size_t{1500});
        QCOMPARE(steps.back().global_step, int64_t{1500});
        QCOMPARE(store.epochs(id).size(), size_t{1});
        QVERIFY(!store.report(id, "test").has_value());
        QVERIFY(store.predictions(id, "test").empty());
        QCOMPARE(store.artifacts(id).size(), size_t{1});   // files stay (the state resumed from)
    }
    // The continuation: its steps follow, and the deleted state's record goes with it.
    for (int64_t i = 1500; i < 2600; ++i) writer.enqueue(id, stepEvent(i));
    CheckpointSaved removed;
    removed.kind = "state";
    removed.removed = {state};
    writer.enqueue(id, removed);
    writer.enqueue(id, finishedEvent());
    writer.flush();
    QVERIFY2(writer.lastError().empty(), writer.lastError().c_str());
    {
        const RunStore store(path);
        QCOMPARE(store.run(id)->status, std::string("completed"));
        const auto steps = store.steps(id);
        QCOMPARE(steps.size(), size_t{2600});
        for (size_t i = 0; i < steps.size(); ++i) QCOMPARE(steps[i].global_step, static_cast<int64_t>(i + 1));
        QVERIFY(store.artifacts(id).empty());
    }
    // A completed run, and one whose writer lives (this process), are refused unchanged.
    try {
        writer.reopenRun(id, 10, 0, 0.0);
        QFAIL("a completed run was reopened");
    } catch (const StoreError& e) {
        QVERIFY2(std::string(e.what()).find("completed") != std::string::npos, e.what());
    }
    QCOMPARE(RunStore(path).steps(id).size(), size_t{2600});
    const int64_t live = writer.createRun("live", "{}");
    try {
        writer.reopenRun(live, 0, 0, 0.0);
        QFAIL("a live run was reopened");
    } catch (const StoreError& e) {
        QVERIFY2(std::string(e.what()).find("still running") != std::string::npos, e.what());
    }
}

// A stop at an epoch's end saves its state before that epoch's validation (a stop during it) or
// after it (at the next epoch's start): the same step, two positions, told apart by the epoch the
// store recorded with the state. What historyKeptAt shows (the workbench's Resume draws it) is what
// reopenRun at that state keeps; a state the store has no record of falls back on its steps.
void RunStoreTest::historyKeptAtAStateIsWhatTheReopenedRunKeeps() {
    const std::string path = freshPath();
    RunWriter writer(path);
    // state_epoch: the loop's epoch in the state (-1: the state was never recorded).
    const auto stoppedRun = [&](const std::string& name, int64_t state_epoch) {
        const int64_t id = writer.createRun(name, "{}");
        writer.enqueue(id, startedEvent(name));
        for (int64_t i = 0; i < 20; ++i) writer.enqueue(id, stepEvent(i, 10));   // epochs 0 and 1
        writer.enqueue(id, epochEvent(0, 0.5));
        writer.enqueue(id, epochEvent(1, 0.7));
        const std::string state = writer.artifactsDir(id) + trainingStateFileName(20);
        std::ofstream(state) << "state";
        if (state_epoch >= 0) writer.enqueue(id, stateSavedEvent(state, state_epoch));
        writer.enqueue(id, stoppedEvent());
        writer.flush();
        return std::make_pair(id, state);
    };
    struct Case {
        const char* name;
        int64_t state_epoch;     // as recorded
        size_t epochs_kept;
    };
    for (const Case c : {Case{"after-validation", 2, 2}, Case{"in-validation", 1, 1}, Case{"unrecorded", -1, 1}}) {
        const auto [id, state] = stoppedRun(c.name, c.state_epoch);
        const auto kept = RunStore(path).historyKeptAt(id, state);
        QCOMPARE(kept.steps.size(), size_t{20});
        QCOMPARE(kept.epochs.size(), c.epochs_kept);
        if (c.state_epoch < 0) continue;
        writer.reopenRun(id, 20, c.state_epoch, 1.0);
        const RunStore store(path);
        QCOMPARE(store.epochs(id).size(), kept.epochs.size());
        QCOMPARE(store.steps(id).size(), kept.steps.size());
    }
}

QTEST_GUILESS_MAIN(RunStoreTest)
#include "test_run_store.moc"
