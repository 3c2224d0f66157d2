#pragma once
// A finder's report as JSON lines: how `hearth-cli tune --events` tells the workbench, which runs
// every finder as a child process, what it is doing and what it found. One object per line
// ({"event": "finder_trial", ...}); lines that are not one read back as nothing.

#include "engine/run/Finders.h"

#include <optional>
#include <string>
#include <variant>

namespace hearth::finderjson {

struct Progress {
    double fraction = 0.0;
    std::string what;
};
struct Log {
    std::string text;
};
struct Failure {
    FailureKind kind = FailureKind::Training;
    std::string message;
};
// LrPoint: one step of the learning-rate sweep as it is measured.
using Line = std::variant<Progress, Log, BatchSizeTrial, LrPoint, BatchSizeResult, LrFinderResult, Failure>;

std::string toLine(const Line& line);
std::optional<Line> fromLine(const std::string& text);

}  // namespace hearth::finderjson
