// A run on two devices started from the workbench: TrainingSession's child hearth-cli becomes the
// launcher (two real Gloo processes on this CPU), its rank 0 records the run, and the live
// events arrive through the same eventsReady batches as an in-process run's: steps, epochs,
// device samples of both ranks and both ranks' summaries. Stop stops every rank after its
// current step. The event lines themselves round-trip (eventjson).
#include "UiTestSupport.h"

#include "engine/events/EventJson.h"
#include "storage/RunStore.h"
#include "ui/live/DeviceMonitorPanel.h"
#include "ui/live/LiveView.h"
#include "ui/live/MemoryGauge.h"
#include "ui/session/CliProcess.h"
#include "ui/session/ProcessRun.h"
#include "ui/session/TrainingSession.h"

#include <QSignalSpy>
#include <QTest>

#include <set>

using namespace hearth;

namespace {

hearth::ExperimentConfig twoDevices(const std::string& name, int64_t epochs)
{
    auto c = test::tinyExperiment(name);
    c.data.limit = 2000;
    c.trainer.max_epochs = epochs;
    c.trainer.devices = 2;
    c.trainer.strategy = "ddp";
    c.trainer.ddp.timeout_s = 60;
    return c;
}

}  // namespace

class TestProcessRun : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        test::isolateSettings(m_dir);
        qputenv("OMP_NUM_THREADS", "1");
    }

    void eventLinesRoundTrip()
    {
        hearth::StepMetrics step;
        step.epoch = 2;
        step.global_step = 41;
        step.loss = 0.125;
        step.samples_per_sec = 1234.5;
        const auto back = eventjson::fromLine(eventjson::toLine(step));
        QVERIFY(back && std::holds_alternative<hearth::StepMetrics>(*back));
        QCOMPARE(std::get<hearth::StepMetrics>(*back).global_step, int64_t(41));
        QCOMPARE(std::get<hearth::StepMetrics>(*back).loss, 0.125);
        hearth::RankSummary rank{1, 2, "gloo", "cpu", 77, 1000, 2.0, 500.0, 0.1, 1 << 20, "/tmp/r1.log", 10, 10, 3.5,
                                 0.5};
        const auto r = eventjson::fromLine(eventjson::toLine(rank));
        QVERIFY(r && std::holds_alternative<hearth::RankSummary>(*r));
        QCOMPARE(std::get<hearth::RankSummary>(*r).log_path, std::string("/tmp/r1.log"));
        QCOMPARE(std::get<hearth::RankSummary>(*r).comm_ms, 3.5);
        QCOMPARE(eventjson::runIdFromLine(eventjson::runLine(12)).value_or(0), int64_t(12));
        QVERIFY(!eventjson::fromLine("Started 2 processes").has_value());
        QVERIFY(!eventjson::fromLine(R"({"event": "step", "loss": "high"})").has_value());
    }

    void twoDevicesTrainInProcessesAndReportLive()
    {
#ifndef HEARTH_WITH_C10D
        QSKIP("this build has no c10d (ddp)");
#endif
        QVERIFY2(!ui::CliProcess::cliPath().isEmpty(), HEARTH_CLI_PATH);
        const auto config = twoDevices("two-devices", 2);
        const QString db = m_dir.filePath(QStringLiteral("processes.sqlite"));
        ui::TrainingSession session(db);
        QSignalSpy started(&session, &ui::TrainingSession::runStarted);
        QSignalSpy ended(&session, &ui::TrainingSession::runEnded);
        int steps = 0, epochs = 0, liveRank1 = 0;
        bool rank1SampledBeforeTheEnd = false, finished = false;
        std::set<int64_t> sampledRanks, summarisedRanks;
        connect(&session, &ui::TrainingSession::eventsReady, this, [&](const ui::EventBatch& batch) {
            for (const auto& e : batch) {
                steps += std::holds_alternative<hearth::StepMetrics>(e) ? 1 : 0;
                epochs += std::holds_alternative<hearth::EpochMetrics>(e) ? 1 : 0;
                finished = finished || std::holds_alternative<hearth::RunFinished>(e);
                if (const auto* d = std::get_if<hearth::DeviceSample>(&e)) {
                    sampledRanks.insert(d->rank);
                    rank1SampledBeforeTheEnd = rank1SampledBeforeTheEnd || (d->rank == 1 && epochs == 0);
                }
                if (const auto* r = std::get_if<hearth::RankSummary>(&e)) {
                    if (r->final)
                        summarisedRanks.insert(r->rank);
                    else
                        liveRank1 += r->rank == 1 && r->samples_per_sec > 0.0 ? 1 : 0;
                }
            }
        });
        // The live view shows a gauge per rank (rank 1's when fit ends).
        ui::LiveView view;
        connect(&session, &ui::TrainingSession::eventsReady, &view, &ui::LiveView::handleEvents);
        QString error;
        QVERIFY2(session.start(config, &error), qPrintable(error));
        QVERIFY(session.isRunning());
        QTRY_COMPARE_WITH_TIMEOUT(started.count(), 1, 60000);
        QVERIFY(session.currentRunId() > 0);
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 180000);
        QCOMPARE(ended.at(0).at(1).value<hearth::RunStatus>(), hearth::RunStatus::Completed);
        QVERIFY(!session.isRunning());
        QVERIFY(steps > 0);
        QCOMPARE(epochs, 2);
        QCOMPARE(sampledRanks, (std::set<int64_t>{0, 1}));
        QCOMPARE(summarisedRanks, (std::set<int64_t>{0, 1}));
        // Rank 1 is seen while it trains: its memory and its samples/s at every logged step.
        QVERIFY(rank1SampledBeforeTheEnd);
        QVERIFY2(liveRank1 >= steps / 2, qPrintable(QString("%1 live updates, %2 steps").arg(liveRank1).arg(steps)));
        QVERIFY(view.devices()->gauge(-1, 0) && view.devices()->gauge(-1, 1));
        QVERIFY(view.devices()->gauge(-1, 1)->allocated() > 0);
        // Rank 0 recorded the run in the workbench's store: one run, both ranks.
        RunStore store(db.toStdString());
        QCOMPARE(store.run(session.currentRunId())->status, std::string("completed"));
        QCOMPARE(store.ranks(session.currentRunId()).size(), size_t(2));
        QCOMPARE(store.listRuns().size(), size_t(1));
    }

    void stopStopsEveryRank()
    {
#ifndef HEARTH_WITH_C10D
        QSKIP("this build has no c10d (ddp)");
#endif
        const QString db = m_dir.filePath(QStringLiteral("stopped.sqlite"));
        ui::TrainingSession session(db);
        QSignalSpy ended(&session, &ui::TrainingSession::runEnded);
        bool stepSeen = false;
        connect(&session, &ui::TrainingSession::eventsReady, this, [&](const ui::EventBatch& batch) {
            for (const auto& e : batch)
                stepSeen = stepSeen || std::holds_alternative<hearth::StepMetrics>(e);
        });
        QVERIFY(session.start(twoDevices("stopped", 50)));
        QTRY_VERIFY_WITH_TIMEOUT(stepSeen, 60000);
        session.stop();
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 60000);
        QCOMPARE(ended.at(0).at(1).value<hearth::RunStatus>(), hearth::RunStatus::Stopped);
        RunStore store(db.toStdString());
        const auto runs = store.listRuns();
        QCOMPARE(runs.size(), size_t(1));
        QCOMPARE(runs[0].status, std::string("stopped"));
        QVERIFY(runs[0].epochs_completed < 50);
    }
};

QTEST_MAIN(TestProcessRun)
#include "test_process_run.moc"
