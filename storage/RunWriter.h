#pragma once
// RunWriter: the one writer of a process. A thread with its own connection takes events from a
// queue and writes them in transactions flushed at least once a second and at every epoch end
// and run end. RunRecorder is the EventSink of one run: it enqueues and returns at once.

#include "engine/events/Events.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace hearth {

class RunWriter {
public:
    // Opens its own connection to `path` (creating/migrating). Throws StoreError.
    explicit RunWriter(const std::string& path);
    ~RunWriter();                    // drains the queue, commits, joins
    RunWriter(const RunWriter&) = delete;
    RunWriter& operator=(const RunWriter&) = delete;

    // Synchronous: inserts a `running` run row (with this process's pid) and returns its id.
    int64_t createRun(const std::string& name, const std::string& config_json,
                      std::optional<int64_t> sweep_id = std::nullopt);
    int64_t createSweep(const std::string& name, const std::string& kind);
    // Folder for this run's files (checkpoints, exports): "<db>.artifacts/<run id>/", created.
    std::string artifactsDir(int64_t run_id) const;

    void enqueue(int64_t run_id, Event event);   // never blocks on the disk
    void flush();                                // waits until everything queued is committed
    // The last write error (e.g. disk full), empty when none. Writes after an error are dropped
    // for that run only; the run is marked failed with this message when possible.
    std::string lastError() const;

    // Caps the database at `pages` pages for this connection (PRAGMA max_page_count): a quota,
    // and how tests reproduce a full disk.
    void limitDatabasePages(int64_t pages);
    const std::string& path() const;

private:
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

}  // namespace hearth
