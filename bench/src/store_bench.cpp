// store_bench: the run store's two speed promises, measured.
//   ingest: >= 200,000 step rows/s through RunWriter (enqueue .. flush, committed to disk)
//   read:   a 1,000,000-point curve (RunStore::steps) in < 100 ms
// Usage: store_bench [--steps N] [--db PATH]   (default: a fresh file under /tmp, removed after)
#include "storage/RunStore.h"
#include "storage/RunWriter.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace hearth;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

StepMetrics step(int64_t i) {
    StepMetrics m;
    m.epoch = i / 1000;
    m.batch = i % 1000 + 1;
    m.batches_per_epoch = 1000;
    m.global_step = i + 1;
    m.loss = 2.3 / (1.0 + 1e-4 * static_cast<double>(i));
    m.accuracy = 1.0 - m.loss / 2.3;
    m.lr = 1e-3;
    m.samples_per_sec = 5000.0;
    m.step_time_ms = 12.0;
    m.elapsed_s = 0.012 * static_cast<double>(i);
    return m;
}

}  // namespace

int main(int argc, char** argv) {
    int64_t steps = 1000000;
    std::string db = "/tmp/hearth-store-bench-" + std::to_string(getpid()) + ".sqlite";
    bool own_db = true;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--steps") steps = std::atoll(argv[i + 1]);
        else if (flag == "--db") { db = argv[i + 1]; own_db = false; }
    }
    try {
        int64_t run_id = 0;
        double ingest_s = 0.0;
        {
            RunWriter writer(db);
            run_id = writer.createRun("store-bench", "{}");
            const auto start = Clock::now();
            for (int64_t i = 0; i < steps; ++i) writer.enqueue(run_id, step(i));
            writer.flush();
            ingest_s = secondsSince(start);
            if (!writer.lastError().empty()) {
                std::fprintf(stderr, "store error: %s\n", writer.lastError().c_str());
                return 1;
            }
        }
        const double rows_per_s = static_cast<double>(steps) / ingest_s;

        RunStore store(db);
        std::vector<double> read_ms;   // [0] is the first read on a fresh connection
        size_t points = 0;
        for (int rep = 0; rep < 5; ++rep) {
            const auto start = Clock::now();
            points = store.steps(run_id).size();
            read_ms.push_back(1000.0 * secondsSince(start));
        }
        const double first_ms = read_ms.front();
        std::sort(read_ms.begin(), read_ms.end());
        const double median_ms = read_ms[read_ms.size() / 2];

        std::printf("ingest: %lld step rows in %.3f s = %.0f rows/s (target >= 200000) %s\n",
                    static_cast<long long>(steps), ingest_s, rows_per_s, rows_per_s >= 200000 ? "OK" : "SLOW");
        std::printf("read:   %zu-point curve (RunStore::steps): median %.1f ms of 5 (first %.1f, best %.1f, worst %.1f) "
                    "(target < 100 ms) %s\n",
                    points, median_ms, first_ms, read_ms.front(), read_ms.back(), median_ms < 100.0 ? "OK" : "SLOW");
        if (own_db) {
            std::error_code ec;
            for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix, ec);
        }
        return points == static_cast<size_t>(steps) ? 0 : 1;
    } catch (const StoreError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 3;
    }
}
