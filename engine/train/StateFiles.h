#pragma once
// The safety checkpoints' files in a run's artifacts folder: state-<optimizer step>.pt, written by
// SafetyCheckpoint, read by a resume. Torch-free (hearth-cli and the workbench look for them).

#include <cstdint>
#include <string>
#include <vector>

namespace hearth {

// "state-000000120.pt" for optimizer step 120: names sort by step.
std::string trainingStateFileName(int64_t global_step);
// The training states in `directory` (state-<step>.pt), newest first. No folder: none.
std::vector<std::string> trainingStatesIn(const std::string& directory);
// Deletes them: a completed run cannot be resumed and needs none. Returns the paths deleted.
std::vector<std::string> removeTrainingStates(const std::string& directory);

// The optimizer step in a state file's name ("state-000000120.pt": 120); -1 for other names.
int64_t trainingStateStep(const std::string& path);

}  // namespace hearth
