#pragma once
// Shared set-up for the ui tests: QSettings and standard paths in a throw-away location, and a
// small real experiment (Fashion-MNIST subset) that trains in seconds.

#include "engine/config/ExperimentConfig.h"

#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtGlobal>

namespace hearth::test {

// Call in initTestCase(), before any QSettings is created.
inline void isolateSettings(const QTemporaryDir& dir)
{
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

}  // namespace hearth::test
