#pragma once
// `hearth-cli resume RUN`: continues a stopped, interrupted or failed run from its newest training
// state (a safety checkpoint; --from picks another): the same run, its curves continuing, bit for
// bit as if never stopped on CPU with trainer.deterministic.

#include "RunCommand.h"

#include <CLI/CLI.hpp>

#include <string>

namespace hearth::cli {

struct ResumeCommandOptions {
    std::string run;        // an id or a unique name prefix
    std::string from;       // a training state file; empty = the run's newest
    bool quiet = false;
    bool events = false;
};

void registerResumeCommand(CLI::App& app, const RunCommandOptions& run_options, ResumeCommandOptions& options,
                           int& exit_code);
int resumeCommand(const RunCommandOptions& run_options, const ResumeCommandOptions& options);

}  // namespace hearth::cli
