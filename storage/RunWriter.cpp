#include "storage/RunWriter.h"

#include "storage/BatchWriter.h"
#include "storage/ProcessIdentity.h"
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
           std::holds_alternative<RunFailed>(event) || std::holds_alternative<EvalReport>(event);
}

}  // namespace

struct RunWriter::Impl {
    std::string path;
    process::Identity self;

    // The connection: used by the writer thread and by the synchronous calls (createRun, ...).
    std::mutex db_mutex;
    std::unique_ptr<sqlite::Connection> db;
    std::unique_ptr<BatchWriter> batch_writer;

    // The queue, guarded by `mutex`; the writer holds it only to swap the queue out.
    mutable std::mutex mutex;
    std::condition_variable wake;       // writer: new work / flush / stop
    std::condition_variable committed_cv;
    std::vector<QueuedEvent> queue;
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
};

bool RunWriter::Impl::waitForWork(std::unique_lock<std::mutex>& lock) {
    for (;;) {
        if (force || stopping || committed < flush_target || queue.size() >= kEarlyWriteQueueLength) return true;
        if (queue.empty()) {
            wake.wait(lock);
        } else if (wake.wait_until(lock, oldest + kCommitInterval) == std::cv_status::timeout) {
            return true;
        }
    }
}

void RunWriter::Impl::run() {
    std::vector<QueuedEvent> batch;
    for (;;) {
        uint64_t target = 0;
        {
            std::unique_lock lock(mutex);
            waitForWork(lock);
            if (queue.empty() && stopping) {
                committed = enqueued;
                committed_cv.notify_all();
                return;
            }
            batch.clear();
            batch.swap(queue);
            force = false;
            target = enqueued;
        }
        std::string error;
        try {
            std::lock_guard db_lock(db_mutex);
            error = batch_writer->write(batch);
        } catch (const std::exception& e) {   // never let an exception end the thread
            error = e.what();
        }
        std::lock_guard lock(mutex);
        if (!error.empty()) last_error = error;
        committed = target;
        committed_cv.notify_all();
    }
}

RunWriter::RunWriter(const std::string& path) : impl_(std::make_unique<Impl>()) {
    impl_->path = path;
    impl_->self = process::self();
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
    auto& db = *impl_->db;
    sqlite::Transaction tx(db);
    db.cached(R"sql(
INSERT INTO runs (name, status, started_at, pid, hostname, process_start, config_json, sweep_id)
VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7))sql")
        .bind(1, name)
        .bind(2, unixNow())
        .bind(3, impl_->self.pid)
        .bind(4, impl_->self.hostname)
        .bind(5, impl_->self.start_ticks)
        .bind(6, config_json.empty() ? std::string("{}") : config_json)
        .bind(7, sweep_id)
        .run();
    const int64_t id = sqlite3_last_insert_rowid(db.handle());
    tx.commit();
    return id;
}

int64_t RunWriter::createSweep(const std::string& name, const std::string& kind) {
    std::lock_guard lock(impl_->db_mutex);
    auto& db = *impl_->db;
    sqlite::Transaction tx(db);
    db.cached("INSERT INTO sweeps (name, kind, created_at) VALUES (?1, ?2, ?3)")
        .bind(1, name).bind(2, kind).bind(3, unixNow())
        .run();
    const int64_t id = sqlite3_last_insert_rowid(db.handle());
    tx.commit();
    return id;
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
