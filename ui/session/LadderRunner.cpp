#include "ui/session/LadderRunner.h"

#include "engine/config/ByteSize.h"
#include "storage/RunEdits.h"
#include "ui/session/CliProcess.h"
#include "ui/session/DeviceProbe.h"
#include "ui/session/TrainingSession.h"
#include "ui/session/WriterJobs.h"

#include <QDir>
#include <QTemporaryFile>
#include <QTimer>

namespace hearth::ui {

LadderRunner::LadderRunner(TrainingSession* session, QObject* parent) : QObject(parent), m_session(session)
{
    connect(m_session, &TrainingSession::runStarted, this, [this](qint64 runId, const QString&) { onStepRunStarted(runId); });
    connect(m_session, &TrainingSession::startFailed, this, [this](const QString& message) {
        if (m_waitingForRun)
            fail(message);
    });
    connect(m_session, &TrainingSession::eventsReady, this,
            [this](const hearth::ui::EventBatch& batch) { onEvents(batch); });
    connect(m_session, &TrainingSession::runEnded, this,
            [this](qint64 runId, hearth::RunStatus status, const QString&) { onRunEnded(runId, static_cast<int>(status)); });
}

LadderRunner::~LadderRunner() = default;

bool LadderRunner::start(const hearth::ExperimentConfig& base, std::optional<int64_t> targetBatch, QString* error)
{
    hearth::LadderOptions options;
    options.target_batch = targetBatch;
    return start(base, options, error);
}

bool LadderRunner::start(const hearth::ExperimentConfig& base, const hearth::LadderOptions& options, QString* error)
{
    if (options.kind == hearth::LadderKind::Speed) {
        hearth::LadderPlan plan;
        plan.target_batch = options.target_batch;
        plan.loader_workers = options.loader_workers;
        return start(base, plan, error);
    }
    return begin(base, hearth::LadderPlan{}, true, error,
                 [&] { return hearth::buildTechniqueLadder(base, DeviceProbe::instance().capabilities(), options); });
}

bool LadderRunner::start(const hearth::ExperimentConfig& base, const hearth::LadderPlan& plan, QString* error)
{
    return begin(base, plan, false, error,
                 [&] { return hearth::buildPlannedLadder(base, DeviceProbe::instance().capabilities(), plan); });
}

bool LadderRunner::canBegin(QString* error) const
{
    if (m_session->isRunning() || !m_done) {
        if (error)
            *error = tr("A run is already in progress.");
        return false;
    }
    // The ladder's steps depend on the devices (mixed precision, DDP on every GPU): not planned
    // on the CPU-only assumption the views hold while the probe has not answered.
    if (!DeviceProbe::instance().isReady()) {
        if (error)
            *error = tr("The devices are still being probed; start the ladder again in a moment.");
        return false;
    }
    return true;
}

bool LadderRunner::begin(const hearth::ExperimentConfig& base, const hearth::LadderPlan& plan, bool memory,
                         QString* error, const std::function<std::vector<hearth::LadderStep>()>& build)
{
    if (!canBegin(error))
        return false;
    try {
        m_steps = build();
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
    m_plan = plan;
    m_runIds.clear();
    m_measures.clear();
    m_probed = -1;
    m_speed = !memory;
    m_sweepId.reset();
    m_next = 0;
    m_round = 0;
    m_done = false;
    m_waitingForRun = false;
    m_stopRequested = false;
    Q_EMIT runningChanged(true);
    submitToWriter(
        *m_session->writer(), this,
        [memory, name = base.name, plan = hearth::ladderPlanJson(m_plan, m_steps)](hearth::sqlite::Connection& db) {
            return hearth::runedits::createSweep(db, name + (memory ? " memory ladder" : " ladder"),
                                                 memory ? "memory-ladder" : "ladder", plan);
        },
        [this](int64_t sweepId) {
            m_sweepId = sweepId;
            if (m_stopRequested)
                end(false);
            else
                startStep();
        },
        [this](const QString& message) { fail(tr("Could not record the ladder: %1").arg(message)); });
    return true;
}

void LadderRunner::startStep()
{
    const int count = static_cast<int>(m_steps.size());
    for (;;) {
        if (m_next >= count) {
            if (m_round + 1 >= m_plan.repeats) {
                end(true);
                return;
            }
            ++m_round;   // the steps after the last one run were not run: the next round
            m_next = 0;
            continue;
        }
        if (m_steps[static_cast<size_t>(m_next)].not_run.empty())
            break;
        ++m_next;   // predicted not to fit in the first round
    }
    if (m_round == 0 && m_probed != m_next && !m_steps[static_cast<size_t>(m_next)].prediction)
        probeStep();
    else
        runStep();
}

void LadderRunner::probeStep()
{
    m_probed = m_next;
    const auto& step = m_steps[static_cast<size_t>(m_next)];
    m_probeConfig = std::make_unique<QTemporaryFile>(QDir::tempPath() + QStringLiteral("/hearth-probe-XXXXXX.json"));
    if (!m_probeConfig->open() ||
        m_probeConfig->write(QByteArray::fromStdString(hearth::configToJson(step.config))) < 0 ||
        !m_probeConfig->flush()) {
        Q_EMIT stepPredicted(m_next, QString::fromStdString(step.label), tr("cannot write the probe's config"), false);
        runStep();
        return;
    }
    if (!m_probe) {
        m_probe = new CliProcess(this);
        connect(m_probe, &CliProcess::lineRead, this, [this](const QByteArray& line) {
            if (line.startsWith('{'))
                m_probeJson = line;
        });
        connect(m_probe, &CliProcess::finished, this, &LadderRunner::onProbeEnded);
    }
    m_probeJson.clear();
    QString error;
    QStringList args{QStringLiteral("--db"), m_session->dbPath(), QStringLiteral("tune"),
                     QStringLiteral("--footprint"), QStringLiteral("--json"), QStringLiteral("--config"),
                     m_probeConfig->fileName()};
    if (m_plan.device_memory_bytes)
        args << QStringLiteral("--device-memory") << QString::number(*m_plan.device_memory_bytes);
    Q_EMIT stepProbing(m_next, static_cast<int>(m_steps.size()), QString::fromStdString(step.label));
    if (!m_probe->start(args, tr("The footprint probe"), &error)) {
        Q_EMIT stepPredicted(m_next, QString::fromStdString(step.label), error, false);
        runStep();
    }
}

void LadderRunner::onProbeEnded(int exitCode, bool crashed)
{
    if (m_done)
        return;
    if (m_stopRequested) {
        end(false);
        return;
    }
    std::optional<hearth::FootprintPrediction> prediction;
    if (exitCode == 0 && !crashed && !m_probeJson.isEmpty()) {
        try {
            prediction = hearth::footprintFromJson(m_probeJson.toStdString());
        } catch (const std::invalid_argument&) {
        }
    }
    const QString failure = prediction ? QString() : m_probe->failureText(exitCode, crashed);
    const size_t index = static_cast<size_t>(m_next);
    const auto outcome = hearth::settleLadderPrediction(
        m_steps, index, m_speed ? hearth::LadderKind::Speed : hearth::LadderKind::Memory, prediction,
        failure.toStdString());
    const auto& step = m_steps[index];
    const QString label = QString::fromStdString(step.label);
    storePlan();
    if (outcome == hearth::LadderProbeOutcome::Run) {
        if (prediction)
            Q_EMIT stepPredicted(m_next, label,
                                 tr("peak %1 (activations %2), step %3 ms")
                                     .arg(QString::fromStdString(hearth::formatBytes(prediction->memory.peak_bytes)),
                                          QString::fromStdString(hearth::formatBytes(prediction->memory.activations_bytes)))
                                     .arg(prediction->step_ms, 0, 'f', 1),
                                 true);
        else
            Q_EMIT stepPredicted(m_next, label, failure, false);   // the step runs and reports its own error
        runStep();
        return;
    }
    const QString reason = QString::fromStdString(step.not_run);
    if (outcome == hearth::LadderProbeOutcome::Refused) {
        fail(tr("The baseline is predicted not to fit, so the ladder has nothing to measure against: %1. Try a "
                "smaller batch size, or the memory ladder.")
                 .arg(reason));
        return;
    }
    m_measures.emplace_back();   // keeps m_measures aligned with the steps (settleStep)
    Q_EMIT stepNotRun(m_next, label, reason);
    ++m_next;
    startStepLater();
}

void LadderRunner::startStepLater()
{
    QTimer::singleShot(0, this, [this] {
        if (m_done)
            return;
        if (m_stopRequested)
            end(false);
        else
            startStep();   // fails the ladder itself when the step cannot start
    });
}

void LadderRunner::runStep()
{
    const auto& step = m_steps[static_cast<size_t>(m_next)];
    ++m_next;
    QString error;
    m_waitingForRun = true;
    m_epochs.clear();
    m_fitSeconds = 0.0;
    m_bestValAccuracy = 0.0;
    // Each round its own seed: the repeats of a step then differ as runs of the experiment do.
    hearth::ExperimentConfig config = step.config;
    config.seed += static_cast<uint64_t>(m_round);
    if (!m_session->start(config, &error, m_sweepId))
        fail(error);
}

void LadderRunner::onStepRunStarted(qint64 runId)
{
    if (!m_waitingForRun)
        return;   // a run the ladder did not start
    m_waitingForRun = false;
    m_runIds << runId;
    const auto& step = m_steps[static_cast<size_t>(m_next - 1)];
    if (m_sweepId) {
        submitToWriter(
            *m_session->writer(), this,
            [sweep = *m_sweepId, runId, index = m_next - 1, round = m_round](hearth::sqlite::Connection& db) {
                hearth::runedits::addSweepRun(db, sweep, runId, index, round);
                return true;
            },
            [](bool) {}, [](const QString&) {});   // the run itself is stored either way
    }
    if (m_plan.repeats > 1 && m_next == 1)
        Q_EMIT roundStarted(m_round + 1, static_cast<int>(m_plan.repeats));
    Q_EMIT stepStarted(m_next - 1, static_cast<int>(m_steps.size()), QString::fromStdString(step.label));
}

void LadderRunner::stop()
{
    if (m_done)
        return;
    m_stopRequested = true;
    if (m_probe && m_probe->isRunning())
        m_probe->stop();   // its end ends the ladder
    m_session->stop();   // also a step whose run is still being created
}

void LadderRunner::fail(const QString& message)
{
    m_waitingForRun = false;
    Q_EMIT failed(message);
    end(false);
}

void LadderRunner::end(bool complete)
{
    m_done = true;
    Q_EMIT runningChanged(false);
    Q_EMIT finished(m_runIds, complete);
}

void LadderRunner::onEvents(const std::vector<hearth::Event>& batch)
{
    if (m_done || m_waitingForRun || m_runIds.isEmpty())
        return;   // the session's events belong to the current step's run while one runs
    for (const auto& event : batch) {
        if (const auto* epoch = std::get_if<hearth::EpochMetrics>(&event))
            m_epochs.push_back(*epoch);
        else if (const auto* finished = std::get_if<hearth::RunFinished>(&event)) {
            m_fitSeconds = finished->train_time_s;
            m_bestValAccuracy = finished->best_val_accuracy;
        }
    }
}

void LadderRunner::settleStep()
{
    const size_t index = static_cast<size_t>(m_next - 1);
    if (m_round > 0)
        return;   // the first round settles which rungs stay
    if (index == 0 && m_speed && m_plan.goal == hearth::LadderGoal::Accuracy) {
        // Every later step trains until it reaches the baseline's best validation accuracy.
        hearth::aimLadderAtAccuracy(m_steps, m_plan, m_bestValAccuracy);
        storePlan();
    }
    m_measures.push_back(hearth::ladderMeasureOf(m_fitSeconds, m_epochs));
    if (!m_speed || m_measures.size() != index + 1 || hearth::settleLadderStep(m_steps, index, m_measures))
        return;
    storePlan();
    const size_t reference = hearth::ladderReferenceStep(m_steps, index);
    Q_EMIT stepLeftOut(static_cast<int>(index), QString::fromStdString(m_steps[index].label),
                       QString::fromStdString(m_steps[reference].label),
                       QString::fromStdString(hearth::ladderSpeedupText(m_measures[index], m_measures[reference])));
}

void LadderRunner::storePlan()
{
    if (!m_sweepId)
        return;
    submitToWriter(
        *m_session->writer(), this,
        [sweep = *m_sweepId, plan = hearth::ladderPlanJson(m_plan, m_steps)](hearth::sqlite::Connection& db) {
            hearth::runedits::setSweepPlan(db, sweep, plan);
            return true;
        },
        [](bool) {}, [](const QString&) {});   // the runs are stored either way
}

void LadderRunner::onRunEnded(qint64 runId, int status)
{
    if (m_done || m_runIds.isEmpty() || m_runIds.back() != runId)
        return;   // a run the ladder did not start
    const bool completed = static_cast<hearth::RunStatus>(status) == hearth::RunStatus::Completed;
    if (completed)
        settleStep();
    if (completed && m_next >= static_cast<int>(m_steps.size()) && m_round + 1 < m_plan.repeats) {
        ++m_round;   // the next round starts again at the baseline
        m_next = 0;
    }
    if (!completed || m_stopRequested || m_next >= static_cast<int>(m_steps.size())) {
        end(completed && !m_stopRequested);
        return;
    }
    // The next step starts once this run's end has reached every receiver (the window shows the
    // ended run's status and report first), not from inside the signal that announces it.
    startStepLater();
}

}  // namespace hearth::ui
