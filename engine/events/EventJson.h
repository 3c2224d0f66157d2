#pragma once
// Events as JSON lines: how a run in other processes reports to the workbench. `hearth-cli run
// --events` writes one object per line to standard output ({"event": "step", ...}); the
// workbench reads them back into the same Events its live view takes from an in-process run.

#include "engine/events/Events.h"

#include <optional>
#include <string>

namespace hearth::eventjson {

// One line of JSON (no newline) for an event.
std::string toLine(const Event& event);
// The event of a line written by toLine; nullopt for a line that is not one (other output, a
// truncated line, an event kind this build does not know).
std::optional<Event> fromLine(const std::string& line);

// "config", "data", "training" (a failed event's "kind"); an unknown name reads as training.
const char* failureKindName(FailureKind kind);
FailureKind failureKindFromName(const std::string& name);

// The line that names the run the events belong to (written before its first event).
std::string runLine(int64_t run_id);
std::optional<int64_t> runIdFromLine(const std::string& line);
// `hearth-cli sweep --events`: the sweep's line, written first; each step's run line and events follow.
std::string sweepLine(int64_t sweep_id);
std::optional<int64_t> sweepIdFromLine(const std::string& line);

}  // namespace hearth::eventjson
