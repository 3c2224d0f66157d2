#pragma once
// RunStore: the SQLite home of every run (config, environment, metrics, reports, predictions,
// artifacts). Readers open their own RunStore; all writes of a process go through one
// RunWriter thread (RunWriter.h). No Qt.

#include "engine/events/Events.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hearth {

// Any store failure: not a database, newer schema, read-only, disk full, unknown run, ...
// what() is a complete sentence naming the path or run.
class StoreError : public std::runtime_error {
public:
    explicit StoreError(const std::string& message) : std::runtime_error(message) {}
};

struct RunSummary {
    int64_t id = 0;
    std::string name;
    std::string status;              // running | completed | failed | stopped | interrupted
    double started_at = 0.0;         // Unix seconds
    double finished_at = 0.0;        // 0 while running
    std::string config_json;
    std::string effective_json;      // {"dotted.key": "what ran"}
    std::string environment_json;
    std::string device;
    std::optional<double> best_val_accuracy, test_accuracy, train_time_s, samples_per_sec;
    std::optional<int64_t> peak_memory_bytes;
    int64_t epochs_completed = 0;
    int64_t global_steps = 0;
    std::vector<std::string> tags;
    std::string notes;
    std::string failure_message;     // failed runs: message and suggestion
    std::optional<int64_t> sweep_id;
    std::string sweep_name;
    std::string sweep_kind;          // "ladder", "memory-ladder", ...; empty outside a sweep
    std::optional<double> test_loss, total_time_s;
    // Model FLOPs per second per device over the training time, and that over the device's dense
    // peak (a fraction); unset where unknown (no FLOP count, no peak, older runs).
    std::optional<double> tflops, mfu;
    std::string failure_kind;        // config | data | training | storage; empty unless failed
    std::string stop_reason;         // why a completed run ended before max_epochs (early stopping)
    int64_t pid = 0;                 // the writing process, for liveness
    std::string hostname;
};

struct RunFilter {
    std::string status;              // empty = any
    std::string tag;                 // empty = any
    std::string text;                // substring of name, notes or tags; empty = any
    int64_t limit = 0;               // 0 = no limit; newest first
};

struct Artifact {
    int64_t id = 0;
    std::string kind;                // checkpoint | export | state (a safety checkpoint's training state)
    std::string path;                // absolute
    int64_t bytes = 0;
    std::string sha256;
    // Checkpoints: the epoch and monitored value when saved (epoch -1 otherwise).
    int64_t epoch = -1;
    std::string monitor;
    double value = 0.0;
    double created_at = 0.0;         // Unix seconds
};

// A sweep as stored: what it planned and its runs in the order they were recorded, each with its
// step and repeat (both -1 for a run of a sweep stored before schema v9, or of one without a plan).
struct SweepRun {
    int64_t run_id = 0;
    int64_t step = -1;
    int64_t repeat = -1;
};
struct SweepRecord {
    int64_t id = 0;
    std::string name;
    std::string kind;                // "ladder", "memory-ladder", ...
    std::string plan_json;           // empty: none stored
    double created_at = 0.0;
    std::vector<SweepRun> runs;
};

class RunStore {
public:
    // Opens (creating and migrating as needed) the database at `path`. Throws StoreError.
    explicit RunStore(const std::string& path);
    ~RunStore();
    RunStore(const RunStore&) = delete;
    RunStore& operator=(const RunStore&) = delete;

    // $HEARTH_DB, else $XDG_DATA_HOME/hearth/runs.sqlite, else ~/.local/share/hearth/runs.sqlite.
    static std::string defaultPath();
    static int schemaVersion();      // the version this build writes

    const std::string& path() const;
    std::vector<RunSummary> listRuns(const RunFilter& filter = {}) const;
    std::optional<RunSummary> run(int64_t id) const;
    // An id ("12") or a unique name prefix; throws StoreError naming the candidates otherwise.
    int64_t resolveRun(const std::string& id_or_prefix) const;

    std::vector<StepMetrics> steps(int64_t run_id) const;
    // The steps logged after `global_step`: what a view of a live run polls for.
    std::vector<StepMetrics> stepsAfter(int64_t run_id, int64_t global_step) const;
    std::vector<EpochMetrics> epochs(int64_t run_id) const;
    std::vector<DeviceSample> deviceSamples(int64_t run_id) const;  // every rank's, in arrival order
    // What filled memory at the run's peak (rank 0's device); none for runs stored before schema
    // v4 or stopped before their first optimizer step.
    std::optional<MemoryBreakdown> memoryBreakdown(int64_t run_id) const;
    // The newest completed run named one of `names` (a ladder's baseline, the experiment itself)
    // with a total time: its id and that time in seconds. nullopt when there is none.
    std::optional<std::pair<int64_t, double>> latestCompletedRun(const std::vector<std::string>& names) const;
    // Sweep `sweep_id` with its plan and runs; nullopt when there is none.
    std::optional<SweepRecord> sweep(int64_t sweep_id) const;
    // A data-parallel run's ranks, in rank order (empty for a run on one device).
    std::vector<RankSummary> ranks(int64_t run_id) const;
    std::optional<EvalReport> report(int64_t run_id, const std::string& split) const;
    std::vector<Prediction> predictions(int64_t run_id, const std::string& split,
                                        bool misclassified_only = false) const;
    std::vector<std::string> logLines(int64_t run_id) const;
    std::vector<Artifact> artifacts(int64_t run_id) const;
    // The run's best checkpoint (best.pt) as recorded: its last "checkpoint" artifact; "" when it
    // saved none (it stopped before its first validation). What predict and export read.
    std::string bestCheckpoint(int64_t run_id) const;
    // Why run `run_id` has nothing to predict with or export: it saved no checkpoint, or its file
    // is gone; "" when best.pt is there.
    std::string checkpointProblem(int64_t run_id) const;
    // What run `run_id` keeps once reopened at the training state `state_path` (RunWriter::
    // reopenRun's cut there): its steps up to the state's optimizer step and its epochs before the
    // state's epoch, as recorded with the state (a state at an epoch's end comes before or after
    // its validation); without that record, the epoch of the last step kept.
    struct KeptHistory {
        std::vector<StepMetrics> steps;
        std::vector<EpochMetrics> epochs;
    };
    KeptHistory historyKeptAt(int64_t run_id, const std::string& state_path) const;
    // The RunStarted event as stored (config, effective settings, environment, sizes, classes).
    std::optional<RunStarted> runStarted(int64_t run_id) const;
    std::vector<LogLine> logEntries(int64_t run_id) const;   // logLines() with their levels
    // "<db>.artifacts/<run id>/" (not created).
    std::string artifactsDir(int64_t run_id) const;

    void rename(int64_t run_id, const std::string& name);
    void setTags(int64_t run_id, const std::vector<std::string>& tags);
    void setNotes(int64_t run_id, const std::string& notes);
    void deleteRun(int64_t run_id);   // rows and artifact files

    // Changes whenever any connection commits (PRAGMA data_version + own writes): poll it to
    // refresh views when another process (e.g. hearth-cli) adds runs.
    int64_t changeCounter() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hearth
