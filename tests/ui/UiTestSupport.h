#pragma once
// Shared set-up for the ui tests: QSettings and standard paths in a throw-away location, the
// hearth-cli that runs the workbench's jobs, and a small real experiment (Fashion-MNIST subset)
// that trains in seconds.

#include "engine/config/ExperimentConfig.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QtGlobal>

#include <algorithm>

namespace hearth::test {

// Call in initTestCase(), before any QSettings is created. Also points the workbench at the
// built hearth-cli, which runs every job (CliProcess).
inline void isolateSettings(const QTemporaryDir& dir)
{
    if (qEnvironmentVariableIsEmpty("HEARTH_CLI") && !QByteArray(HEARTH_CLI_PATH).isEmpty())
        qputenv("HEARTH_CLI", HEARTH_CLI_PATH);
    QStandardPaths::setTestModeEnabled(true);
    qputenv("XDG_CONFIG_HOME", dir.filePath("config").toUtf8());
    qputenv("XDG_DATA_HOME", dir.filePath("data").toUtf8());
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir.filePath("config"));
    QSettings().clear();
}

inline hearth::ExperimentConfig tinyExperiment(const std::string& name = "tiny")
{
    hearth::ExperimentConfig c;
    c.name = name;
    c.data.limit = 300;
    c.model.name = "mlp";
    c.model.hidden = {32};
    c.trainer.max_epochs = 1;
    c.trainer.batch_size = 32;
    c.trainer.num_workers = 0;
    c.trainer.log_every_n_steps = 1;
    return c;
}

// Measures whether the GUI thread's event loop keeps turning: a 20 ms timer that records its
// ticks and the longest gap between two of them.
class EventLoopProbe {
public:
    EventLoopProbe()
    {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(20);
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            m_longestGapMs = std::max(m_longestGapMs, m_clock.restart());
            ++m_ticks;
        });
        m_clock.start();
        m_timer.start();
    }
    int ticks() const { return m_ticks; }
    qint64 longestGapMs() const { return m_longestGapMs; }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    int m_ticks = 0;
    qint64 m_longestGapMs = 0;
};

}  // namespace hearth::test
