#include "ui/tune/FinderRunner.h"

#include <QThread>

#include <atomic>
#include <mutex>

namespace hearth::ui {

// Written by the finder's thread, read by the GUI thread's poll; everything under `mutex`
// except the stop flag the finder reads between steps.
struct FinderRunner::Shared {
    std::mutex mutex;
    double fraction = 0.0;
    std::string what;
    bool progressed = false;
    std::vector<hearth::BatchSizeTrial> trials;
    std::optional<hearth::BatchSizeResult> batch;
    std::optional<hearth::LrFinderResult> lr;
    std::string error;
    bool done = false;
    std::atomic<bool> stop{false};
};

FinderRunner::FinderRunner(QObject* parent) : QObject(parent)
{
    m_poll.setInterval(40);
    connect(&m_poll, &QTimer::timeout, this, &FinderRunner::poll);
}

FinderRunner::~FinderRunner()
{
    if (m_thread) {
        m_shared->stop.store(true);
        m_thread->wait();
        delete m_thread;
    }
}

// The finder's progress callback: what it reports goes to `shared` for the GUI thread's timer.
std::function<void(double, const std::string&)> FinderRunner::progressInto(Shared& shared)
{
    return [&shared](double fraction, const std::string& what) {
        std::lock_guard<std::mutex> lock(shared.mutex);
        shared.fraction = fraction;
        shared.what = what;
        shared.progressed = true;
    };
}

bool FinderRunner::startBatchSize(const hearth::ExperimentConfig& config, hearth::BatchSizeFinderOptions options)
{
    return startThread([config, options](Shared& shared) mutable {
        options.on_progress = progressInto(shared);
        options.on_trial = [&shared](const hearth::BatchSizeTrial& trial) {
            std::lock_guard<std::mutex> lock(shared.mutex);
            shared.trials.push_back(trial);
        };
        auto result = hearth::findBatchSize(config, options, shared.stop);
        std::lock_guard<std::mutex> lock(shared.mutex);
        shared.batch = std::move(result);
    });
}

bool FinderRunner::startLearningRate(const hearth::ExperimentConfig& config, hearth::LrFinderOptions options)
{
    return startThread([config, options](Shared& shared) mutable {
        options.on_progress = progressInto(shared);
        auto result = hearth::findLearningRate(config, options, shared.stop);
        std::lock_guard<std::mutex> lock(shared.mutex);
        shared.lr = std::move(result);
    });
}

bool FinderRunner::startThread(std::function<void(Shared&)> body)
{
    if (m_thread)
        return false;
    m_batch.reset();
    m_lr.reset();
    m_trials.clear();
    m_error.clear();
    m_shared = std::make_shared<Shared>();
    // The thread entry point lets no exception out: a failure becomes the error message.
    m_thread = QThread::create([shared = m_shared, body = std::move(body)] {
        try {
            body(*shared);
        } catch (const std::exception& e) {
            std::lock_guard<std::mutex> lock(shared->mutex);
            shared->error = e.what();
        } catch (...) {
            std::lock_guard<std::mutex> lock(shared->mutex);
            shared->error = "unexpected error in the finder";
        }
        std::lock_guard<std::mutex> lock(shared->mutex);
        shared->done = true;
    });
    m_thread->start();
    m_poll.start();
    return true;
}

void FinderRunner::requestStop()
{
    if (m_shared)
        m_shared->stop.store(true);
}

void FinderRunner::poll()
{
    if (!m_shared)
        return;
    bool done = false, progressed = false, newTrials = false;
    double fraction = 0.0;
    std::string what;
    {
        std::lock_guard<std::mutex> lock(m_shared->mutex);
        progressed = m_shared->progressed;
        m_shared->progressed = false;
        fraction = m_shared->fraction;
        what = m_shared->what;
        if (m_shared->trials.size() != m_trials.size()) {
            m_trials = m_shared->trials;
            newTrials = true;
        }
        done = m_shared->done;
        if (done) {
            m_batch = m_shared->batch;
            m_lr = m_shared->lr;
            m_error = QString::fromStdString(m_shared->error);
        }
    }
    if (progressed)
        Q_EMIT progress(fraction, QString::fromStdString(what));
    if (newTrials)
        Q_EMIT trialsChanged();
    if (!done)
        return;
    m_poll.stop();
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
    Q_EMIT finished();
}

}  // namespace hearth::ui
