#include "ui/experiment/InputCheck.h"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace hearth::ui {

struct InputCheck::Shared {
    std::mutex mutex;
    std::condition_variable done;
    bool running = false;
    bool late = false;   // the caller stopped waiting for the running check
    std::optional<std::vector<hearth::ConfigIssue>> result;
    std::string checked;   // the config the last check was given (configToJson)
    std::function<void()> on_late_result;
};

namespace {

// The one issue a check past its patience gives, under the data path's key (where the form shows it).
hearth::ConfigIssue notAnswering(const hearth::ExperimentConfig& config, std::chrono::milliseconds patience)
{
    return {"data.path", "the file system did not answer within " + std::to_string(patience.count()) +
                             " ms while checking " + config.data.path +
                             " and the other paths (a network mount that is not responding?); the form "
                             "checks again once it answers"};
}

}  // namespace

InputCheck::InputCheck(std::chrono::milliseconds patience, Checker checker)
    : m_patience(patience), m_checker(std::move(checker)), m_shared(std::make_shared<Shared>())
{
}

void InputCheck::setOnLateResult(std::function<void()> callback)
{
    const std::lock_guard lock(m_shared->mutex);
    m_shared->on_late_result = std::move(callback);
}

bool InputCheck::hung() const
{
    const std::lock_guard lock(m_shared->mutex);
    return m_shared->running && m_shared->late;
}

std::vector<hearth::ConfigIssue> InputCheck::problems(const hearth::ExperimentConfig& config)
{
    const std::string json = hearth::configToJson(config, -1);
    std::unique_lock lock(m_shared->mutex);
    if (m_shared->running)   // an earlier check still hangs: do not pile up another behind it
        return {notAnswering(config, m_patience)};
    // A late answer for this very config is the answer: the call its callback prompts does not
    // start another check (on a mount that answers in a second, that would loop stall after stall).
    if (m_shared->result && m_shared->checked == json)
        return *std::exchange(m_shared->result, std::nullopt);
    m_shared->running = true;
    m_shared->late = false;
    m_shared->result.reset();
    m_shared->checked = json;
    // Detached: a check stuck in the kernel cannot be joined, and it only touches its own copies.
    std::thread([shared = m_shared, checker = m_checker, config] {
        std::vector<hearth::ConfigIssue> issues;
        try {
            issues = checker(config);
        } catch (const std::exception& e) {
            issues.push_back({"data.path", std::string("could not check the paths: ") + e.what()});
        }
        std::function<void()> notify;
        {
            const std::lock_guard inner(shared->mutex);
            shared->result = std::move(issues);
            shared->running = false;
            if (shared->late)
                notify = shared->on_late_result;
        }
        shared->done.notify_all();
        if (notify)
            notify();
    }).detach();
    if (!m_shared->done.wait_for(lock, m_patience, [this] { return m_shared->result.has_value(); })) {
        m_shared->late = true;
        return {notAnswering(config, m_patience)};
    }
    return *std::exchange(m_shared->result, std::nullopt);
}

}  // namespace hearth::ui
