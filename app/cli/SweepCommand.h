#pragma once
// `hearth-cli sweep --ladder [speed|memory]`: plans the technique ladder (which rungs, stacked or
// each alone, k repeats: --plan prints the plan and an estimate), runs it as one sweep, its steps
// alternating round by round, and prints each step's median (min-max), verdict, why-lines and the
// recommendation (--apply-best writes it as a config). --show ID prints a stored ladder again.

#include "RunCommand.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace hearth::cli {

struct SweepCommandOptions {
    RunCommandOptions run;                 // --config / --set / quiet (+ the global --db)
    std::string ladder = "speed";          // speed | memory
    std::optional<int64_t> target_batch;
    int64_t workers = 2;
    std::vector<std::string> rungs;        // --rungs: chosen rung ids (empty: the default ones)
    bool alone = false;                    // --alone: each rung alone against the baseline
    std::optional<int64_t> repeats;        // --repeats (default: 3 for the speed ladder, 1 for memory)
    bool plan_only = false;                // --plan
    std::string apply_best;                // --apply-best FILE
    std::optional<int64_t> show;           // --show SWEEP_ID
    std::string measure = "epochs";        // --measure epochs | accuracy
    int64_t cap_epochs = 0;                // --cap-epochs (accuracy; 0: twice max_epochs)
    bool predict = true;                   // false: --no-predict (no footprint probe before each step)
    std::string device_memory;             // --device-memory SIZE: what each step must fit into
};

// `db_path` is the global --db value, read when the command runs (after parsing).
void registerSweepCommand(CLI::App& app, SweepCommandOptions& options, const std::string& db_path, int& exit_code);
int sweepCommand(const SweepCommandOptions& options);

}  // namespace hearth::cli
