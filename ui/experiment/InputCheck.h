#pragma once
// InputCheck: the form's check of the files and folders an experiment names and of a CSV's columns
// (dataInputProblems), with the GUI thread never stuck behind the file system. The check runs on a thread of its own (one
// for the InputCheck's life) and the caller waits at most `patience` for it: a local disk answers in microseconds, while a hung
// network mount would otherwise freeze the window at every edit. A check that has not returned
// is reported as one issue naming the paths; no second check starts while it hangs, and when it
// does return, `onLateResult` is called (on the check's thread) so the caller can ask again: the
// next call for the same config takes that answer without checking again.

#include "engine/config/ExperimentConfig.h"
#include "engine/run/DataInputs.h"

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

namespace hearth::ui {

class InputCheck {
public:
    using Checker = std::function<std::vector<hearth::ConfigIssue>(const hearth::ExperimentConfig&)>;

    explicit InputCheck(std::chrono::milliseconds patience = std::chrono::milliseconds(250),
                        Checker checker = hearth::dataInputProblems);
    ~InputCheck();
    InputCheck(const InputCheck&) = delete;
    InputCheck& operator=(const InputCheck&) = delete;

    // The config's input problems, or the "did not answer" issue (see above), or the late answer.
    std::vector<hearth::ConfigIssue> problems(const hearth::ExperimentConfig& config);

    // Called once a check that outlived its patience returns, on that check's thread.
    void setOnLateResult(std::function<void()> callback);

private:
    struct Shared;
    std::chrono::milliseconds m_patience;
    std::shared_ptr<Shared> m_shared;   // also held by the check's thread
};

}  // namespace hearth::ui
