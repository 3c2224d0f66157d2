// A second writer process for test_store_processes:
//   store_writer_child write DB RUNS STEPS [GO_FILE]
//                                            write RUNS finished runs of STEPS steps, exit 0; with
//                                            GO_FILE: open the store, print "ready", and start
//                                            writing once GO_FILE exists (both writers at once)
//   store_writer_child stream DB             one run, a step per millisecond until killed;
//                                            prints "run ID" then "enqueued N" every 50 steps
#include "StoreTestEvents.h"
#include "storage/RunWriter.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

using namespace hearth;

namespace {

void waitForFile(const std::string& path) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!std::filesystem::exists(path) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

int writeRuns(const std::string& db, int runs, int steps, const std::string& go_file) {
    RunWriter writer(db);
    if (!go_file.empty()) {
        std::printf("ready\n");
        std::fflush(stdout);
        waitForFile(go_file);
    }
    for (int r = 0; r < runs; ++r) {
        const int64_t id = writer.createRun("child-" + std::to_string(r), "{}");
        writer.enqueue(id, testing::startedEvent("child"));
        for (int i = 0; i < steps; ++i) {
            writer.enqueue(id, testing::stepEvent(i, 500));
            if (i % 500 == 499) writer.enqueue(id, testing::epochEvent(i / 500, 0.5));
            // Pace the writes so both processes interleave their transactions.
            if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        writer.enqueue(id, testing::finishedEvent());
    }
    writer.flush();
    const std::string error = writer.lastError();
    if (!error.empty()) {
        std::fprintf(stderr, "store error: %s\n", error.c_str());
        return 1;
    }
    return 0;
}

int stream(const std::string& db) {
    RunWriter writer(db);
    const int64_t id = writer.createRun("streaming", "{}");
    std::printf("run %lld\n", static_cast<long long>(id));
    std::fflush(stdout);
    for (int64_t i = 0;; ++i) {
        writer.enqueue(id, testing::stepEvent(i));
        if ((i + 1) % 50 == 0) {
            std::printf("enqueued %lld\n", static_cast<long long>(i + 1));
            std::fflush(stdout);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const std::string mode = argc > 2 ? argv[1] : "";
        if (mode == "write" && (argc == 5 || argc == 6))
            return writeRuns(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), argc == 6 ? argv[5] : "");
        if (mode == "stream" && argc == 3) return stream(argv[2]);
        std::fprintf(stderr, "usage: store_writer_child write DB RUNS STEPS [GO_FILE] | stream DB\n");
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
