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
    std::condition_variable wake;   // a job for the check's thread, or quit
    std::condition_variable done;   // the job is checked
    hearth::ExperimentConfig job;
    bool running = false;   // `job` is being checked
    bool late = false;      // the caller stopped waiting for the running check
    bool quit = false;      // the InputCheck is gone: the thread ends once it is free
    std::optional<std::vector<hearth::ConfigIssue>> result;
    std::string checked;    // the config a late answer is for (configToJson)
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
    : m_patience(patience), m_shared(std::make_shared<Shared>())
{
    // One thread for every check, detached: a check stuck in the kernel cannot be joined, and the
    // thread touches only the shared state it holds.
    std::thread([shared = m_shared, checker = std::move(checker)] {
        std::unique_lock lock(shared->mutex);
        for (;;) {
            shared->wake.wait(lock, [&] { return shared->running || shared->quit; });
            if (!shared->running)
                return;   // quit
            const hearth::ExperimentConfig config = shared->job;
            lock.unlock();
            std::vector<hearth::ConfigIssue> issues;
            try {
                issues = checker(config);
            } catch (const std::exception& e) {
                issues.push_back({"data.path", std::string("could not check the paths: ") + e.what()});
            }
            lock.lock();
            shared->result = std::move(issues);
            shared->running = false;
            shared->done.notify_all();
            if (shared->late && shared->on_late_result) {
                const std::function<void()> notify = shared->on_late_result;
                lock.unlock();
                notify();
                lock.lock();
            }
        }
    }).detach();
}

InputCheck::~InputCheck()
{
    {
        const std::lock_guard lock(m_shared->mutex);
        m_shared->quit = true;
    }
    m_shared->wake.notify_one();
}

void InputCheck::setOnLateResult(std::function<void()> callback)
{
    const std::lock_guard lock(m_shared->mutex);
    m_shared->on_late_result = std::move(callback);
}

std::vector<hearth::ConfigIssue> InputCheck::problems(const hearth::ExperimentConfig& config)
{
    std::unique_lock lock(m_shared->mutex);
    if (m_shared->running)   // an earlier check still hangs: do not pile up another behind it
        return {notAnswering(config, m_patience)};
    // A late answer for this very config is the answer: the call its callback prompts does not
    // start another check (on a mount that answers in a second, that would loop stall after stall).
    if (m_shared->result) {
        const bool same = m_shared->checked == hearth::configToJson(config, -1);
        auto late = *std::exchange(m_shared->result, std::nullopt);
        if (same)
            return late;
    }
    m_shared->running = true;
    m_shared->late = false;
    m_shared->job = config;
    lock.unlock();
    m_shared->wake.notify_one();
    lock.lock();
    if (!m_shared->done.wait_for(lock, m_patience, [this] { return !m_shared->running; })) {
        m_shared->late = true;
        m_shared->checked = hearth::configToJson(config, -1);   // what the late answer will be for
        return {notAnswering(config, m_patience)};
    }
    return *std::exchange(m_shared->result, std::nullopt);
}

}  // namespace hearth::ui
