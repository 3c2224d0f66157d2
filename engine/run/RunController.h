#pragma once
// RunController: starts one training run on its own thread, stops it between steps, and
// reports how it ended. The public entry point to the engine; no LibTorch types.

#include "engine/config/ExperimentConfig.h"
#include "engine/events/Events.h"
#include "engine/train/LoopState.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace hearth {

struct RunOptions {
    // Where the best checkpoint and training states go; empty = none. Data-parallel, rank 0 writes
    // there; the other ranks get it only when resuming, to read best.pt.
    std::string artifacts_dir;
    // Resume: the training state (a safety checkpoint) the fit continues from; empty = a new fit.
    std::string resume_from;
    // Called once the state was read and checked, before the run's first event (RunStarted): the
    // caller reopens the stored run there. Throwing fails the run with nothing trained.
    std::function<void(const ResumePoint&)> on_resume;
};

enum class RunStatus { Completed, Stopped, Failed };

struct RunOutcome {
    RunStatus status = RunStatus::Failed;
    FailureKind failure = FailureKind::Training;   // when Failed
    std::string message;
};

// Runs an experiment on the calling thread. Never throws: every error becomes a RunFailed
// event and a Failed outcome. `stop` is read between steps.
RunOutcome runExperiment(const ExperimentConfig& config, const RunOptions& options,
                         EventSink& sink, const std::atomic<bool>& stop);

// How many training jobs (runExperiment, findBatchSize, findLearningRate) this process has begun:
// the workbench's stays at 0, since every job runs in a child hearth-cli (its tests check).
int64_t trainingJobsInThisProcess();
void countTrainingJob();   // called by each of those entry points

// Forwards every event to several sinks, in order.
class EventFanout final : public EventSink {
public:
    explicit EventFanout(std::vector<std::shared_ptr<EventSink>> sinks);
    void onEvent(const Event& event) override;
private:
    std::vector<std::shared_ptr<EventSink>> sinks_;
};

class RunController final {
public:
    RunController() = default;
    ~RunController();                   // requests stop and joins
    RunController(const RunController&) = delete;
    RunController& operator=(const RunController&) = delete;

    // Starts a run on a new thread; the sinks receive its events on that thread.
    // Returns false (and does nothing) while a run is still active. Throws std::system_error when
    // no thread can be created; the controller then accepts the next start().
    bool start(ExperimentConfig config, RunOptions options, std::vector<std::shared_ptr<EventSink>> sinks);
    void requestStop();                 // finishes the current step, then stops
    bool isRunning() const;
    RunOutcome wait();                  // joins; returns the outcome of the last run

private:
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> running_{false};
    RunOutcome outcome_;
};

}  // namespace hearth
