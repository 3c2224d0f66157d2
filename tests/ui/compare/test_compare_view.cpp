// CompareView over two real (tiny) runs recorded in a temporary store: one curve per run,
// only the differing config keys listed, speed-up against the baseline, bars per run, each run's
// profile, the comparison report exported. The runs are read off the GUI thread: a store that
// cannot be read yet holds up the view, not the window. Many runs: test_compare_scale.
#include "CompareTestSupport.h"
#include "RawDb.h"
#include "UiTestSupport.h"

#include "engine/metrics/RunProfile.h"
#include "engine/run/RunController.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "ui/compare/CompareBars.h"
#include "ui/compare/CompareView.h"
#include "ui/widgets/ProfileBars.h"
#include "ui/widgets/StackedBars.h"

#include <QDataStream>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>
#include <QTreeWidget>
#include <QToolButton>

#include <algorithm>
#include <cmath>

#include <qcustomplot.h>

using namespace hearth::ui;
using hearth::test::load;


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

    // Export Report: the runs shown, against the baseline chosen, as the comparison page
    // hearth-cli writes; built off the GUI thread.
    void exportWritesTheComparisonReport()
    {
        CompareView view(m_db);
        load(view, {m_first, m_second});
        view.setBaseline(m_second);
        QSignalSpy exported(&view, &CompareView::reportExported);
        QSignalSpy failed(&view, &CompareView::reportExportFailed);
        const QString html = m_dir.filePath(QStringLiteral("compare.html"));
        view.exportReport(html);
        QTRY_COMPARE(exported.count(), 1);
        QFile file(html);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString page = QString::fromUtf8(file.readAll());
        QVERIFY(page.contains(QStringLiteral("<title>2 runs compared</title>")));
        QVERIFY(page.contains(QStringLiteral("\"baseline\":1,")));   // the second run
        const auto runs = view.runs();
        const double speedup = *runs[0].summary.samples_per_sec / *runs[1].summary.samples_per_sec;
        QVERIFY2(page.contains(QStringLiteral("%1×</td>").arg(speedup, 0, 'f', 2)), qPrintable(QString::number(speedup)));
        QVERIFY(page.contains(QStringLiteral("<code>optimizer.lr</code>")));   // what differs
        QVERIFY(view.findChild<QToolButton*>(QStringLiteral("compareExport")) != nullptr);
        view.exportReport(m_dir.filePath(QStringLiteral("compare.md")));
        QTRY_COMPARE(failed.count(), 1);
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
        // One row per run, a column per differing setting.
        QTableWidget* t = view.diffTable();
        QCOMPARE(t->rowCount(), 2);
        QCOMPARE(t->columnCount(), 3);
        QCOMPARE(t->horizontalHeaderItem(1)->text(), QStringLiteral("optimizer.lr"));
        QCOMPARE(t->item(1, 1)->text(), QStringLiteral("0.003"));
        QCOMPARE(t->item(1, 2)->text(), QStringLiteral("64"));
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
        // Throughputs: batch 32 and 64 train the same samples, so this is their training time's ratio
        // but for validation.
        const double expected = *store.run(m_second)->samples_per_sec / *store.run(m_first)->samples_per_sec;
        QCOMPARE(speedup, QStringLiteral("%1×").arg(expected, 0, 'f', 2));
        view.setBaseline(m_second);
        QCOMPARE(t->item(1, 3)->text(), QStringLiteral("baseline"));
    }

    // A long run name does not push the figures out of view: the run column keeps 32 characters,
    // the name elided in its middle, whole in the tool tip.
    void aLongRunNameIsElidedNotWidened()
    {
        const std::string longName = "fashion-cnn-bf16-mixed-four-workers-batch-256-lr-3e-4-cosine-warmup";
        hearth::RunStore(m_db.toStdString()).rename(m_second, longName);
        CompareView view(m_db);
        load(view, {m_first, m_second});
        for (QTableWidget* t : {view.metricsTable(), view.diffTable()}) {
            const QString label = QStringLiteral("#%1 ").arg(m_second) + QString::fromStdString(longName);
            QCOMPARE(t->item(1, 0)->text(), label);
            QCOMPARE(t->item(1, 0)->toolTip(), label);
            QCOMPARE(t->textElideMode(), Qt::ElideMiddle);
            const int widest = t->fontMetrics().averageCharWidth() * 32;
            QVERIFY2(t->columnWidth(0) <= widest && t->fontMetrics().horizontalAdvance(label) > widest,
                     qPrintable(QStringLiteral("%1: %2 px").arg(t->objectName()).arg(t->columnWidth(0))));
            QVERIFY(t->columnWidth(1) > 0);
        }
        // The legend beside the curves elides it the same way (its end tells runs apart).
        auto* legend = view.findChild<QTreeWidget*>(QStringLiteral("compareLegend"));
        QVERIFY(legend);
        QCOMPARE(legend->textElideMode(), Qt::ElideMiddle);
        hearth::RunStore(m_db.toStdString()).rename(m_second, "compare-b");
    }

    void barsShowTimeAndAccuracyPerRun()
    {
        CompareView view(m_db);
        load(view, {m_first, m_second});
        QVERIFY(!view.barsPanel()->showsTable());
        QCOMPARE(view.bars()->plottableCount(), 2);   // one bar per run
        view.barsPanel()->setQuantity(CompareBars::Quantity::TestAccuracy);
        hearth::RunStore store(m_db.toStdString());
        QList<double> shown;
        for (int i = 0; i < view.bars()->plottableCount(); ++i)
            shown << qobject_cast<QCPBars*>(view.bars()->plottable(i))->data()->at(0)->value;
        QList<double> stored{*store.run(m_first)->test_accuracy * 100.0, *store.run(m_second)->test_accuracy * 100.0};
        std::sort(stored.begin(), stored.end(), std::greater<>());
        QCOMPARE(shown, stored);
    }

    // Time & Memory: each run's step-time breakdown and memory at the peak, as stored.
    void profileShowsEachRunsBreakdownAndMemory()
    {
        CompareView view(m_db);
        load(view, {m_first, m_second});
        ProfileBars* profile = view.profile();
        QVERIFY(profile);
        QCOMPARE(profile->timeBars()->rowCount(), 2);
        QCOMPARE(profile->memoryBars()->rowCount(), 2);
        hearth::RunStore store(m_db.toStdString());
        const auto mean = hearth::meanBreakdown(store.epochs(m_second));
        QVERIFY(mean);
        QCOMPARE(profile->timeBars()->value(1, 2), mean->forward_ms);   // run order, part 2 = forward
        QVERIFY(std::abs(profile->timeBars()->total(1) - std::max(mean->step_ms, mean->partsMs())) < 1e-9);
        const auto memory = store.memoryBreakdown(m_first);
        QVERIFY(memory);
        QCOMPARE(profile->memoryBars()->value(0, 2) * 1048576.0, double(memory->optimizer_state_bytes));
    }

    // The legends name the parts the runs have, by their device: a run on the CPU has no
    // communication wait or CUDA graph pool, and its unused reserve is heap, not a GPU allocator's.
    void profileLegendsNameOnlyThePartsTheRunsHave()
    {
        ProfileBars bars;
        hearth::StepBreakdown step;
        step.profiled = 1;
        step.forward_ms = 2.0;
        step.backward_ms = 3.0;
        step.step_ms = 5.5;
        hearth::MemoryBreakdown cpu;
        cpu.device = "cpu";
        cpu.parameters_bytes = 1 << 20;
        cpu.reserved_unused_bytes = 8 << 20;
        hearth::MemoryBreakdown gpu = cpu;
        gpu.device = "cuda:0";
        gpu.cuda_graph_bytes = 4 << 20;
        // Before any run: every part.
        QCOMPARE(bars.timeBars()->legendParts().size(), 8);
        QVERIFY(bars.memoryBars()->legendParts().contains("CUDA graph pool"));

        bars.setRows({{QStringLiteral("cpu run"), step, cpu}});
        QCOMPARE(bars.timeBars()->legendParts(), (QStringList{"Forward", "Backward", "Other"}));
        QCOMPARE(bars.memoryBars()->legendParts(), (QStringList{"Parameters", "Heap beyond tensors"}));

        bars.setRows({{QStringLiteral("gpu run"), step, gpu}});
        QCOMPARE(bars.memoryBars()->legendParts(),
                 (QStringList{"Parameters", "Reserved, unused", "CUDA graph pool"}));

        // Both: each name the runs use, in their order.
        bars.setRows({{QStringLiteral("gpu run"), step, gpu}, {QStringLiteral("cpu run"), std::nullopt, cpu}});
        QCOMPARE(bars.memoryBars()->legendParts(),
                 (QStringList{"Parameters", "Reserved, unused / Heap beyond tensors", "CUDA graph pool"}));
        QCOMPARE(bars.timeBars()->rowCount(), 1);
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

    void splitterStateRoundTrips()
    {
        CompareView a(m_db);
        a.resize(1400, 900);
        a.show();
        QVERIFY(QTest::qWaitForWindowExposed(&a));
        auto* top = a.findChild<QSplitter*>(QStringLiteral("compareTop"));
        QVERIFY(top);
        QCOMPARE(top->count(), 3);   // legend, curves, panels
        top->setSizes({300, 600, 470});
        const QList<int> sizes = top->sizes();
        const QByteArray state = a.saveSplitterState();

        CompareView b(m_db);
        b.resize(1400, 900);
        b.show();
        QVERIFY(QTest::qWaitForWindowExposed(&b));
        auto* otherTop = b.findChild<QSplitter*>(QStringLiteral("compareTop"));
        const QList<int> before = otherTop->sizes();
        QByteArray old;   // what the two-pane layout saved: ignored
        {
            QDataStream out(&old, QIODevice::WriteOnly);
            out << QByteArray("v") << QByteArray("t") << QByteArray("b");
        }
        b.restoreSplitterState(old);
        QCOMPARE(otherTop->sizes(), before);
        b.restoreSplitterState(state);
        QCOMPARE(otherTop->sizes(), sizes);
        QCOMPARE(b.panels()->tabText(0), QStringLiteral("Bars"));   // more panels go beside these
        QCOMPARE(b.panels()->tabText(1), QStringLiteral("Sweep scatter"));
    }
};

QTEST_MAIN(TestCompareView)
#include "test_compare_view.moc"
