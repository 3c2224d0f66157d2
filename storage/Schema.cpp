#include "storage/Schema.h"

#include <chrono>
#include <filesystem>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace hearth::schema {
namespace {

namespace fs = std::filesystem;

// v1: the initial schema. Kept verbatim forever: tests build a v1 database from it.
// step_metrics holds blocks of consecutive logged steps (packed little-endian fields, see
// StepBlock.h): one row per step costs ~0.5 s to read a 1,000,000-step curve; blocks ~20 ms.
constexpr const char* kV1 = R"sql(
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'completed', 'failed', 'stopped')),
    started_at REAL NOT NULL,
    finished_at REAL,
    pid INTEGER NOT NULL DEFAULT 0,
    hostname TEXT NOT NULL DEFAULT '',
    process_start INTEGER NOT NULL DEFAULT 0,
    config_json TEXT NOT NULL DEFAULT '{}',
    effective_json TEXT NOT NULL DEFAULT '{}',
    environment_json TEXT NOT NULL DEFAULT '{}',
    setup_json TEXT NOT NULL DEFAULT '{}',
    device TEXT NOT NULL DEFAULT '',
    best_val_acc REAL,
    test_acc REAL,
    test_loss REAL,
    train_time_s REAL,
    total_time_s REAL,
    samples_per_sec REAL,
    peak_memory_bytes INTEGER,
    epochs_completed INTEGER NOT NULL DEFAULT 0,
    global_steps INTEGER NOT NULL DEFAULT 0,
    failure_kind TEXT NOT NULL DEFAULT '',
    failure_message TEXT NOT NULL DEFAULT '',
    notes TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_by_start ON runs (started_at);

CREATE TABLE tags (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (run_id, tag)
) WITHOUT ROWID;

CREATE TABLE step_metrics (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    block INTEGER NOT NULL,
    first_step INTEGER NOT NULL,
    last_step INTEGER NOT NULL,
    row_count INTEGER NOT NULL,
    field_count INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (run_id, block)
);

CREATE TABLE epoch_metrics (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    epoch INTEGER NOT NULL,
    global_step INTEGER NOT NULL,
    train_loss REAL NOT NULL,
    train_acc REAL NOT NULL,
    val_loss REAL NOT NULL,
    val_acc REAL NOT NULL,
    lr REAL NOT NULL,
    epoch_time_s REAL NOT NULL,
    samples_per_sec REAL NOT NULL,
    data_wait_share REAL NOT NULL,
    skipped_steps INTEGER NOT NULL,
    is_best INTEGER NOT NULL,
    PRIMARY KEY (run_id, epoch)
) WITHOUT ROWID;

CREATE TABLE device_samples (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    elapsed_s REAL NOT NULL,
    device INTEGER NOT NULL,
    name TEXT NOT NULL,
    allocated_bytes INTEGER NOT NULL,
    reserved_bytes INTEGER NOT NULL,
    peak_bytes INTEGER NOT NULL,
    total_bytes INTEGER NOT NULL,
    utilization REAL NOT NULL
);
CREATE INDEX device_samples_by_run ON device_samples (run_id, id);

CREATE TABLE reports (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    split TEXT NOT NULL,
    loss REAL NOT NULL,
    report_json TEXT NOT NULL,
    PRIMARY KEY (run_id, split)
);

CREATE TABLE predictions (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    split TEXT NOT NULL,
    idx INTEGER NOT NULL,
    true_label INTEGER NOT NULL,
    predicted INTEGER NOT NULL,
    confidence REAL NOT NULL,
    PRIMARY KEY (run_id, split, idx)
) WITHOUT ROWID;

CREATE TABLE log_lines (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    level TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX log_lines_by_run ON log_lines (run_id, id);

CREATE TABLE artifacts (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    path TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    epoch INTEGER NOT NULL DEFAULT -1,
    monitor TEXT NOT NULL DEFAULT '',
    value REAL NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    UNIQUE (run_id, path)
);
)sql";

// v2: sweeps (a grid/random search groups runs), and indexes for the history filters.
constexpr const char* kV2 = R"sql(
CREATE TABLE sweeps (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at REAL NOT NULL
);
ALTER TABLE runs ADD COLUMN sweep_id INTEGER REFERENCES sweeps (id) ON DELETE SET NULL;
CREATE INDEX runs_by_sweep ON runs (sweep_id);
CREATE INDEX runs_by_status ON runs (status);
CREATE INDEX tags_by_tag ON tags (tag, run_id);
)sql";

// v3: data-parallel runs: one row per rank (timings, memory, its log), device samples per rank.
constexpr const char* kV3 = R"sql(
CREATE TABLE run_ranks (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    rank INTEGER NOT NULL,
    world_size INTEGER NOT NULL,
    backend TEXT NOT NULL,
    device TEXT NOT NULL,
    pid INTEGER NOT NULL,
    samples INTEGER NOT NULL,
    train_time_s REAL NOT NULL,
    samples_per_sec REAL NOT NULL,
    data_wait_s REAL NOT NULL,
    peak_memory_bytes INTEGER NOT NULL,
    log_path TEXT NOT NULL,
    steps INTEGER NOT NULL,
    comm_steps INTEGER NOT NULL,
    comm_ms REAL NOT NULL,
    overlap_ms REAL NOT NULL,
    PRIMARY KEY (run_id, rank)
) WITHOUT ROWID;
ALTER TABLE device_samples ADD COLUMN rank INTEGER NOT NULL DEFAULT 0;
)sql";

// v4: where time and memory go: the step-time breakdown per epoch, the driver's view of each
// device (NVML), and the memory breakdown of a run.
constexpr const char* kV4 = R"sql(
ALTER TABLE epoch_metrics ADD COLUMN bd_data_wait_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE epoch_metrics ADD COLUMN bd_host_to_device_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE epoch_metrics ADD COLUMN bd_forward_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE epoch_metrics ADD COLUMN bd_backward_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE epoch_metrics ADD COLUMN bd_comm_wait_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE epoch_metrics ADD COLUMN bd_optimizer_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE epoch_metrics ADD COLUMN bd_sync_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE epoch_metrics ADD COLUMN bd_step_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE epoch_metrics ADD COLUMN bd_profiled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE device_samples ADD COLUMN driver_used_bytes INTEGER NOT NULL DEFAULT -1;
ALTER TABLE device_samples ADD COLUMN temperature_c REAL NOT NULL DEFAULT -1;
ALTER TABLE device_samples ADD COLUMN power_w REAL NOT NULL DEFAULT -1;
ALTER TABLE device_samples ADD COLUMN power_limit_w REAL NOT NULL DEFAULT -1;
ALTER TABLE device_samples ADD COLUMN sm_clock_mhz REAL NOT NULL DEFAULT -1;
CREATE TABLE run_memory (
    run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    device TEXT NOT NULL,
    parameters_bytes INTEGER NOT NULL,
    gradients_bytes INTEGER NOT NULL,
    optimizer_state_bytes INTEGER NOT NULL,
    activations_bytes INTEGER NOT NULL,
    reserved_unused_bytes INTEGER NOT NULL,
    other_bytes INTEGER NOT NULL,
    peak_bytes INTEGER NOT NULL
);
)sql";

// v5: why a completed run ended before its last epoch (early stopping).
constexpr const char* kV5 = R"sql(
ALTER TABLE runs ADD COLUMN stop_reason TEXT NOT NULL DEFAULT '';
)sql";

// v6: achieved model FLOPs per device and MFU (NULL: unknown; older runs).
constexpr const char* kV6 = R"sql(
ALTER TABLE runs ADD COLUMN tflops REAL;
ALTER TABLE runs ADD COLUMN mfu REAL;
)sql";

// v7: the memory a captured training step's CUDA graph holds (0: none; older runs).
constexpr const char* kV7 = R"sql(
ALTER TABLE run_memory ADD COLUMN cuda_graph_bytes INTEGER NOT NULL DEFAULT 0;
)sql";

// v8: the host memory an offloaded optimizer holds instead of the device (0: none; older runs).
constexpr const char* kV8 = R"sql(
ALTER TABLE run_memory ADD COLUMN offloaded_bytes INTEGER NOT NULL DEFAULT 0;
)sql";

// v9: a sweep's plan (a ladder's chosen rungs, order, repeats and steps, as JSON) and which step
// and repeat of it each of its runs is.
constexpr const char* kV9 = R"sql(
ALTER TABLE sweeps ADD COLUMN plan_json TEXT NOT NULL DEFAULT '';
CREATE TABLE sweep_runs (
    sweep_id INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step INTEGER NOT NULL,
    repeat INTEGER NOT NULL,
    PRIMARY KEY (sweep_id, run_id)
);
CREATE INDEX sweep_runs_by_run ON sweep_runs (run_id);
)sql";

// v10: what each rank of a data-parallel run held: its share of the gradients and of the
// optimizer state (-1: not measured; older runs).
constexpr const char* kV10 = R"sql(
ALTER TABLE run_ranks ADD COLUMN gradients_bytes INTEGER NOT NULL DEFAULT -1;
ALTER TABLE run_ranks ADD COLUMN optimizer_state_bytes INTEGER NOT NULL DEFAULT -1;
)sql";

void ensureFolder(const fs::path& folder, const std::string& path) {
    if (folder.empty()) return;
    std::error_code ec;
    if (fs::is_directory(folder, ec)) return;
    fs::create_directories(folder, ec);
    if (ec) throw StoreError("Cannot create the folder '" + folder.string() + "' for the run database '" + path +
                             "': " + ec.message() + ".");
}

// Reads the schema version on a read-only connection, so a foreign or newer file is refused
// before WAL is enabled or anything is written.
void refuseNewerOrForeign(const std::string& path) {
    sqlite::Connection probe(path, /*read_only=*/true);
    const int64_t version = probe.queryInt("PRAGMA user_version");
    if (version > latestVersion()) {
        throw StoreError("The run database '" + path + "' was written by a newer Hearth (schema " +
                         std::to_string(version) + "; this build reads up to " + std::to_string(latestVersion()) +
                         "). Update Hearth, or use another database with --db or $HEARTH_DB; the file was "
                         "left unchanged.");
    }
}

// Switches a connection to WAL and returns the journal mode now in effect. Switching a new file
// needs an exclusive lock, and SQLite answers SQLITE_BUSY at once (without its busy handler)
// while another process is creating or switching the same file: retried here for up to 30 s.
static std::string journalModeWal(sqlite::Connection& db) {
    std::string mode;
    const auto collect = [](void* out, int, char** values, char**) {
        *static_cast<std::string*>(out) = values && values[0] ? values[0] : "";
        return 0;
    };
    for (int attempt = 0;; ++attempt) {
        const int rc = sqlite3_exec(db.handle(), "PRAGMA journal_mode = WAL", collect, &mode, nullptr);
        if (rc == SQLITE_OK) return mode;
        if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || attempt >= 1500) db.fail(rc, "PRAGMA journal_mode = WAL");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

void migrate(sqlite::Connection& db) {
    for (const auto& m : migrations()) {
        if (db.queryInt("PRAGMA user_version") >= m.version) continue;
        sqlite::Transaction tx(db);
        // Another process may have migrated while we waited for the write lock.
        if (db.queryInt("PRAGMA user_version") >= m.version) continue;
        db.exec(m.sql);
        db.exec("PRAGMA user_version = " + std::to_string(m.version));
        tx.commit();
    }
}

}  // namespace

const std::vector<Migration>& migrations() {
    static const std::vector<Migration> list{
        {1, "initial schema", kV1},
        {2, "sweeps and history indexes", kV2},
        {3, "ranks of data-parallel runs", kV3},
        {4, "step-time and memory breakdowns, NVML device statistics", kV4},
        {5, "stop reasons (early stopping)", kV5},
        {6, "achieved TFLOP/s and MFU", kV6},
        {7, "CUDA graph memory", kV7},
        {8, "offloaded optimizer memory", kV8},
        {9, "sweep plans and each run's step and repeat", kV9},
        {10, "each rank's gradients and optimizer state", kV10},
    };
    return list;
}

int latestVersion() { return migrations().back().version; }

std::unique_ptr<sqlite::Connection> openStore(const std::string& path) {
    if (path.empty()) throw StoreError("No run database path was given.");
    const fs::path file(path);
    std::error_code ec;
    if (fs::is_directory(file, ec))
        throw StoreError("'" + path + "' is a folder, not a run database file.");
    const fs::path folder = file.parent_path();
    ensureFolder(folder, path);

    if (fs::exists(file, ec)) {
        if (fs::file_size(file, ec) > 0 && !ec) refuseNewerOrForeign(path);
    } else if (::access(folder.empty() ? "." : folder.c_str(), W_OK) != 0) {
        throw StoreError("Cannot create the run database '" + path + "': its folder '" + folder.string() +
                         "' is read-only.");
    }

    auto db = std::make_unique<sqlite::Connection>(path, /*read_only=*/false);
    if (sqlite3_db_readonly(db->handle(), "main") == 1)
        throw StoreError("The run database '" + path + "' is read-only: Hearth needs write access to the file "
                         "and its folder.");
    if (journalModeWal(*db) != "wal")
        throw StoreError("The run database '" + path + "' cannot use write-ahead logging (WAL); is it on a "
                         "network file system?");
    // mmap: a 1,000,000-step curve is ~100 MB of blob pages; reading them through the map
    // instead of one pread() per 4 KiB page makes that read 3-5x faster.
    db->exec("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA mmap_size = 1073741824;");
    migrate(*db);
    return db;
}

}  // namespace hearth::schema
