#pragma once
// Writes of single rows on a store connection: creating a run or sweep, renaming, tagging,
// noting and deleting a run. RunStore's edits (the CLI) and RunWriter jobs (the GUI, on the
// writer thread) both go through these, so either way the same rows change the same way.
// Each is one BEGIN IMMEDIATE transaction; failures throw StoreError naming the run and path.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hearth::sqlite {
class Connection;
}

namespace hearth::runedits {

// A `running` run row owned by this process (pid, host, start time); returns its id.
int64_t createRun(sqlite::Connection& db, const std::string& name, const std::string& config_json,
                  std::optional<int64_t> sweep_id = std::nullopt);
// plan_json: what the sweep planned (a ladder's LadderPlan JSON); empty for none.
int64_t createSweep(sqlite::Connection& db, const std::string& name, const std::string& kind,
                    const std::string& plan_json = "");
// Replaces sweep `sweep_id`'s plan (a ladder records which steps it left out once it knows).
void setSweepPlan(sqlite::Connection& db, int64_t sweep_id, const std::string& plan_json);
// Records run `run_id` as repeat `repeat` of step `step` of sweep `sweep_id` (both 0-based).
void addSweepRun(sqlite::Connection& db, int64_t sweep_id, int64_t run_id, int64_t step, int64_t repeat);

// The name made one line (oneLine); a blank one throws StoreError.
void rename(sqlite::Connection& db, int64_t run_id, const std::string& name);
// The run's tags become the ones `tags` names (tagsFromWords: split at commas, one line each).
void setTags(sqlite::Connection& db, int64_t run_id, const std::vector<std::string>& tags);
void setNotes(sqlite::Connection& db, int64_t run_id, const std::string& notes);
// Resume: a stopped, failed or interrupted run becomes this process's `running` run again,
// continuing from optimizer step `global_step` in (0-based) epoch `epoch`: what was stored after
// that point goes (the steps logged after it, the epochs from `epoch` on, the test report and
// predictions, the end-of-run summary, rank records and memory breakdown, device samples after
// `elapsed_s`); the log and the artifacts stay. Refuses a completed run and one whose writer still
// lives (StoreError, nothing changed).
void reopenRun(sqlite::Connection& db, int64_t run_id, int64_t global_step, int64_t epoch, double elapsed_s);

// How a run stands in the store: its status ("running", "completed", "stopped", "failed") and,
// for a failed one, the stored message. nullopt when there is no such run. The workbench reads a
// job's end from here once its process has exited, never from what it assumed.
struct StoredStatus {
    std::string status;
    std::string failure_message;
};
std::optional<StoredStatus> storedStatus(sqlite::Connection& db, int64_t run_id);
// The rows (children by ON DELETE CASCADE), then the run's own artifacts folder.
void deleteRun(sqlite::Connection& db, int64_t run_id);

}  // namespace hearth::runedits
