#pragma once
// The writer thread's half of RunWriter: applies a batch of queued events to the database in
// one transaction (step rows packed into blocks), and contains a failed batch to its runs.

#include "engine/events/Events.h"
#include "storage/Sqlite.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace hearth {

struct QueuedEvent {
    int64_t run_id = 0;
    Event event;
};

class BatchWriter final {
public:
    struct FileDigest {
        std::string sha256;                  // empty when the file could not be read
        int64_t bytes = -1;
    };

    explicit BatchWriter(sqlite::Connection& db) : db_(db) {}

    // The checksums of the batch's checkpoints and rank logs (one entry per event; empty for
    // other events).
    // Needs no connection: the writer hashes before it takes the connection and the write lock,
    // so a large checkpoint holds up neither other processes nor the writer's own jobs.
    static std::vector<FileDigest> digestCheckpoints(const std::vector<QueuedEvent>& batch);

    // Writes `batch` in one transaction. On failure (disk full, I/O error) the transaction is
    // rolled back, the runs in the batch stop being written and are marked failed when
    // possible; the returned message (empty on success) says what happened.
    std::string write(const std::vector<QueuedEvent>& batch, const std::vector<FileDigest>& digests);
    // A run reopened for a resume: its open step block and any earlier write failure are forgotten.
    void forget(int64_t run_id) { runs_.erase(run_id); }

private:
    struct RunState {
        int64_t block = -1;                  // index of the open step block; -1 = not looked up
        std::vector<StepMetrics> open;       // steps of the open block
        bool dirty = false;                  // open block changed since last written
        bool broken = false;                 // a write failed: further events are dropped
    };

    void apply(int64_t run_id, const Event& event, const FileDigest& digest);
    void applyStep(int64_t run_id, const StepMetrics& step);
    void writeOpenBlock(int64_t run_id, RunState& state);
    void finishSteps();                       // writes dirty open blocks, updates global_steps
    void markFailed(const std::set<int64_t>& run_ids, const std::string& message);

    void onStarted(int64_t run_id, const RunStarted& e);
    void onEpoch(int64_t run_id, const EpochMetrics& e);
    void onReport(int64_t run_id, const EvalReport& e);
    void onPredictions(int64_t run_id, const PredictionsReady& e);
    void onCheckpoint(int64_t run_id, const CheckpointSaved& e, const FileDigest& digest);
    void onDeviceSample(int64_t run_id, const DeviceSample& e);
    void onRankSummary(int64_t run_id, const RankSummary& e, const FileDigest& digest);
    void onLog(int64_t run_id, const LogLine& e);
    void onFinished(int64_t run_id, const RunFinished& e);
    void onFailed(int64_t run_id, const RunFailed& e);

    sqlite::Connection& db_;
    std::map<int64_t, RunState> runs_;
};

double unixNow();

}  // namespace hearth
