// CompareView over two real (tiny) runs recorded in a temporary store: one curve per run,
// only the differing config keys listed, speed-up against the baseline, bars per run. The runs
// are read off the GUI thread: a store that cannot be read yet holds up the view, not the window.
#include "RawDb.h"
#include "UiTestSupport.h"

#include "engine/run/RunController.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "ui/compare/CompareView.h"

#include <QElapsedTimer>
#include <QLabel>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>

#include <optional>

#include <qcustomplot.h>

using namespace hearth::ui;

class TestCompareView : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_db;
    qint64 m_first = 0, m_second = 0;

    qint64 train(hearth::RunWriter& writer, const hearth::ExperimentConfig& config)
    {
        const int64_t id = writer.createRun(config.name, hearth::configToJson(config));
        hearth::RunRecorder recorder(std::shared_ptr<hearth::RunWriter>(&writer, [](hearth::RunWriter*) {}), id);
        std::atomic<bool> stop{false};
        const auto outcome = hearth::runExperiment(config, {}, recorder, stop);
        if (outcome.status != hearth::RunStatus::Completed)
            qFatal("tiny run failed: %s", outcome.message.c_str());
        writer.flush();
        return id;
    }

    // Asks for the runs and waits until the loader has delivered them.
    static void load(CompareView& view, const QList<qint64>& ids)
    {
        view.setRuns(ids);
        QVERIFY(view.isLoading());
        QTRY_VERIFY(!view.isLoading());
    }

private Q_SLOTS:
    void initTestCase()
    {
        hearth::test::isolateSettings(m_dir);
        m_db = m_dir.filePath(QStringLiteral("runs.sqlite"));
        hearth::RunWriter writer(m_db.toStdString());
        auto a = hearth::test::tinyExperiment("compare-a");
        auto b = hearth::test::tinyExperiment("compare-b");
        b.optimizer.lr = 0.003;
        b.trainer.batch_size = 64;
        m_first = train(writer, a);
        m_second = train(writer, b);
    }

    void drawsOneCurvePerRun()
    {
        CompareView view(m_db);
        load(view, {m_first, m_second});
        QCOMPARE(view.runIds(), (QList<qint64>{m_first, m_second}));
        QCOMPARE(view.curveCount(), 2);
        QCOMPARE(view.curves()->graph(0)->name(), QStringLiteral("#%1 compare-a").arg(m_first));
        QVERIFY(view.curves()->graph(0)->pen().color() != view.curves()->graph(1)->pen().color());
        // batch 32 vs 64 over the same 300 samples: the first run logs more steps.
        QVERIFY(view.curves()->graph(0)->dataCount() > view.curves()->graph(1)->dataCount());

        view.setMetric(CompareView::Metric::ValAccuracy);
        QCOMPARE(view.curveCount(), 2);
        QCOMPARE(view.curves()->graph(0)->dataCount(), 1);   // one epoch

        view.setMetric(CompareView::Metric::TrainLoss);
        view.setXAxis(CompareView::XAxis::WallTime);
        const auto* data = view.curves()->graph(0)->data().data();
        QVERIFY(data->size() > 1);
        QVERIFY((data->constEnd() - 1)->key > 0.0);   // seconds since fit started
        QVERIFY((data->constEnd() - 1)->key < 600.0);
    }

    void listsOnlyTheDifferingKeys()
    {
        CompareView view(m_db);
        load(view, {m_first, m_second});
        QCOMPARE(view.differingKeys(), (QStringList{"optimizer.lr", "trainer.batch_size"}));
        QCOMPARE(view.diffTable()->rowCount(), 2);
        QCOMPARE(view.diffTable()->item(0, 0)->text(), QStringLiteral("optimizer.lr"));
        QCOMPARE(view.diffTable()->item(0, 2)->text(), QStringLiteral("0.003"));
    }

    void metricsShowSpeedupAgainstTheBaseline()
    {
        CompareView view(m_db);
        load(view, {m_first, m_second});
        view.setBaseline(m_first);
        QTableWidget* t = view.metricsTable();
        QCOMPARE(t->rowCount(), 2);
        QCOMPARE(t->item(0, 3)->text(), QStringLiteral("baseline"));
        const QString speedup = t->item(1, 3)->text();
        QVERIFY2(speedup.endsWith(QStringLiteral("×")), qPrintable(speedup));
        hearth::RunStore store(m_db.toStdString());
        const double expected = *store.run(m_first)->train_time_s / *store.run(m_second)->train_time_s;
        QCOMPARE(speedup, QStringLiteral("%1×").arg(expected, 0, 'f', 2));
        view.setBaseline(m_second);
        QCOMPARE(t->item(1, 3)->text(), QStringLiteral("baseline"));
    }

    void barsShowTimeAndAccuracyPerRun()
    {
        CompareView view(m_db);
        load(view, {m_first, m_second});
        QCOMPARE(view.bars()->plottableCount(), 2);
        auto* accuracy = qobject_cast<QCPBars*>(view.bars()->plottable(1));
        QVERIFY(accuracy);
        QCOMPARE(accuracy->dataCount(), 2);
        hearth::RunStore store(m_db.toStdString());
        QCOMPARE(accuracy->data()->at(0)->value, *store.run(m_first)->test_accuracy * 100.0);
    }

    void fewerThanTwoRunsShowsTheHint()
    {
        CompareView view(m_db);
        load(view, {m_first, 999999});   // an unknown id is skipped
        QCOMPARE(view.runIds(), (QList<qint64>{m_first}));
        QCOMPARE(view.curveCount(), 1);
        QVERIFY(view.differingKeys().isEmpty());
    }

    void aNewerSelectionReplacesOneStillLoading()
    {
        CompareView view(m_db);
        QSignalSpy loaded(&view, &CompareView::loaded);
        view.setRuns({m_first, m_second});
        view.setRuns({m_second, m_first});
        auto* hint = view.findChild<QLabel*>(QStringLiteral("compareHint"));
        QVERIFY(hint && hint->text() == QStringLiteral("Loading 2 run(s)…"));
        QTRY_COMPARE(loaded.count(), 1);
        QTest::qWait(200);
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(view.runIds(), (QList<qint64>{m_second, m_first}));
    }

    // Another program holds the database exclusively, so every read waits: setRuns returns at
    // once, the event loop keeps turning, and the curves come when the store can be read.
    void loadingWaitsForTheStoreNotTheWindow()
    {
        CompareView view(m_db);   // its loader opens the store at the first load
        // Exclusive locking in WAL needs every other connection closed, which they are here.
        std::optional<hearth::testing::RawDb> other;
        other.emplace(m_db.toStdString());
        other->exec("PRAGMA locking_mode = EXCLUSIVE");
        other->exec("BEGIN EXCLUSIVE");
        other->exec("UPDATE runs SET notes = notes");
        other->exec("COMMIT");   // exclusive mode keeps the lock after the commit

        QElapsedTimer clock;
        clock.start();
        view.setRuns({m_first, m_second});
        QVERIFY2(clock.elapsed() < 200, qPrintable(QString("setRuns took %1 ms").arg(clock.elapsed())));
        hearth::test::EventLoopProbe probe;
        QTest::qWait(1200);
        QVERIFY2(probe.longestGapMs() < 500, qPrintable(QString("event loop stalled %1 ms").arg(probe.longestGapMs())));
        QVERIFY(view.isLoading());
        QVERIFY(view.runIds().isEmpty());

        other.reset();   // the other program closes the database
        QTRY_VERIFY_WITH_TIMEOUT(!view.isLoading(), 20000);
        QCOMPARE(view.runIds(), (QList<qint64>{m_first, m_second}));
        QCOMPARE(view.curveCount(), 2);
    }
};

QTEST_MAIN(TestCompareView)
#include "test_compare_view.moc"
