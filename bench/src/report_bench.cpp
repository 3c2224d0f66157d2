// report_bench: the HTML reports at scale. Writes a temporary store through RunWriter (as training
// would) with one run of --steps logged steps (default 100,000: 20 epochs, reports, predictions,
// breakdowns) and, with --compare N, N more runs of --compare-steps steps in one sweep; then times
// loadRunPage + runPageHtml (and the comparison page) and writes the pages for a browser to open
// (bench/report_open.sh times that).
// Usage: report_bench [--steps N] [--compare N] [--compare-steps N] [--out DIR]
#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "storage/report/ComparisonPage.h"
#include "storage/report/RunPage.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace hearth;

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

constexpr int64_t kEpochs = 20;
const std::vector<std::string> kClasses = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                           "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

// A run of `steps` logged steps shaped like a real one: a falling, noisy loss and an lr schedule.
int64_t writeRun(RunWriter& writer, const std::string& name, const std::string& precision, int64_t steps,
                 double speed, std::optional<int64_t> sweep) {
    const std::string config = R"({"name":")" + name + R"(","trainer":{"max_epochs":20,"precision":")" + precision + R"("}})";
    const int64_t id = writer.createRun(name, config, sweep);
    RunStarted started;
    started.run_name = name;
    started.config_json = config;
    started.effective = {{"trainer.precision", precision}, {"trainer.accelerator", "cpu"}};
    started.environment.hearth_version = "0.1.0";
    started.environment.libtorch_version = "1.13.1";
    started.device = "cpu";
    started.train_size = 55000;
    started.val_size = 5000;
    started.test_size = 10000;
    started.max_epochs = kEpochs;
    started.class_names = kClasses;
    started.batches_per_epoch = steps / kEpochs;
    writer.enqueue(id, started);
    const int64_t per_epoch = std::max<int64_t>(1, steps / kEpochs);
    for (int64_t i = 0; i < steps; ++i) {
        StepMetrics m;
        m.epoch = i / per_epoch;
        m.batch = i % per_epoch + 1;
        m.batches_per_epoch = per_epoch;
        m.global_step = i + 1;
        const double t = static_cast<double>(i) / static_cast<double>(steps);
        m.loss = 0.25 + 2.0 * std::exp(-6.0 * t) + 0.05 * std::sin(static_cast<double>(i) * 0.37);
        m.accuracy = 0.93 - 0.8 * std::exp(-6.0 * t);
        m.lr = 1e-3 * 0.5 * (1.0 + std::cos(M_PI * t));
        m.samples_per_sec = 5000.0 * speed + static_cast<double>(i % 97);
        m.step_time_ms = 12.8 / speed;
        m.data_wait_ms = 0.1 * static_cast<double>(i % 5);
        m.elapsed_s = 0.0128 / speed * static_cast<double>(i);
        writer.enqueue(id, m);
        if (m.batch == per_epoch) {
            EpochMetrics e;
            e.epoch = m.epoch;
            e.global_step = m.global_step;
            e.train_loss = m.loss;
            e.train_accuracy = m.accuracy;
            e.val_loss = m.loss * 1.1;
            e.val_accuracy = m.accuracy - 0.01;
            e.epoch_time_s = 0.0128 / speed * static_cast<double>(per_epoch);
            e.samples_per_sec = m.samples_per_sec;
            e.breakdown = {0.4, 0.1, 4.0 / speed, 7.0 / speed, 0.0, 1.0, 0.2, 12.8 / speed, 20};
            writer.enqueue(id, e);
        }
    }
    std::vector<int64_t> y_true, y_pred;
    PredictionsReady predictions{"test", {}};
    for (int64_t i = 0; i < 10000; ++i) {
        y_true.push_back(i % 10);
        y_pred.push_back(i % 11 == 0 ? (i + 3) % 10 : i % 10);
        predictions.predictions.push_back({i, y_true.back(), y_pred.back(), 0.5 + 0.05 * static_cast<double>(i % 10)});
    }
    writer.enqueue(id, EvalReport{"test", 0.31, ClassificationReport::compute(y_true, y_pred, kClasses)});
    writer.enqueue(id, predictions);
    RunFinished f;
    f.status = "completed";
    f.train_time_s = 0.0128 / speed * static_cast<double>(steps);
    f.total_time_s = f.train_time_s + 2.0;
    f.test_accuracy = 0.91;
    f.best_val_accuracy = 0.92;
    f.samples_per_sec = 5000.0 * speed;
    f.peak_memory_bytes = 300 << 20;
    f.epochs_completed = kEpochs;
    f.global_steps = steps;
    f.memory = {"cpu", 400000, 400000, 800000, 60 << 20, 10 << 20, 200 << 20, 300 << 20};
    writer.enqueue(id, f);
    return id;
}

void write(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

}  // namespace

int main(int argc, char** argv) {
    int64_t steps = 100000, compare = 0, compare_steps = 10000;
    std::string out = ".";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--steps") steps = std::atoll(argv[i + 1]);
        else if (flag == "--compare") compare = std::atoll(argv[i + 1]);
        else if (flag == "--compare-steps") compare_steps = std::atoll(argv[i + 1]);
        else if (flag == "--out") out = argv[i + 1];
    }
    const std::string db = "/tmp/hearth-report-bench-" + std::to_string(getpid()) + ".sqlite";
    try {
        int64_t run = 0;
        std::vector<int64_t> compared;
        auto start = Clock::now();
        {
            RunWriter writer(db);
            run = writeRun(writer, "long-run", "32-true", steps, 1.0, std::nullopt);
            if (compare > 0) {
                const int64_t sweep = writer.createSweep("bench sweep", "sweep");
                for (int64_t i = 0; i < compare; ++i)
                    compared.push_back(writeRun(writer, "run-" + std::to_string(i), i % 2 ? "bf16-mixed" : "32-true",
                                                compare_steps, 1.0 + 0.02 * static_cast<double>(i), sweep));
            }
            writer.flush();
        }
        std::printf("store written in %.0f ms (%s)\n", msSince(start), db.c_str());
        const RunStore store(db);
        start = Clock::now();
        const auto page = report::loadRunPage(store, run);
        const double load_ms = msSince(start);
        start = Clock::now();
        const std::string html = report::runPageHtml(page);
        const double render_ms = msSince(start);
        write(out + "/report-run.html", html);
        std::printf("run report: %zu steps, read %.0f ms, HTML built %.0f ms, %.1f MB -> %s/report-run.html\n",
                    page.steps.size(), load_ms, render_ms, static_cast<double>(html.size()) / 1e6, out.c_str());
        if (!compared.empty()) {
            start = Clock::now();
            const auto comparison = report::loadComparisonPage(store, compared);
            const std::string page_html = report::comparisonPageHtml(comparison);
            std::printf("comparison: %zu runs x %lld steps (%d points per run kept), read + built %.0f ms, %.1f MB -> "
                        "%s/report-compare.html\n",
                        comparison.runs.size(), static_cast<long long>(compare_steps), comparison.point_cap, msSince(start),
                        static_cast<double>(page_html.size()) / 1e6, out.c_str());
            write(out + "/report-compare.html", page_html);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix, ec);
    std::filesystem::remove_all(db + ".artifacts", ec);
    return 0;
}
