// UiEventSink: the engine -> GUI queue coalesces steps when the GUI lags and never drops the rest.
#include "ui/session/UiEventSink.h"

#include <QTest>

#include <thread>

using hearth::ui::UiEventSink;

class TestUiEventSink : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void takeAllMovesEverythingOutInOrder()
    {
        UiEventSink sink;
        sink.onEvent(hearth::RunStarted{});
        hearth::StepMetrics s;
        s.global_step = 1;
        sink.onEvent(s);
        sink.onEvent(hearth::EpochMetrics{});
        const auto batch = sink.takeAll();
        QCOMPARE(batch.size(), size_t(3));
        QVERIFY(std::holds_alternative<hearth::RunStarted>(batch[0]));
        QCOMPARE(std::get<hearth::StepMetrics>(batch[1]).global_step, int64_t(1));
        QVERIFY(std::holds_alternative<hearth::EpochMetrics>(batch[2]));
        QCOMPARE(sink.pending(), size_t(0));
        QVERIFY(sink.takeAll().empty());
    }

    void stepsCoalesceBeyondTheLimitKeepingTheNewest()
    {
        UiEventSink sink(4);
        sink.onEvent(hearth::EpochMetrics{});
        for (int i = 0; i < 10; ++i) {
            hearth::StepMetrics s;
            s.global_step = i;
            sink.onEvent(s);
        }
        QCOMPARE(sink.pending(), size_t(4));
        QCOMPARE(sink.coalescedSteps(), int64_t(7));
        const auto batch = sink.takeAll();
        QVERIFY(std::holds_alternative<hearth::EpochMetrics>(batch.front()));
        QCOMPARE(std::get<hearth::StepMetrics>(batch.back()).global_step, int64_t(9));
    }

    void epochReportAndFinishedAreNeverDropped()
    {
        UiEventSink sink(2);
        for (int i = 0; i < 5; ++i)
            sink.onEvent(hearth::StepMetrics{});
        sink.onEvent(hearth::EpochMetrics{});
        sink.onEvent(hearth::EvalReport{});
        sink.onEvent(hearth::RunFinished{});
        sink.onEvent(hearth::RunFailed{});
        const auto batch = sink.takeAll();
        int kept = 0;
        for (const auto& e : batch) {
            kept += std::holds_alternative<hearth::EpochMetrics>(e) || std::holds_alternative<hearth::EvalReport>(e)
                    || std::holds_alternative<hearth::RunFinished>(e) || std::holds_alternative<hearth::RunFailed>(e);
        }
        QCOMPARE(kept, 4);
    }

    void producerAndConsumerThreadsLoseNoEpochs()
    {
        UiEventSink sink(64);
        constexpr int kEpochs = 200;
        std::thread producer([&sink] {
            for (int e = 0; e < kEpochs; ++e) {
                for (int s = 0; s < 50; ++s)
                    sink.onEvent(hearth::StepMetrics{});
                hearth::EpochMetrics m;
                m.epoch = e;
                sink.onEvent(m);
            }
        });
        int epochs = 0;
        int64_t lastEpoch = -1;
        bool ordered = true;
        while (epochs < kEpochs) {
            for (const auto& e : sink.takeAll()) {
                if (const auto* m = std::get_if<hearth::EpochMetrics>(&e)) {
                    ordered = ordered && m->epoch == lastEpoch + 1;
                    lastEpoch = m->epoch;
                    ++epochs;
                }
            }
            std::this_thread::yield();
        }
        producer.join();
        QCOMPARE(epochs, kEpochs);
        QVERIFY(ordered);
    }
};

QTEST_GUILESS_MAIN(TestUiEventSink)
#include "test_ui_event_sink.moc"
