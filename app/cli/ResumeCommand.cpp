#include "ResumeCommand.h"

#include "engine/config/DeviceInfo.h"
#include "engine/dist/Rendezvous.h"
#include "engine/train/StateFiles.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace hearth::cli {
namespace {

int fail(int code, const std::string& message) {
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return code;
}

std::string normalPath(const std::string& path) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    return (ec ? std::filesystem::path(path) : absolute).lexically_normal().string();
}

// The newest of the run's state files that the run's stored history reaches: the store recorded
// its save, or holds a step at or after it. The store writes a run's events in the order they
// came, one transaction at a time, so either means every step before the state is stored. A newer
// file, saved just before the process was killed and before the store committed the steps that led
// to it (a GPU's fast steps can run ahead of the writer), would leave those steps out of the
// resumed run's history. `note` says what was passed over.
std::string newestReachedState(const RunStore& store, int64_t run_id, const std::vector<std::string>& files,
                               std::string& note) {
    std::vector<std::string> recorded;
    for (const auto& a : store.artifacts(run_id))
        if (a.kind == "state") recorded.push_back(normalPath(a.path));
    const auto name = [](const std::string& path) { return std::filesystem::path(path).filename().string(); };
    for (const auto& file : files) {
        const bool reached = std::find(recorded.begin(), recorded.end(), normalPath(file)) != recorded.end() ||
                             !store.stepsAfter(run_id, trainingStateStep(file) - 1).empty();
        if (!reached) continue;
        if (file != files.front())
            note = "the newest state, " + name(files.front()) +
                   ", was saved after the last step the run store holds (the process ended before it was "
                   "written): resuming from " + name(file) + ", so that no step is missing from the run's history";
        return file;
    }
    note = "the run store holds no step up to any saved state (the process ended before they were written): "
           "resuming from the newest, " + name(files.front()) + "; the steps before it stay missing from the "
           "run's history";
    return files.front();
}

}  // namespace

void registerResumeCommand(CLI::App& app, const RunCommandOptions& run_options, ResumeCommandOptions& options,
                           int& exit_code) {
    auto* resume = app.add_subcommand(
        "resume", "Continue a stopped, interrupted or failed run from its newest saved training state");
    resume->add_option("run", options.run, "The run: its id or a unique prefix of its name")->required();
    resume->add_option("--from", options.from,
                       "Continue from this training state (a state-<step>.pt of the run) instead of the newest")
        ->check(CLI::ExistingFile);
    resume->add_flag("-q,--quiet", options.quiet, "No live progress; print only the final report");
    resume->add_flag("--events", options.events,
                     "Write the run's id and every event as JSON lines to standard output (implies --quiet)");
    resume->callback([&run_options, &options, &exit_code] { exit_code = resumeCommand(run_options, options); });
}

int resumeCommand(const RunCommandOptions& run_options, const ResumeCommandOptions& options) {
    const std::string db_path = resolveDbPath(run_options);
    std::error_code ec;
    if (!std::filesystem::exists(db_path, ec))
        return fail(kExitBadData, "There is no run database at '" + db_path + "' (choose another with --db).");
    // A rank other than 0 of a data-parallel resume: checking and reopening the run is rank 0's
    // (it may be running again already); this rank needs the config, the state and the folder.
    std::optional<dist::DistEnv> env;
    try {
        env = dist::readDistEnv();
    } catch (const std::invalid_argument&) {
        // startJob's launch plan says what is wrong with the launcher's variables
    }
    const bool other_rank = env && env->rank != 0;
    int64_t run_id = 0;
    RunSummary run;
    std::string artifacts;
    std::vector<std::string> states;   // newest first
    std::string state = options.from, state_note;
    try {
        const RunStore store(db_path);
        try {
            run_id = store.resolveRun(options.run);
        } catch (const StoreError& e) {
            return fail(kExitBadConfig, e.what());
        }
        run = *store.run(run_id);
        artifacts = store.artifactsDir(run_id);
        if (state.empty()) {
            states = trainingStatesIn(artifacts);
            if (!states.empty()) state = newestReachedState(store, run_id, states, state_note);
        }
    } catch (const StoreError& e) {
        return fail(kExitBadData, e.what());
    }
    const std::string which = "run #" + std::to_string(run_id) + " '" + run.name + "'";
    if (run.status == "completed" && !other_rank)
        return fail(kExitBadConfig, which + " completed: there is nothing to resume (start a new run instead).");
    if (run.status == "running" && !other_rank)
        return fail(kExitBadConfig, which + " is still running (pid " + std::to_string(run.pid) + " on " +
                                        run.hostname + "): stop it first.");

    if (state.empty())
        return fail(kExitBadData,
                    which + " has no saved training state in '" + artifacts +
                        "': it ended before its first safety checkpoint (trainer.safety_checkpoint) or was "
                        "stored by an older Hearth. Start it anew.");
    if (!state_note.empty() && !other_rank) std::fprintf(stderr, "note: %s\n", state_note.c_str());

    ExperimentConfig config;
    try {
        config = configFromJson(run.config_json);
    } catch (const ConfigError& e) {
        return fail(kExitBadConfig, which + ": its stored config cannot be read: " + std::string(e.what()));
    }
    const auto issues = validate(config, queryDeviceCapabilities());
    for (const auto& issue : issues)
        std::fprintf(stderr, "error: %s: %s: %s\n", which.c_str(), issue.key.c_str(), issue.message.c_str());
    if (!issues.empty()) return kExitBadConfig;
    if (!inputsUsable(config)) {   // e.g. data moved since the run, or a relative path from another folder
        std::fprintf(stderr, "Run #%lld was left as it was.\n", static_cast<long long>(run_id));
        return kExitBadData;
    }
    if (other_rank) {
        RunOptions rank_options;
        rank_options.artifacts_dir = artifacts;
        rank_options.resume_from = state;
        return trainWorkerRank(config, env->rank, rank_options);
    }
    // Several processes and no launcher around: this one launches them, each told the state chosen
    // here (a newer one may appear once they train).
    const std::vector<std::string> from =
        options.from.empty() ? std::vector<std::string>{"--from", state} : std::vector<std::string>{};
    const JobStart job = startJob(config, "resume", db_path, from);
    if (job.exit_code) return *job.exit_code;   // rank 0 reported

    const auto writer = openWriter(db_path);
    if (!writer) return kExitBadData;
    const bool quiet = options.quiet || options.events;
    if (!options.events)
        std::fprintf(stderr, "Resuming %s (%s) from %s\n", which.c_str(), run.status.c_str(), state.c_str());
    const ResumeTarget target{run_id, state};
    const StoredRun result = trainAndStore(config, writer, std::nullopt, quiet, options.events, &target);
    if (options.quiet && !options.events && result.test) std::printf("%s", result.test->report.toText().c_str());
    if (result.recorded) {
        std::fprintf(stderr, "Run #%lld stored in %s (hearth-cli show %lld)\n", static_cast<long long>(run_id),
                     db_path.c_str(), static_cast<long long>(run_id));
        printResumeHint(*writer, result);
    } else
        std::fprintf(stderr, "Run #%lld was left as it was.\n", static_cast<long long>(run_id));
    return exitCodeFor(result.outcome);
}

}  // namespace hearth::cli
