#include "SweepCommand.h"

#include "LadderTable.h"
#include "OptionChecks.h"
#include "ProgressPrinter.h"
#include "engine/monitor/Elapsed.h"

#include "engine/config/DeviceInfo.h"
#include "engine/events/EventJson.h"
#include "engine/config/ByteSize.h"
#include "engine/ladder/LadderPlan.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace hearth::cli {
namespace {

std::vector<LadderMeasure> measuresOf(const std::vector<StoredRun>& runs) {
    std::vector<LadderMeasure> measures;
    measures.reserve(runs.size());
    for (const auto& run : runs)
        measures.push_back(ladderMeasureOf(run.finished ? run.finished->train_time_s : 0.0, run.epochs));
    return measures;
}

// Every step runs as a child `hearth-cli run --sweep ID --events` (its own launch plan: one
// process, or the local launcher of one per device): each step starts with LibTorch's process-wide
// state fresh (threads, allocators, determinism, the CUDA context), and its run id comes from
// the child's first line, never from a look at the store.
StoredRun trainStep(const ExperimentConfig& config, const std::string& db_path, int64_t sweep_id, bool quiet,
                    bool events) {
    const ChildConfigFile file(config);
    if (!file.ok()) {
        StoredRun failed;
        failed.outcome = RunOutcome{RunStatus::Failed, FailureKind::Data, "cannot write the step's config to /tmp"};
        std::fprintf(stderr, "error: %s\n", failed.outcome.message.c_str());
        return failed;
    }
    const std::vector<std::string> args{"--db", db_path, "run", "--config", file.path(), "--sweep",
                                        std::to_string(sweep_id), "--events"};
    return trainInChild(args, quiet, [events](const std::string& line) {
        if (!events) return;
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
    });
}

// Predict, then measure: the step's footprint from `hearth-cli tune --footprint --json` in a child
// process (a probe at a quarter and half the step's batch), before its first run.
struct StepProbe {
    std::optional<FootprintPrediction> prediction;
    std::string failure;       // why there is no prediction (the probe's last error line)
};
StepProbe probeStep(const ExperimentConfig& config, const std::string& db_path, const std::string& device_memory) {
    StepProbe probe;
    const ChildConfigFile file(config);
    char log_path[] = "/tmp/hearth-probe-XXXXXX.log";
    const int log = mkstemps(log_path, 4);
    if (!file.ok() || log < 0) {
        if (log >= 0) close(log);
        probe.failure = "cannot write the probe's files to /tmp";
        return probe;
    }
    std::vector<std::string> args{"--db", db_path, "tune", "--footprint", "--json", "--config", file.path()};
    if (!device_memory.empty()) args.insert(args.end(), {"--device-memory", device_memory});
    std::string json;
    int code = 0;
    try {
        code = runChild(args, [&json](const std::string& line) {
            if (!line.empty() && line.front() == '{') json = line;
        }, log);
    } catch (const std::exception& e) {
        probe.failure = e.what();
    }
    close(log);
    if (code == kExitOk && !json.empty()) {
        try {
            probe.prediction = footprintFromJson(json);
        } catch (const std::invalid_argument& e) {
            probe.failure = e.what();
        }
    } else if (probe.failure.empty()) {
        std::ifstream text(log_path);
        for (std::string line; std::getline(text, line);)
            if (line.rfind("error: ", 0) == 0) probe.failure = line.substr(7);
        if (probe.failure.empty()) probe.failure = "the probe exited with " + std::to_string(code);
    }
    std::remove(log_path);
    return probe;
}

// Before step i's first run: its footprint predicted and settled (settleLadderPrediction), what
// happened said on stderr.
LadderProbeOutcome predictStep(std::vector<LadderStep>& steps, size_t i, LadderKind kind, const std::string& db_path,
                               std::optional<int64_t> device_memory) {
    const StepProbe probe =
        probeStep(steps[i].config, db_path, device_memory ? std::to_string(*device_memory) : std::string());
    if (const auto& p = probe.prediction)
        std::fprintf(stderr, "Predicted (probe at batch %lld and %lld, %.1f s): peak %s (activations %s), step %.1f ms; %s\n",
                     static_cast<long long>(p->probes.front().batch_size), static_cast<long long>(p->probes.back().batch_size),
                     p->probe_s, formatBytes(p->memory.peak_bytes).c_str(), formatBytes(p->memory.activations_bytes).c_str(),
                     p->step_ms, p->fits ? ("fits " + p->capacity).c_str() : "does not fit");
    const LadderProbeOutcome outcome = settleLadderPrediction(steps, i, kind, probe.prediction, probe.failure);
    if (outcome == LadderProbeOutcome::Run) {
        if (!probe.prediction)
            std::fprintf(stderr, "warning: no prediction for '%s': %s\n", steps[i].label.c_str(), probe.failure.c_str());
        return outcome;
    }
    std::fprintf(stderr, "Not run: %s.\n", steps[i].not_run.c_str());
    if (outcome == LadderProbeOutcome::Refused)
        std::fprintf(stderr, "error: the baseline is predicted not to fit, so the ladder has nothing to measure against: "
                             "a smaller trainer.batch_size, or the memory ladder (--ladder memory)\n");
    return outcome;
}

// A run's expected time from the store: the newest completed run of this experiment's baseline
// (an earlier ladder's) or of the experiment itself. nullopt when there is none.
struct RunEstimate {
    double seconds = 0.0;
    int64_t run_id = 0;
};
std::optional<RunEstimate> estimateRun(const std::string& db_path, const ExperimentConfig& base) {
    try {
        if (const auto latest = RunStore(db_path).latestCompletedRun({base.name + " · baseline", base.name}))
            return RunEstimate{latest->second, latest->first};
    } catch (const StoreError&) {
    }
    return std::nullopt;
}

void printEstimate(std::FILE* out, const std::string& db_path, const ExperimentConfig& base, size_t runs) {
    if (const auto e = estimateRun(db_path, base)) {
        std::fprintf(out, "%zu runs; about %s each (run #%lld of this experiment took %s): about %s in all, plus "
                          "each run's start.\n",
                     runs, formatDuration(e->seconds).c_str(), static_cast<long long>(e->run_id),
                     formatDuration(e->seconds).c_str(), formatDuration(e->seconds * static_cast<double>(runs)).c_str());
    } else {
        std::fprintf(out, "%zu runs; no estimate yet: no earlier run of '%s' in the store (the first run gives one).\n",
                     runs, base.name.c_str());
    }
}

// Writes the recommended step's config (the baseline's when nothing was measurably faster).
bool applyBest(const std::string& path, const LadderSummary& summary, const ExperimentConfig& base) {
    const size_t best = summary.recommended.value_or(0);
    if (best >= summary.steps.size() || summary.steps[best].config_json.empty()) {
        std::fprintf(stderr, "error: --apply-best: the ladder has no run to take a config from\n");
        return false;
    }
    ExperimentConfig config = configFromJson(summary.steps[best].config_json);
    config.name = base.name + " · recommended";
    std::ofstream file(path);
    file << configToJson(config) << "\n";
    if (!file) {
        std::fprintf(stderr, "error: --apply-best: cannot write '%s'\n", path.c_str());
        return false;
    }
    std::fprintf(stderr, "Wrote the %s config ('%s') to %s: hearth-cli run --config %s\n",
                 summary.recommended ? "recommended" : "baseline's", summary.steps[best].label.c_str(), path.c_str(),
                 path.c_str());
    return true;
}

int showSweep(const std::string& db_path, int64_t sweep_id) {
    try {
        const RunStore store(db_path);
        const LadderSummary summary = summarizeLadder(store, sweep_id);
        std::printf("Sweep #%lld: %s (%s, %s, %lld repeat%s)\n", static_cast<long long>(sweep_id), summary.name.c_str(),
                    summary.kind.c_str(), summary.order.c_str(), static_cast<long long>(summary.repeats),
                    summary.repeats == 1 ? "" : "s");
        if (summary.kind == "memory-ladder")
            printMemorySummary(stdout, store, summary);
        else
            printLadderSummary(stdout, summary);
    } catch (const StoreError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return kExitBadData;
    }
    return kExitOk;
}

}  // namespace

void registerSweepCommand(CLI::App& app, SweepCommandOptions& options, const std::string& db_path, int& exit_code) {
    auto* sweep = app.add_subcommand("sweep", "Plan and run a speed or memory study of one experiment (--ladder) as "
                                              "a group of runs, or print a stored one (--show)");
    // `--ladder`, `--ladder memory` and `--ladder=memory` all work (a flag with a default value
    // would take only the last).
    sweep->add_option("--ladder", options.ladder,
                    "speed (the default): 32-true baseline -> mixed precision -> + loader workers -> + accumulation "
                    "(with --target-batch), with the GPU's rungs between (--plan lists them all); a rung that trains "
                    "slower than the step before it in the first round is left out of the steps after it. memory: "
                    "gradients zeroed -> set to none -> + in-place ReLU -> (several processes: + zero1 -> + zero2 -> "
                    "+ zero3) -> + activation checkpointing")
        ->expected(0, 1)
        ->default_str("speed")
        ->check(CLI::IsMember({"speed", "memory"}));
    sweep->add_option("-c,--config", options.run.config_path, "Experiment JSON file")->check(CLI::ExistingFile);
    sweep->add_option("-s,--set", options.run.overrides, "Override a config key of the base experiment")
        ->allow_extra_args(false);
    sweep->add_option("--rungs", options.rungs,
                      "The speed ladder's rungs, by id (comma-separated; --plan lists them): the baseline and these, "
                      "in the ladder's order")
        ->delimiter(',');
    sweep->add_option("--measure", options.measure,
                      "epochs (default): each step trains the experiment's epochs, its speed the last epoch's "
                      "samples/s; accuracy: each rung trains until it reaches the baseline's best validation "
                      "accuracy (at most --cap-epochs), its speed the time that took")
        ->check(CLI::IsMember({"epochs", "accuracy"}));
    sweep->add_option("--cap-epochs", options.cap_epochs,
                      "With --measure accuracy: the most epochs a rung trains (default: twice trainer.max_epochs)")
        ->check(between(1, 100000));
    sweep->add_flag("--alone", options.alone, "Run each rung alone against the baseline instead of stacking them");
    sweep->add_option("--repeats", options.repeats,
                      "Runs per step, the steps alternating round by round (default 3 for the speed ladder, 1 for "
                      "the memory ladder)")
        ->check(between(1, 100));
    sweep->add_flag("!--no-predict", options.predict,
                    "Run no footprint probe before each step (by default each step's peak memory and step time are "
                    "predicted first, and a step predicted not to fit is not run)");
    sweep->add_option("--device-memory", options.device_memory,
                      "The memory each step must fit into, e.g. 16GiB (default: the device's; CPU: the RAM): plans a "
                      "ladder for a smaller device");
    sweep->add_flag("--plan", options.plan_only, "Print the rungs that apply here, the steps and an estimate; run nothing");
    sweep->add_option("--apply-best", options.apply_best,
                      "Write the recommended step's config (the fastest at the same accuracy) to this JSON file");
    sweep->add_option("--show", options.show, "Print stored sweep SWEEP_ID's ladder (the id `sweep` printed)")
        ->check(atLeast(1));
    sweep->add_option("--target-batch", options.target_batch,
                      "Effective batch size for the accumulation step (a multiple of trainer.batch_size)")
        ->check(atLeast(1));
    sweep->add_option("--workers", options.workers, "Loader workers for the workers step")->check(between(1, 64));
    sweep->add_flag("-q,--quiet", options.run.quiet, "No live progress");
    sweep->add_flag("--events", options.run.events,
                    "Write the sweep's id, then each step's run id and events, as JSON lines to standard output "
                    "(implies --quiet)");
    sweep->callback([sweep, &options, &db_path, &exit_code] {
        options.run.db_path = db_path;
        if (options.show) {
            exit_code = showSweep(resolveDbPath(options.run), *options.show);
            return;
        }
        if (sweep->count("--ladder") == 0) {
            std::fprintf(stderr, "error: sweep needs --ladder [speed|memory] (or --show SWEEP_ID)\n");
            exit_code = kExitBadConfig;
            return;
        }
        exit_code = sweepCommand(options);
    });
}

int sweepCommand(const SweepCommandOptions& options) {
    const auto base = prepareConfig(options.run);
    if (!base) return kExitBadConfig;
    const bool memory = options.ladder == "memory";
    const DeviceCapabilities caps = queryDeviceCapabilities();
    LadderPlan plan;
    std::vector<LadderStep> steps;
    try {
        if (memory) {
            if (options.target_batch) throw ConfigError("target-batch", "belongs to the speed ladder; the memory ladder "
                                                                        "keeps the experiment's batch");
            if (!options.rungs.empty() || options.alone)
                throw ConfigError(options.alone ? "alone" : "rungs", "plans the speed ladder; the memory ladder turns "
                                                                     "every memory toggle on, one at a time");
            if (options.measure != "epochs")
                throw ConfigError("measure", "applies to the speed ladder; the memory ladder measures peaks");
            if (options.repeats.value_or(1) != 1)
                throw ConfigError("repeats", "applies to the speed ladder: a memory ladder's peaks do not vary from "
                                             "run to run");
            LadderOptions memory_options;
            memory_options.kind = LadderKind::Memory;
            steps = buildTechniqueLadder(*base, caps, memory_options);
        } else {
            if (!options.rungs.empty()) plan.rungs = options.rungs;
            plan.order = options.alone ? LadderOrder::Alone : LadderOrder::Cumulative;
            plan.repeats = options.repeats.value_or(3);
            plan.target_batch = options.target_batch;
            plan.loader_workers = options.workers;
            plan.goal = ladderGoalFromName(options.measure).value_or(LadderGoal::Epochs);
            plan.cap_epochs = options.cap_epochs;
            steps = buildPlannedLadder(*base, caps, plan);
        }
    } catch (const ConfigError& e) {
        // The plan's keys ("target_batch") are named as the options that set them ("--target-batch").
        std::string option = e.key();
        std::replace(option.begin(), option.end(), '_', '-');
        std::fprintf(stderr, "error: --%s: %s\n", option.c_str(), e.message().c_str());
        return kExitBadConfig;
    }
    if (!options.device_memory.empty()) {
        plan.device_memory_bytes = deviceMemoryBytes(options.device_memory);
        if (!plan.device_memory_bytes) return kExitBadConfig;
        if (!options.predict) {
            std::fprintf(stderr, "error: --device-memory: needs the footprint probe (drop --no-predict)\n");
            return kExitBadConfig;
        }
    }
    const std::string db_path = resolveDbPath(options.run);
    const size_t total_runs = steps.size() * static_cast<size_t>(plan.repeats);
    if (options.plan_only) {
        if (!memory) printLadderPlan(stdout, ladderRungs(*base, caps, plan), steps, plan);
        else
            for (size_t i = 0; i < steps.size(); ++i)
                std::printf("  %2zu. %s: %s\n", i + 1, steps[i].label.c_str(), steps[i].change.c_str());
        printEstimate(stdout, db_path, *base, total_runs);
        return kExitOk;
    }
    if (!inputsUsable(*base)) return kExitBadData;
    const bool events = options.run.events;
    const bool quiet = options.run.quiet || events;
    int64_t sweep_id = 0;
    {
        const auto writer = openWriter(db_path);
        if (!writer) return kExitBadData;
        try {
            sweep_id = writer->createSweep(base->name + (memory ? " memory ladder" : " ladder"),
                                           memory ? "memory-ladder" : "ladder", ladderPlanJson(plan, steps));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "error: the run store could not create the sweep: %s\n", e.what());
            return kExitBadData;
        }
    }   // committed and closed: the steps' processes write the store themselves
    if (events) {
        std::printf("%s\n", eventjson::sweepLine(sweep_id).c_str());
        std::fflush(stdout);
    }
    if (!memory) printEstimate(stderr, db_path, *base, total_runs);
    // The tables go to stdout, unless stdout carries the events.
    std::FILE* table_out = events ? stderr : stdout;
    const auto printStored = [&] {
        try {
            const RunStore store(db_path);
            const LadderSummary summary = summarizeLadder(store, sweep_id);
            if (memory)
                printMemorySummary(table_out, store, summary);
            else
                printLadderSummary(table_out, summary);
            return std::optional<LadderSummary>(summary);
        } catch (const StoreError& e) {
            std::fprintf(stderr, "error: %s\n", e.what());
            return std::optional<LadderSummary>();
        }
    };
    // Round by round: every step once per round, so a drift of the machine (another job, heat)
    // falls on every step alike. The first round leaves a slower rung out of the steps after it.
    std::vector<StoredRun> first_round;
    std::vector<int64_t> first_round_ids;
    size_t done = 0;
    double seconds_so_far = 0.0;
    for (int64_t round = 0; round < plan.repeats; ++round) {
        for (size_t i = 0; i < steps.size(); ++i) {
            std::fprintf(stderr, "\n=== Ladder step %zu/%zu%s: %s (%s)\n", i + 1, steps.size(),
                         plan.repeats > 1 ? (", round " + std::to_string(round + 1) + "/" + std::to_string(plan.repeats)).c_str()
                                          : "",
                         steps[i].label.c_str(), steps[i].change.c_str());
            if (!steps[i].not_run.empty()) continue;   // predicted not to fit in round 1
            if (round == 0 && options.predict) {
                const LadderProbeOutcome probed = predictStep(steps, i, memory ? LadderKind::Memory : LadderKind::Speed,
                                                              db_path, plan.device_memory_bytes);
                if (const auto writer = openWriter(db_path)) writer->setSweepPlan(sweep_id, ladderPlanJson(plan, steps));
                if (probed == LadderProbeOutcome::Refused) {
                    printStored();
                    return kExitTrainingFailed;
                }
                if (probed == LadderProbeOutcome::NotRun) {
                    first_round.emplace_back();   // keeps first_round's steps aligned with `steps`
                    first_round_ids.push_back(0);
                    continue;
                }
            }
            const auto started = std::chrono::steady_clock::now();
            // Each round its own seed (initialisation, shuffling, dropout): the runs of a step then
            // differ as runs of the experiment do, and their accuracies give the run-to-run spread.
            ExperimentConfig config = steps[i].config;
            config.seed += static_cast<uint64_t>(round);
            StoredRun step = trainStep(config, db_path, sweep_id, quiet, events);
            seconds_so_far += secondsSince(started);
            ++done;
            if (round == 0) first_round_ids.push_back(step.run_id);
            if (step.run_id != 0) {
                if (const auto writer = openWriter(db_path)) {
                    try {
                        writer->addSweepRun(sweep_id, step.run_id, static_cast<int64_t>(i), round);
                    } catch (const std::exception& e) {
                        std::fprintf(stderr, "warning: run #%lld is not recorded as step %zu of the sweep: %s\n",
                                     static_cast<long long>(step.run_id), i + 1, e.what());
                    }
                }
            }
            if (!memory && round == 0 && i == 0 && plan.goal == LadderGoal::Accuracy &&
                step.outcome.status == RunStatus::Completed && step.finished) {
                // The target every later step trains to: the baseline's best validation accuracy.
                aimLadderAtAccuracy(steps, plan, step.finished->best_val_accuracy);
                std::fprintf(stderr, "Target: validation accuracy %.4f (the baseline's best); each rung trains until "
                                     "it reaches it, for at most %lld epochs.\n",
                             *plan.accuracy_target, static_cast<long long>(steps.size() > 1
                                                                               ? steps[1].config.trainer.max_epochs
                                                                               : 0));
                if (const auto writer = openWriter(db_path)) writer->setSweepPlan(sweep_id, ladderPlanJson(plan, steps));
            }
            if (!memory && round == 0 && step.outcome.status == RunStatus::Completed) {
                first_round.push_back(step);
                const std::vector<LadderMeasure> measures = measuresOf(first_round);
                if (!settleLadderStep(steps, i, measures)) {
                    const size_t ref = ladderReferenceStep(steps, i);
                    std::fprintf(stderr, "'%s' trained slower than '%s' (%s): the next steps leave it out.\n",
                                 steps[i].label.c_str(), steps[ref].label.c_str(),
                                 ladderSpeedupText(measures[i], measures[ref]).c_str());
                    if (const auto writer = openWriter(db_path)) writer->setSweepPlan(sweep_id, ladderPlanJson(plan, steps));
                }
            }
            if (step.outcome.status != RunStatus::Completed) {
                if (step.run_id == 0)
                    std::fprintf(stderr, "error: step '%s' failed: %s\n", steps[i].label.c_str(),
                                 step.outcome.message.c_str());
                else
                    std::fprintf(stderr, "error: step '%s' (run #%lld) %s%s%s\n", steps[i].label.c_str(),
                                 static_cast<long long>(step.run_id),
                                 step.outcome.status == RunStatus::Stopped ? "was stopped" : "failed",
                                 step.outcome.message.empty() ? "" : ": ", step.outcome.message.c_str());
                std::fprintf(stderr, "Ladder ended early at step '%s'.\n", steps[i].label.c_str());
                printStored();
                return exitCodeFor(step.outcome);
            }
            if (total_runs > done)
                std::fprintf(stderr, "%zu of %zu runs done; about %s left.\n", done, total_runs,
                             formatDuration(seconds_so_far / static_cast<double>(done) *
                                            static_cast<double>(total_runs - done)).c_str());
        }
    }
    const auto summary = printStored();
    std::fprintf(table_out, "\nSweep #%lld stored in %s (hearth-cli sweep --show %lld prints it again; hearth-cli "
                            "export --sweep %lld --format html makes its comparison report); compare the %sruns with: "
                            "hearth-cli compare",
                 static_cast<long long>(sweep_id), db_path.c_str(), static_cast<long long>(sweep_id),
                 static_cast<long long>(sweep_id), plan.repeats > 1 ? "first round's " : "");
    for (const int64_t id : first_round_ids)
        if (id != 0) std::fprintf(table_out, " %lld", static_cast<long long>(id));
    std::fprintf(table_out, "\n");
    if (!options.apply_best.empty()) {
        if (memory) {
            std::fprintf(stderr, "error: --apply-best: the memory ladder makes no recommendation\n");
            return kExitBadConfig;
        }
        if (!summary || !applyBest(options.apply_best, *summary, *base)) return kExitBadData;
    }
    return kExitOk;
}

}  // namespace hearth::cli
