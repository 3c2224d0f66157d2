#include "ui/tune/FinderRunner.h"

#include "engine/events/Overloaded.h"
#include "engine/run/FinderJson.h"
#include "ui/session/CliProcess.h"

#include <QDir>
#include <QTimer>

namespace hearth::ui {
namespace {

QString number(double value)
{
    return QString::number(value, 'g', 17);
}

}  // namespace

FinderRunner::FinderRunner(QObject* parent) : QObject(parent), m_process(new CliProcess(this))
{
    connect(m_process, &CliProcess::lineRead, this, &FinderRunner::onLine);
    connect(m_process, &CliProcess::finished, this, &FinderRunner::onFinished);
}

FinderRunner::~FinderRunner() = default;   // CliProcess stops the child

qint64 FinderRunner::processId() const
{
    return m_running ? m_process->processId() : 0;
}

bool FinderRunner::startBatchSize(const hearth::ExperimentConfig& config, const hearth::BatchSizeFinderOptions& options)
{
    QStringList args{"--batch-size",   "--start-batch", QString::number(options.start_batch),
                     "--steps",        QString::number(options.steps_per_trial),
                     "--multiple-of",  QString::number(options.multiple_of),
                     "--tolerance",    number(options.tolerance)};
    if (options.max_batch > 0)
        args << "--max-batch" << QString::number(options.max_batch);
    if (options.memory_limit_bytes > 0)
        args << "--memory-limit" << QString::number(options.memory_limit_bytes);
    return startTune(config, args);
}

bool FinderRunner::startLearningRate(const hearth::ExperimentConfig& config, const hearth::LrFinderOptions& options)
{
    return startTune(config, {"--lr", "--min-lr", number(options.min_lr), "--max-lr", number(options.max_lr),
                              "--steps", QString::number(options.steps)});
}

bool FinderRunner::startTune(const hearth::ExperimentConfig& config, const QStringList& arguments)
{
    if (m_running)
        return false;
    m_batch.reset();
    m_lr.reset();
    m_trials.clear();
    m_lrPoints.clear();
    m_error.clear();
    m_running = true;
    m_config.setFileTemplate(QDir::temp().filePath("hearth-tune-XXXXXX.json"));
    const QByteArray json = QByteArray::fromStdString(hearth::configToJson(config));
    QString error;
    if (!m_config.open() || m_config.resize(0) == false || m_config.write(json) != json.size() || !m_config.flush())
        error = tr("Could not write the experiment for hearth-cli: %1").arg(m_config.errorString());
    else if (m_process->start(QStringList{"tune", "--config", m_config.fileName()} + arguments + QStringList{"--events"},
                              tr("A finder"), &error))
        return true;
    // Nothing started: the dialog hears it as a finder that ended with this error.
    QTimer::singleShot(0, this, [this, error] {
        m_error = error;
        m_running = false;
        Q_EMIT finished();
    });
    return true;
}

void FinderRunner::requestStop()
{
    m_process->stop();
}

void FinderRunner::onLine(const QByteArray& bytes)
{
    const auto line = hearth::finderjson::fromLine(bytes.toStdString());
    if (!line)
        return;   // not a finder line
    std::visit(hearth::Overloaded{
                   [this](const hearth::finderjson::Progress& p) {
                       Q_EMIT progress(p.fraction, QString::fromStdString(p.what));
                   },
                   [](const hearth::finderjson::Log&) {},
                   [this](const hearth::BatchSizeTrial& t) {
                       m_trials.push_back(t);
                       Q_EMIT trialsChanged();
                   },
                   [this](const hearth::LrPoint& p) {
                       m_lrPoints.push_back(p);
                       Q_EMIT lrPointsChanged();
                   },
                   [this](const hearth::BatchSizeResult& r) { m_batch = r; },
                   [this](const hearth::LrFinderResult& r) { m_lr = r; },
                   [this](const hearth::finderjson::Failure& f) { m_error = QString::fromStdString(f.message); },
               },
               *line);
}

void FinderRunner::onFinished(int exitCode, bool crashed)
{
    // A result, or the finder's own error line; else the child's last words.
    if (!m_batch && !m_lr && m_error.isEmpty())
        m_error = m_process->failureText(exitCode, crashed);
    m_running = false;
    Q_EMIT finished();
}

}  // namespace hearth::ui
