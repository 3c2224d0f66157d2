#pragma once
// The ladder's text: the planner's list of rungs (`sweep --ladder --plan`), a stored speed
// ladder's summary (median and min-max per step, verdicts, why-lines, the recommendation) and the
// memory ladder's table.

#include "engine/ladder/LadderPlan.h"
#include "storage/report/LadderSummary.h"

#include <cstdio>
#include <string>
#include <vector>

namespace hearth::cli {

// Every rung with [x] (chosen), [ ] (applies, not chosen) or n/a and its reason, then the steps
// and how many runs they make.
void printLadderPlan(std::FILE* out, const std::vector<LadderRung>& rungs, const std::vector<LadderStep>& steps,
                     const LadderPlan& plan);

void printLadderSummary(std::FILE* out, const LadderSummary& summary);
std::string ladderSummaryText(const LadderSummary& summary);

// The memory ladder: each step's peak and what its toggle changed against the step before.
void printMemorySummary(std::FILE* out, const RunStore& store, const LadderSummary& summary);
std::string memoryLadderText(const LadderSummary& summary, const MemoryLadderTable& table);

}  // namespace hearth::cli
