// compare_scale: the Compare tab and the History at the scale of real histories.
//  1. A store with 100 runs x 10,000 logged steps, 1,000 more runs x 1,000 steps, and runs without
//     curves up to 10,000 in all (written through RunWriter, as store_bench does).
//  2. CompareView on the 100 long runs, then on 1,000 runs: time from setRuns to loaded() and to
//     the first replot of the curves (target < 1 s for 100 runs), and how late a 1 ms precise
//     timer is served on the GUI thread meanwhile (target p99 < 16 ms); then the redraw after a
//     metric change and the replot after a highlight.
//  3. HistoryView on the 10,000 runs: time until they are listed, then the same 1 ms timer while
//     the table scrolls a page every 16 ms and is re-sorted by a column every 250 ms.
// Usage: QT_QPA_PLATFORM=offscreen compare_scale [--runs N] [--steps N] [--db PATH]
#include "storage/RunWriter.h"
#include "ui/compare/CompareCurves.h"
#include "ui/compare/CompareLegend.h"
#include "ui/compare/CompareView.h"
#include "ui/history/HistoryModel.h"
#include "ui/history/HistoryView.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QScrollBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>

#include "BenchSupport.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

using hearth::bench::percentile;

// A 1 ms precise timer on the GUI thread: how late each tick comes is how long the event loop
// was kept from other work (input, paint).
class LatenessProbe {
public:
    LatenessProbe()
    {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(1);
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            const qint64 now = m_clock.nsecsElapsed();
            if (m_last > 0)
                m_lateMs.push_back(std::max(0.0, (now - m_last) / 1e6 - 1.0));
            m_last = now;
        });
        m_clock.start();
        m_timer.start();
    }
    void report(const char* what) const
    {
        std::printf("  %s: 1 ms timer over %zu ticks: p50 %.2f ms  p99 %.2f ms  max %.1f ms  (target p99 < 16 ms)\n",
                    what, m_lateMs.size(), percentile(m_lateMs, 0.5), percentile(m_lateMs, 0.99),
                    percentile(m_lateMs, 1.0));
    }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_last = 0;
    std::vector<double> m_lateMs;
};

void waitMs(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

hearth::StepMetrics step(int64_t i, int run)
{
    hearth::StepMetrics m;
    m.epoch = i / 1000;
    m.batch = i % 1000 + 1;
    m.batches_per_epoch = 1000;
    m.global_step = i + 1;
    m.loss = (1.0 + 0.01 * run) * 2.3 / (1.0 + 1e-3 * static_cast<double>(i)) + 0.05 * ((i * 7919) % 13) / 13.0;
    m.lr = 1e-3;
    m.samples_per_sec = 5000.0 + run;
    m.elapsed_s = 0.012 * static_cast<double>(i);
    return m;
}

// Runs 0..longRuns-1 log `steps` steps, the next `mediumRuns` 1,000, the rest none.
std::vector<qint64> writeStore(const std::string& db, int totalRuns, int longRuns, int steps, int mediumRuns)
{
    hearth::RunWriter writer(db);
    const int64_t sweep = writer.createSweep("bench-sweep", "grid");
    std::vector<qint64> ids;
    for (int r = 0; r < totalRuns; ++r) {
        const std::string config = "{\"name\":\"bench-" + std::to_string(r) + "\",\"optimizer\":{\"lr\":" +
                                   std::to_string(1e-4 * (1 + r % 97)) + "},\"trainer\":{\"batch_size\":" +
                                   std::to_string(16 << (r % 4)) + "}}";
        const int64_t id = writer.createRun("bench-" + std::to_string(r), config, sweep);
        const int n = r < longRuns ? steps : r < longRuns + mediumRuns ? 1000 : 0;
        for (int i = 0; i < n; ++i)
            writer.enqueue(id, step(i, r));
        hearth::EpochMetrics e;
        e.global_step = n;
        e.val_loss = 0.4 + 0.001 * (r % 100);
        e.val_accuracy = 0.8 + 0.001 * (r % 100);
        e.epoch_time_s = 60.0 + r % 30;
        writer.enqueue(id, e);
        hearth::RunFinished f;
        f.status = "completed";
        f.train_time_s = 60.0 + r % 30;
        f.total_time_s = f.train_time_s + 2;
        f.best_val_accuracy = e.val_accuracy;
        f.test_accuracy = 0.79 + 0.001 * ((r * 37) % 100);
        f.samples_per_sec = 5000.0 + r;
        f.global_steps = n;
        f.epochs_completed = 1;
        writer.enqueue(id, f);
        ids.push_back(id);
    }
    writer.flush();
    return ids;
}

void benchCompare(const QString& db, const QList<qint64>& ids)
{
    hearth::ui::CompareView view(db);
    view.resize(1600, 1000);
    view.show();
    waitMs(200);
    QElapsedTimer clock;
    double loadedMs = -1, drawnMs = -1;
    QObject::connect(&view, &hearth::ui::CompareView::loaded, [&] { loadedMs = clock.nsecsElapsed() / 1e6; });
    QObject::connect(view.curves(), &QCustomPlot::afterReplot, [&] {
        if (loadedMs >= 0 && drawnMs < 0)
            drawnMs = clock.nsecsElapsed() / 1e6;
    });
    qint64 points = 0;
    {
        LatenessProbe probe;
        clock.start();
        view.setRuns(ids);
        while (drawnMs < 0 && clock.elapsed() < 60000)
            QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
        waitMs(300);   // the queued bars, scatter and table paints after the first draw
        for (int i = 0; i < view.curves()->graphCount(); ++i)
            points += view.curves()->graph(i)->dataCount();
        std::printf("compare %lld runs (%lld points drawn, at most %d per curve):\n",
                    static_cast<long long>(ids.size()), static_cast<long long>(points),
                    hearth::ui::curvePointCap(ids.size()));
        std::printf("  setRuns -> loaded() %.0f ms, -> curves drawn %.0f ms  (target < 1000 ms)\n", loadedMs, drawnMs);
        probe.report("while loading and drawing");
        std::printf("  (diagnostic) the curves' last replot took %.1f ms\n", view.curves()->replotTime());
    }
    std::vector<double> metricMs, highlightMs;
    {
        LatenessProbe probe;
        QElapsedTimer t;
        for (int i = 0; i < 6; ++i) {
            t.start();
            view.setMetric(i % 2 ? hearth::ui::CompareView::Metric::TrainLoss : hearth::ui::CompareView::Metric::Throughput);
            view.curves()->replot(QCustomPlot::rpImmediateRefresh);
            metricMs.push_back(t.nsecsElapsed() / 1e6);
            waitMs(50);
        }
        for (int i = 0; i < 20; ++i) {
            t.start();
            view.legend()->setPinnedRun(i * 3 % static_cast<int>(ids.size()));
            QCoreApplication::processEvents();   // the repaint from the kept layer buffers
            highlightMs.push_back(t.nsecsElapsed() / 1e6);
            waitMs(30);
        }
        std::printf("  metric change + redraw: p50 %.0f ms  max %.0f ms; highlight + replot: p50 %.0f ms  max %.0f ms\n",
                    percentile(metricMs, 0.5), percentile(metricMs, 1.0), percentile(highlightMs, 0.5),
                    percentile(highlightMs, 1.0));
        probe.report("while switching metrics and highlighting");
    }
}

void benchHistory(const QString& db, int runs)
{
    hearth::ui::HistoryView view(db);
    view.resize(1600, 1000);
    view.show();
    QElapsedTimer clock;
    clock.start();
    double listedMs = -1;
    {
        LatenessProbe probe;
        while (view.model()->rowCount() < runs && clock.elapsed() < 60000)
            QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
        listedMs = clock.nsecsElapsed() / 1e6;
        waitMs(300);
        std::printf("history of %d runs:\n  listed after %.0f ms\n", view.model()->rowCount(), listedMs);
        probe.report("while loading the list");
    }
    std::vector<double> sortMs;
    LatenessProbe probe;
    QTimer scroll;
    QScrollBar* bar = view.table()->verticalScrollBar();
    QObject::connect(&scroll, &QTimer::timeout, [&] {
        bar->setValue(bar->value() + bar->pageStep() >= bar->maximum() ? 0 : bar->value() + bar->pageStep());
    });
    scroll.start(16);
    const int columns[] = {hearth::ui::HistoryModel::TestAcc, hearth::ui::HistoryModel::Name,
                           hearth::ui::HistoryModel::TrainTime, hearth::ui::HistoryModel::Id};
    QElapsedTimer t;
    for (int i = 0; i < 12; ++i) {
        t.start();
        view.table()->sortByColumn(columns[i % 4], i % 2 ? Qt::AscendingOrder : Qt::DescendingOrder);
        sortMs.push_back(t.nsecsElapsed() / 1e6);
        waitMs(250);
    }
    std::printf("  re-sort by a column: p50 %.0f ms  max %.0f ms\n", percentile(sortMs, 0.5), percentile(sortMs, 1.0));
    probe.report("while scrolling a page per 16 ms and re-sorting every 250 ms (3 s)");
}

}  // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    int runs = 10000, longRuns = 100, steps = 10000, mediumRuns = 1000;
    QString db;
    const QStringList args = QApplication::arguments();
    for (int i = 1; i + 1 < args.size(); ++i) {
        if (args[i] == QLatin1String("--runs"))
            runs = args[i + 1].toInt();
        if (args[i] == QLatin1String("--steps"))
            steps = args[i + 1].toInt();
        if (args[i] == QLatin1String("--db"))
            db = args[i + 1];
    }
    QTemporaryDir dir;
    if (db.isEmpty())
        db = dir.filePath(QStringLiteral("compare-scale.sqlite"));
    std::printf("platform: %s\n", qPrintable(QApplication::platformName()));
    QElapsedTimer t;
    t.start();
    const auto all = writeStore(db.toStdString(), runs, longRuns, steps, mediumRuns);
    std::printf("store: %d runs (%d x %d steps, %d x 1,000 steps) written in %.1f s\n", runs, longRuns, steps,
                mediumRuns, t.elapsed() / 1000.0);
    QList<qint64> longIds, thousand;
    for (size_t i = 0; i < all.size(); ++i) {
        if (i < size_t(longRuns))
            longIds << all[i];
        if (i < size_t(longRuns + mediumRuns) && thousand.size() < 1000)
            thousand << all[i];
    }
    benchCompare(db, longIds);
    benchCompare(db, thousand);
    benchHistory(db, runs);
    return 0;
}
