#pragma once
// RunWriter: the one writer of a process. A thread with its own connection takes events from a
// queue and writes them in transactions flushed at least once a second and at every epoch end
// and run end; between batches it runs submitted jobs (any other database work) on the same
// connection. RunRecorder is the EventSink of one run: it enqueues and returns at once.

#include "engine/events/Events.h"

#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace hearth {

namespace sqlite {
class Connection;
}

// What a RunWriter job left behind: its value, or the text of what it threw (a StoreError's
// message names the path or run). `error` is empty exactly when the job succeeded.
template <class T>
struct JobResult {
    std::optional<T> value;
    std::string error;
    bool ok() const { return error.empty(); }
};

template <>
struct JobResult<void> {
    std::string error;
    bool ok() const { return error.empty(); }
};

class RunWriter {
public:
    // Opens its own connection to `path` (creating/migrating). Throws StoreError.
    explicit RunWriter(const std::string& path);
    ~RunWriter();                    // drains the queue and the jobs, commits, joins
    RunWriter(const RunWriter&) = delete;
    RunWriter& operator=(const RunWriter&) = delete;

    // Synchronous (the caller waits for the connection and the write lock; for hearth-cli and
    // tests): inserts a `running` run row (with this process's pid) and returns its id. A caller
    // that must not wait (the GUI thread) submits runedits::createRun as a job instead.
    int64_t createRun(const std::string& name, const std::string& config_json,
                      std::optional<int64_t> sweep_id = std::nullopt);
    int64_t createSweep(const std::string& name, const std::string& kind, const std::string& plan_json = "");
    // Synchronous: run `run_id` is repeat `repeat` of step `step` of the sweep (runedits::addSweepRun).
    void addSweepRun(int64_t sweep_id, int64_t run_id, int64_t step, int64_t repeat);
    void setSweepPlan(int64_t sweep_id, const std::string& plan_json);   // synchronous (runedits::setSweepPlan)
    // Synchronous: a stopped, failed or interrupted run becomes this process's running run again,
    // continuing after optimizer step `global_step` in epoch `epoch` (runedits::reopenRun: what
    // was stored after that point goes). Throws StoreError (a completed or live run), nothing changed.
    void reopenRun(int64_t run_id, int64_t global_step, int64_t epoch, double elapsed_s);
    // Folder for this run's files (checkpoints, exports): "<db>.artifacts/<run id>/", created.
    std::string artifactsDir(int64_t run_id) const;

    void enqueue(int64_t run_id, Event event);   // never blocks on the disk
    void flush();                                // waits until everything queued is committed
    // The last write error (e.g. disk full), empty when none. Writes after an error are dropped
    // for that run only; the run is marked failed with this message when possible.
    std::string lastError() const;

    // Runs `job(sqlite::Connection&)` on the writer thread and returns at once. Jobs run in the
    // order submitted, between event batches, after every event enqueued before them has been
    // written (a job is also a flush barrier), and never concurrently with the synchronous calls
    // above. `done(JobResult<R>)` then runs on the writer thread, without the connection held:
    // hand the result to your own thread from there. Jobs still queued when the writer is
    // destroyed run before it joins, so no result is lost.
    template <class Job, class Done>
    void submit(Job job, Done done);
    // The same for a caller that may wait: the future holds the value, or rethrows the error.
    template <class Job>
    auto submit(Job job) -> std::future<std::invoke_result_t<Job&, sqlite::Connection&>>;

    // Caps the database at `pages` pages for this connection (PRAGMA max_page_count): a quota,
    // and how tests reproduce a full disk.
    void limitDatabasePages(int64_t pages);
    const std::string& path() const;

private:
    // `work` runs with the connection held; `deliver` after it is released.
    void post(std::function<void(sqlite::Connection&)> work, std::function<void()> deliver);

    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The EventSink of one run.
class RunRecorder final : public EventSink {
public:
    RunRecorder(std::shared_ptr<RunWriter> writer, int64_t run_id);
    void onEvent(const Event& event) override;
    int64_t runId() const { return run_id_; }
private:
    std::shared_ptr<RunWriter> writer_;
    int64_t run_id_;
};

namespace detail {

inline std::string describeCurrentException() {
    try {
        throw;
    } catch (const std::exception& e) {
        return *e.what() ? e.what() : "The run database reported an unnamed error.";
    } catch (...) {
        return "The run database job failed with an unknown error.";
    }
}

}  // namespace detail

template <class Job, class Done>
void RunWriter::submit(Job job, Done done) {
    using R = std::invoke_result_t<Job&, sqlite::Connection&>;
    auto result = std::make_shared<JobResult<R>>();
    post(
        [job = std::move(job), result](sqlite::Connection& db) mutable {
            try {
                if constexpr (std::is_void_v<R>)
                    job(db);
                else
                    result->value.emplace(job(db));
            } catch (...) {
                result->error = detail::describeCurrentException();
            }
        },
        [done = std::move(done), result]() mutable { done(std::move(*result)); });
}

template <class Job>
auto RunWriter::submit(Job job) -> std::future<std::invoke_result_t<Job&, sqlite::Connection&>> {
    using R = std::invoke_result_t<Job&, sqlite::Connection&>;
    auto promise = std::make_shared<std::promise<R>>();
    auto future = promise->get_future();
    post(
        [job = std::move(job), promise](sqlite::Connection& db) mutable {
            try {
                if constexpr (std::is_void_v<R>) {
                    job(db);
                    promise->set_value();
                } else {
                    promise->set_value(job(db));
                }
            } catch (...) {
                promise->set_exception(std::current_exception());
            }
        },
        [] {});
    return future;
}

}  // namespace hearth
