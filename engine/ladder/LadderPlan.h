#pragma once
// LadderPlan: what a speed ladder will run, decided before it runs (the planner of `hearth-cli
// sweep --ladder` and the workbench). ladderRungs lists every rung Hearth knows, in the ladder's
// order, for this experiment on this machine: each one applies (checked by default when it is a
// speed technique, offered unchecked when it trades speed for memory) or does not, with the reason.
// A plan picks rungs, stacks them (cumulative: each step adds one to the step before) or tries each
// alone against the baseline, and repeats every step k times. The sweep stores the plan as JSON.

#include "engine/config/ExperimentConfig.h"
#include "engine/ladder/TechniqueLadder.h"

#include <optional>
#include <string>
#include <vector>

namespace hearth {

struct LadderRung {
    std::string id;            // "tf32", "mixed", "optimizer", ... (the CLI's --rungs names)
    std::string label;         // "+ bf16-mixed": as the step is labelled
    std::string change;        // what it changes, in words (or what it would change)
    bool applies = false;
    std::string reason;        // why it does not apply; empty when it does
    bool default_on = false;   // checked by default: applies, and is a speed technique
};

enum class LadderOrder { Cumulative, Alone };
// What a step's speed is: its training over the experiment's epochs (the steady epoch's
// samples/s), or the time it takes to reach the baseline's best validation accuracy.
enum class LadderGoal { Epochs, Accuracy };

struct LadderPlan {
    // Chosen rung ids; nullopt: every rung that applies and is on by default. Order does not
    // matter: the steps follow the ladder's order.
    std::optional<std::vector<std::string>> rungs;
    LadderOrder order = LadderOrder::Cumulative;
    int64_t repeats = 1;                    // runs per step, the steps alternating round by round
    std::optional<int64_t> target_batch;    // the accumulation rung's effective batch
    int64_t loader_workers = 2;             // the workers rung's loader workers
    LadderGoal goal = LadderGoal::Epochs;
    int64_t cap_epochs = 0;                 // Accuracy: the most epochs a rung trains (0: twice max_epochs)
    std::optional<double> accuracy_target;  // Accuracy: the baseline's best val accuracy, once it ran
    // What each step must fit into: the footprint probe's capacity (a step predicted above it is
    // not run); nullopt: the device's memory (CPU: the RAM).
    std::optional<int64_t> device_memory_bytes;
};

// Accuracy goal, once the baseline's first run set `target`: every later step trains until its
// validation accuracy reaches it (trainer.early_stopping.stop_at), for at most the plan's cap.
void aimLadderAtAccuracy(std::vector<LadderStep>& steps, LadderPlan& plan, double target);
// The seconds until a run's validation accuracy first reached `target` (its epochs' times summed
// up to that epoch); nullopt when it never did.
std::optional<double> timeToAccuracy(const std::vector<EpochMetrics>& epochs, double target);

// Every rung, in the ladder's order, with whether it applies to `base` on `caps` under `plan`'s
// target batch and workers.
std::vector<LadderRung> ladderRungs(const ExperimentConfig& base, const DeviceCapabilities& caps,
                                    const LadderPlan& plan = {});

// The steps `plan` runs: the baseline, then each chosen rung (stacked, or alone on the baseline).
// Throws ConfigError naming "rungs" for an unknown id or a rung that does not apply (with its
// reason), and "target_batch" for a target that is not a multiple of the batch.
std::vector<LadderStep> buildPlannedLadder(const ExperimentConfig& base, const DeviceCapabilities& caps,
                                           const LadderPlan& plan);

// "epochs" / "accuracy"; nullopt for anything else.
std::optional<LadderGoal> ladderGoalFromName(const std::string& name);
std::string ladderGoalName(LadderGoal goal);
// "cumulative" / "alone"; nullopt for anything else.
std::optional<LadderOrder> ladderOrderFromName(const std::string& name);
std::string ladderOrderName(LadderOrder order);

// The plan as the sweep stores it, with the steps it made (label, short name, what each changes,
// whether it was left out of the steps after it), and back. ladderPlanFromJson throws std::invalid_argument on a malformed text.
std::string ladderPlanJson(const LadderPlan& plan, const std::vector<LadderStep>& steps);
struct StoredLadderPlan {
    LadderPlan plan;
    std::vector<LadderStep> steps;   // labels, short names and changes (their configs are the runs')
};
StoredLadderPlan ladderPlanFromJson(const std::string& json);

}  // namespace hearth
