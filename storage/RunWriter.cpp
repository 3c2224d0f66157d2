#include "storage/RunWriter.h"

#include "storage/BatchWriter.h"
#include "storage/RunEdits.h"
#include "storage/RunStoreImpl.h"
#include "storage/Schema.h"

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

namespace hearth {
namespace {

using Clock = std::chrono::steady_clock;

// Well inside the promise of a commit at least once a second, with room for a slow disk.
constexpr auto kCommitInterval = std::chrono::milliseconds(250);
// A queue this long is written at once rather than at the next interval (bounds memory).
constexpr size_t kEarlyWriteQueueLength = 50000;

bool forcesCommit(const Event& event) {
    return std::holds_alternative<EpochMetrics>(event) || std::holds_alternative<RunFinished>(event) ||
           std::holds_alternative<RunFailed>(event) || std::holds_alternative<EvalReport>(event) ||
           // A training state: the steps logged up to it are committed with it (a resume after
           // kill -9 continues from there and keeps them).
           std::holds_alternative<CheckpointSaved>(event);
}

}  // namespace

struct RunWriter::Impl {
    struct Job {
        std::function<void(sqlite::Connection&)> work;
        std::function<void()> deliver;
    };

    std::string path;

    // The connection: used by the writer thread (batches, jobs) and by the synchronous calls
    // (createRun, ...) of other threads.
    std::mutex db_mutex;
    std::unique_ptr<sqlite::Connection> db;
    std::unique_ptr<BatchWriter> batch_writer;

    // The queues, guarded by `mutex`; the writer holds it only to swap them out.
    mutable std::mutex mutex;
    std::condition_variable wake;       // writer: new work / flush / stop
    std::condition_variable committed_cv;
    std::vector<QueuedEvent> queue;
    std::vector<Job> jobs;              // submitted jobs, in order
    Clock::time_point oldest;           // when the first event of `queue` arrived
    uint64_t enqueued = 0;              // events ever queued
    uint64_t committed = 0;             // events ever written (or dropped after an error)
    uint64_t flush_target = 0;
    bool force = false;
    bool stopping = false;
    std::string last_error;
    std::thread thread;

    void run();
    bool waitForWork(std::unique_lock<std::mutex>& lock);
    std::string writeBatch(const std::vector<QueuedEvent>& batch);
    void runJobs(std::vector<Job>& taken);
};

bool RunWriter::Impl::waitForWork(std::unique_lock<std::mutex>& lock) {
    for (;;) {
        if (force || stopping || !jobs.empty() || committed < flush_target ||
            queue.size() >= kEarlyWriteQueueLength)
            return true;
        if (queue.empty()) {
            wake.wait(lock);
        } else if (wake.wait_until(lock, oldest + kCommitInterval) == std::cv_status::timeout) {
            return true;
        }
    }
}

void RunWriter::Impl::run() {
    std::vector<QueuedEvent> batch;
    std::vector<Job> taken;
    for (;;) {
        uint64_t target = 0;
        {
            std::unique_lock lock(mutex);
            waitForWork(lock);
            if (queue.empty() && jobs.empty() && stopping) {
                committed = enqueued;
                committed_cv.notify_all();
                return;
            }
            // Events and jobs are taken together: a job then runs after every event that was
            // enqueued before it.
            batch.clear();
            batch.swap(queue);
            taken.clear();
            taken.swap(jobs);
            force = false;
            target = enqueued;
        }
        const std::string error = writeBatch(batch);
        {
            std::lock_guard lock(mutex);
            if (!error.empty()) last_error = error;
            committed = target;
            committed_cv.notify_all();
        }
        runJobs(taken);
    }
}

std::string RunWriter::Impl::writeBatch(const std::vector<QueuedEvent>& batch) {
    if (batch.empty()) return {};
    try {   // never let an exception end the thread
        // Hash checkpoints before taking the connection: the synchronous calls of other threads
        // and the jobs need not wait for a large file to be read.
        const auto digests = BatchWriter::digestCheckpoints(batch);
        std::lock_guard db_lock(db_mutex);
        return batch_writer->write(batch, digests);
    } catch (const std::exception& e) {
        return e.what();
    }
}

void RunWriter::Impl::runJobs(std::vector<Job>& taken) {
    for (Job& job : taken) {
        // Each job reports its own failure through `deliver`; these catches only keep the
        // thread alive when a job or a delivery breaks that promise.
        try {
            std::lock_guard db_lock(db_mutex);
            job.work(*db);
        } catch (...) {
        }
        try {
            job.deliver();
        } catch (...) {
        }
    }
    taken.clear();   // release what the jobs captured here, on the writer thread
}

RunWriter::RunWriter(const std::string& path) : impl_(std::make_unique<Impl>()) {
    impl_->path = path;
    impl_->db = schema::openStore(path);
    impl_->batch_writer = std::make_unique<BatchWriter>(*impl_->db);
    impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

RunWriter::~RunWriter() {
    {
        std::lock_guard lock(impl_->mutex);
        impl_->stopping = true;
    }
    impl_->wake.notify_one();
    impl_->thread.join();
}

int64_t RunWriter::createRun(const std::string& name, const std::string& config_json,
                             std::optional<int64_t> sweep_id) {
    std::lock_guard lock(impl_->db_mutex);
    return runedits::createRun(*impl_->db, name, config_json, sweep_id);
}

void RunWriter::reopenRun(int64_t run_id, int64_t global_step, int64_t epoch, double elapsed_s) {
    flush();   // this writer's own events of the run first
    std::lock_guard lock(impl_->db_mutex);
    runedits::reopenRun(*impl_->db, run_id, global_step, epoch, elapsed_s);
    impl_->batch_writer->forget(run_id);
}

int64_t RunWriter::createSweep(const std::string& name, const std::string& kind, const std::string& plan_json) {
    std::lock_guard lock(impl_->db_mutex);
    return runedits::createSweep(*impl_->db, name, kind, plan_json);
}

void RunWriter::setSweepPlan(int64_t sweep_id, const std::string& plan_json) {
    std::lock_guard lock(impl_->db_mutex);
    runedits::setSweepPlan(*impl_->db, sweep_id, plan_json);
}

void RunWriter::addSweepRun(int64_t sweep_id, int64_t run_id, int64_t step, int64_t repeat) {
    std::lock_guard lock(impl_->db_mutex);
    runedits::addSweepRun(*impl_->db, sweep_id, run_id, step, repeat);
}

std::string RunWriter::artifactsDir(int64_t run_id) const {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(artifactsRootFor(impl_->path)) / std::to_string(run_id);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        throw StoreError("Cannot create the artifacts folder '" + dir.string() + "' of run #" +
                         std::to_string(run_id) + ": " + ec.message() + ".");
    return dir.string() + "/";
}

void RunWriter::enqueue(int64_t run_id, Event event) {
    const bool urgent = forcesCommit(event);
    bool notify = urgent;
    {
        std::lock_guard lock(impl_->mutex);
        if (impl_->queue.empty()) {
            impl_->oldest = Clock::now();
            notify = true;   // the writer sleeps without a deadline while the queue is empty
        }
        impl_->queue.push_back({run_id, std::move(event)});
        ++impl_->enqueued;
        impl_->force = impl_->force || urgent;
        notify = notify || impl_->queue.size() == kEarlyWriteQueueLength;
    }
    if (notify) impl_->wake.notify_one();
}

void RunWriter::flush() {
    std::unique_lock lock(impl_->mutex);
    const uint64_t target = impl_->enqueued;
    if (impl_->committed >= target) return;
    impl_->flush_target = std::max(impl_->flush_target, target);
    impl_->wake.notify_one();
    impl_->committed_cv.wait(lock, [&] { return impl_->committed >= target; });
}

void RunWriter::post(std::function<void(sqlite::Connection&)> work, std::function<void()> deliver) {
    {
        std::lock_guard lock(impl_->mutex);
        impl_->jobs.push_back({std::move(work), std::move(deliver)});
    }
    impl_->wake.notify_one();
}

std::string RunWriter::lastError() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->last_error;
}

void RunWriter::limitDatabasePages(int64_t pages) {
    std::lock_guard lock(impl_->db_mutex);
    impl_->db->queryInt("PRAGMA max_page_count = " + std::to_string(pages));
}

const std::string& RunWriter::path() const { return impl_->path; }

RunRecorder::RunRecorder(std::shared_ptr<RunWriter> writer, int64_t run_id)
    : writer_(std::move(writer)), run_id_(run_id) {}

void RunRecorder::onEvent(const Event& event) { writer_->enqueue(run_id_, event); }

}  // namespace hearth
