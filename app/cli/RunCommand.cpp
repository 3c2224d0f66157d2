#include "RunCommand.h"

#include "OptionChecks.h"

#include "engine/config/DeviceInfo.h"
#include "engine/config/RunName.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"

#include <cstdio>

namespace hearth::cli {

std::optional<ExperimentConfig> prepareConfig(const RunCommandOptions& options) {
    ExperimentConfig config;
    try {
        if (!options.config_path.empty()) config = loadConfigFile(options.config_path);
        for (const auto& assignment : options.overrides) applyOverride(config, assignment);
        nameAfterDataAndModel(config);
    } catch (const ConfigError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return std::nullopt;
    }
    const auto issues = validate(config, queryDeviceCapabilities());
    printIssues(issues);
    if (!issues.empty()) return std::nullopt;
    return config;
}

std::string resolveDbPath(const RunCommandOptions& options) {
    return options.db_path.empty() ? RunStore::defaultPath() : options.db_path;
}

void registerRunCommand(CLI::App& app, RunCommandOptions& options, int& exit_code) {
    auto* run = app.add_subcommand("run", "Train an experiment (the built-in Fashion-MNIST CNN by default)");
    run->add_option("-c,--config", options.config_path, "Experiment JSON file")->check(CLI::ExistingFile);
    run->add_option("-s,--set", options.overrides, "Override a config key, e.g. trainer.precision=bf16-mixed")
        ->allow_extra_args(false);
    run->add_flag("-q,--quiet", options.quiet, "No live progress; print only the final report");
    run->add_flag("--print-config", options.print_config,
                  "Print the experiment (defaults, file and --set applied, validated) as JSON and exit");
    run->add_flag("--events", options.events,
                  "Write the run's id and every event as JSON lines to standard output (implies --quiet; "
                  "how the workbench and hearth-cli sweep follow a run)");
    run->add_option("--sweep", options.sweep_id,
                    "Record the run in this stored sweep (the id `hearth-cli sweep` printed: \"Sweep #N stored\"); "
                    "how a sweep records its steps")
        ->check(atLeast(1));
    run->callback([&options, &exit_code] { exit_code = runCommand(options); });
}

int runCommand(const RunCommandOptions& options) {
    const auto config = prepareConfig(options);
    if (!config) return kExitBadConfig;
    if (options.print_config) {
        std::printf("%s\n", configToJson(*config).c_str());
        return kExitOk;
    }
    if (!inputsUsable(*config)) return kExitBadData;
    const std::string db_path = resolveDbPath(options);
    const JobStart job = startJob(*config, "run", db_path);
    if (job.exit_code) return *job.exit_code;
    if (!job.plan.records()) return trainWorkerRank(*config, job.plan.rank());
    const auto writer = openWriter(db_path);
    if (!writer) return kExitBadData;
    if (options.sweep_id && !RunStore(db_path).sweep(*options.sweep_id)) {
        // Refused before the run starts: the store would refuse its row only once it is written.
        std::fprintf(stderr, "error: --sweep: no sweep #%lld in '%s' (`hearth-cli sweep --ladder` stores one and prints "
                             "its id)\n", static_cast<long long>(*options.sweep_id), db_path.c_str());
        return kExitBadConfig;
    }

    const bool quiet = options.quiet || options.events;
    const StoredRun run = trainAndStore(*config, writer, options.sweep_id, quiet, options.events);
    if (options.quiet && !options.events && run.test) std::printf("%s", run.test->report.toText().c_str());
    if (run.run_id > 0) {
        std::fprintf(stderr, "Run #%lld stored in %s (hearth-cli show %lld)\n", static_cast<long long>(run.run_id),
                     db_path.c_str(), static_cast<long long>(run.run_id));
        printResumeHint(*writer, run);
    }
    return exitCodeFor(run.outcome);
}

}  // namespace hearth::cli
