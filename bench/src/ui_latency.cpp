// ui_latency: how responsive the workbench stays while training, and how fast a long curve
// redraws.
//  1. A tiny MLP trains as fast as it can (log_every_n_steps=1: one StepMetrics per step)
//     in a child hearth-cli through the real TrainingSession -> LiveView path, while a 1 ms precise timer measures
//     how late the GUI event loop serves it. Target: p99 < 16 ms (one frame at 60 Hz).
//  2. A QCustomPlot graph with 1,000,000 points (adaptive sampling) is replotted at full view
//     and zoomed in. Target: < 33 ms per replot (30 fps).
//  3. An edit of the experiment form: the whole re-validation (ExperimentPanel::setConfig) and the
//     path check alone, on the GUI thread (InputCheck, on its own thread) and directly.
// Usage: QT_QPA_PLATFORM=offscreen ui_latency [--samples N] [--epochs N] [--threads N]
#include "engine/config/ExperimentConfig.h"
#include "ui/experiment/ExperimentPanel.h"
#include "ui/experiment/InputCheck.h"
#include "ui/live/LivePlots.h"
#include "ui/live/LiveView.h"
#include "ui/session/TrainingSession.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTimer>

#include "BenchSupport.h"

#include <qcustomplot.h>

#include <ctime>

#include <algorithm>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

namespace {

using hearth::bench::percentile;

double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct LatencyResult {
    std::vector<double> latenessMs;
    std::vector<double> busyShare;   // of late ticks (> 16 ms): GUI-thread CPU time / wall time
    int64_t steps = 0;
    double seconds = 0.0;
    QString status;
};

LatencyResult measureEventLoopDuringTraining(int64_t samples, int64_t epochs, int64_t threads)
{
    QTemporaryDir dir;
    hearth::ExperimentConfig config;
    config.name = "ui-latency";
    config.data.limit = samples;
    config.model.name = "mlp";
    config.model.hidden = {32};
    config.trainer.batch_size = 16;
    config.trainer.max_epochs = epochs;
    config.trainer.num_workers = 0;
    config.trainer.log_every_n_steps = 1;
    config.trainer.num_threads = threads;

    hearth::ui::LiveView live;
    live.resize(1280, 800);
    live.show();
    hearth::ui::TrainingSession session(dir.filePath(QStringLiteral("bench.sqlite")));
    std::vector<double> handleMs;
    QObject::connect(&session, &hearth::ui::TrainingSession::eventsReady, &live, [&](const hearth::ui::EventBatch& b) {
        QElapsedTimer t;
        t.start();
        live.handleEvents(b);
        handleMs.push_back(t.nsecsElapsed() / 1e6);
    });

    LatencyResult result;
    QObject::connect(&session, &hearth::ui::TrainingSession::eventsReady, [&result](const hearth::ui::EventBatch& b) {
        for (const auto& e : b)
            result.steps += std::holds_alternative<hearth::StepMetrics>(e) ? 1 : 0;
    });
    QElapsedTimer clock;
    QEventLoop loop;
    QObject::connect(&session, &hearth::ui::TrainingSession::runEnded, &loop,
                     [&](qint64, hearth::RunStatus status, const QString& message) {
                         result.status = status == hearth::RunStatus::Completed ? QStringLiteral("completed") : message;
                         if (qEnvironmentVariableIsSet("HEARTH_BENCH_VERBOSE"))
                             std::printf("    run ended at t=%.3f s\n", clock.nsecsElapsed() / 1e9);
                         loop.quit();
                     });
    // The run row is created on the writer thread; a store that refuses it ends the measurement.
    QObject::connect(&session, &hearth::ui::TrainingSession::startFailed, &loop, [&](const QString& message) {
        result.status = message;
        loop.quit();
    });

    qint64 last = 0;
    double lastCpu = 0.0;
    bool training = false;
    QTimer probe;
    probe.setTimerType(Qt::PreciseTimer);
    probe.setInterval(1);
    QObject::connect(&probe, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        // Count only once steps flow: data loading before the first step is not GUI work.
        const double cpu = threadCpuMs();
        if (training && last > 0) {
            const double late = std::max(0.0, (now - last) / 1e6 - 1.0);
            result.latenessMs.push_back(late);
            // Busy (our own work on the GUI thread) or starved (waiting for a CPU / a lock)?
            if (late > 16.0) {
                result.busyShare.push_back((cpu - lastCpu) / ((now - last) / 1e6));
                if (qEnvironmentVariableIsSet("HEARTH_BENCH_VERBOSE"))
                    std::printf("    stall %.0f ms at t=%.3f s (steps so far %lld)\n", late, now / 1e9,
                                static_cast<long long>(result.steps));
            }
        }
        last = now;
        lastCpu = cpu;
        training = training || live.plots()->pointCount(hearth::ui::LivePlots::Plot::Loss) > 0;
    });
    QString error;
    if (!session.start(config, &error)) {
        std::fprintf(stderr, "cannot start: %s\n", qPrintable(error));
        return result;
    }
    clock.start();
    probe.start();
    loop.exec();
    result.seconds = clock.elapsed() / 1000.0;
    std::printf("  (diagnostic) %zu batches, handleEvents p50 %.2f ms max %.2f ms; loss plot replot %.2f ms\n",
                handleMs.size(), percentile(handleMs, 0.5), percentile(handleMs, 1.0),
                live.plots()->plot(hearth::ui::LivePlots::Plot::Loss)->replotTime(true));
    return result;
}

std::vector<double> measureReplot(QCustomPlot& plot, int repeats)
{
    std::vector<double> ms;
    QElapsedTimer t;
    for (int i = 0; i < repeats; ++i) {
        t.start();
        plot.replot(QCustomPlot::rpImmediateRefresh);
        ms.push_back(t.nsecsElapsed() / 1e6);
    }
    return ms;
}

void replotMillionPoints()
{
    QCustomPlot plot;
    plot.resize(1200, 500);
    plot.show();
    QCPGraph* graph = plot.addGraph();
    graph->setAdaptiveSampling(true);
    std::mt19937 rng(42);
    std::normal_distribution<double> noise(0.0, 0.05);
    QVector<double> x(1000000), y(1000000);
    double level = 2.3;
    for (int i = 0; i < x.size(); ++i) {
        level = level * 0.999995 + 0.1 * 0.000005;
        x[i] = i;
        y[i] = level + noise(rng);
    }
    QElapsedTimer t;
    t.start();
    graph->setData(x, y, true);
    const double setDataMs = t.nsecsElapsed() / 1e6;
    plot.rescaleAxes();
    measureReplot(plot, 2);   // warm-up (fonts, caches)
    const auto full = measureReplot(plot, 20);
    plot.xAxis->setRange(400000, 450000);
    const auto zoomed = measureReplot(plot, 20);
    std::printf("replot 1,000,000 points (1200x500, adaptive sampling):\n");
    std::printf("  setData            %.1f ms (once)\n", setDataMs);
    std::printf("  full view   p50 %.2f ms   max %.2f ms   (target < 33 ms)\n", percentile(full, 0.5),
                percentile(full, 1.0));
    std::printf("  zoomed 5%%   p50 %.2f ms   max %.2f ms\n", percentile(zoomed, 0.5), percentile(zoomed, 1.0));
}

// Microseconds per call of `f`, over `calls` calls, for each of `repeats` repeats.
template <typename F>
std::vector<double> microsPerCall(int repeats, int calls, F&& f)
{
    std::vector<double> us;
    for (int r = 0; r < repeats; ++r) {
        QElapsedTimer t;
        t.start();
        for (int i = 0; i < calls; ++i)
            f();
        us.push_back(t.nsecsElapsed() / 1e3 / calls);
    }
    return us;
}

void formEdit()
{
    const hearth::ExperimentConfig config;   // the built-in data: its folder is there
    hearth::ui::InputCheck check;
    hearth::ui::ExperimentPanel panel;
    const auto direct = microsPerCall(5, 2000, [&] { hearth::inputProblems(config); });
    const auto checked = microsPerCall(5, 2000, [&] { check.problems(config); });
    const auto edit = microsPerCall(5, 200, [&] { panel.setConfig(config); });
    std::printf("an edit of the experiment form (median of 5 repeats, min-max):\n");
    for (const auto& [what, us] : {std::pair{"inputProblems, directly", &direct},
                                   std::pair{"InputCheck::problems   ", &checked},
                                   std::pair{"whole re-validation    ", &edit}})
        std::printf("  %s %8.1f us  (%.1f-%.1f)\n", what, percentile(*us, 0.5), percentile(*us, 0.0),
                    percentile(*us, 1.0));
}

}  // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    if (qEnvironmentVariableIsEmpty("HEARTH_CLI"))   // the run trains in this build's hearth-cli
        qputenv("HEARTH_CLI", HEARTH_CLI_PATH);
    int64_t samples = 20000, epochs = 1, threads = 0;
    const QStringList args = QApplication::arguments();
    for (int i = 1; i + 1 < args.size(); ++i) {
        if (args[i] == QLatin1String("--samples"))
            samples = args[i + 1].toLongLong();
        if (args[i] == QLatin1String("--epochs"))
            epochs = args[i + 1].toLongLong();
        if (args[i] == QLatin1String("--threads"))   // trainer.num_threads (0: LibTorch's default)
            threads = args[i + 1].toLongLong();
    }
    std::printf("platform: %s\n", qPrintable(QApplication::platformName()));
    const LatencyResult r = measureEventLoopDuringTraining(samples, epochs, threads);
    std::printf("event loop while training (%lld samples x %lld epoch(s), batch 16, a StepMetrics per step, "
                "num_threads %lld):\n", static_cast<long long>(samples), static_cast<long long>(epochs),
                static_cast<long long>(threads));
    std::printf("  run %s; %lld steps in %.1f s = %.0f steps/s through the UI\n", qPrintable(r.status),
                static_cast<long long>(r.steps), r.seconds, r.seconds > 0 ? r.steps / r.seconds : 0.0);
    std::printf("  1 ms timer lateness over %zu ticks: p50 %.2f ms   p99 %.2f ms   max %.2f ms   (target p99 < 16 ms)\n",
                r.latenessMs.size(), percentile(r.latenessMs, 0.5), percentile(r.latenessMs, 0.99),
                percentile(r.latenessMs, 1.0));
    if (!r.busyShare.empty())
        std::printf("  ticks later than 16 ms: %zu; GUI thread busy during them: p50 %.0f %% of the gap (the rest: "
                    "waiting for a CPU)\n", r.busyShare.size(), 100 * percentile(r.busyShare, 0.5));
    replotMillionPoints();
    formEdit();
    return 0;
}
