#pragma once
// The one place that declares and registers the engine/storage types Qt carries in signals.

#include "engine/events/Events.h"
#include "engine/run/RunController.h"

#include <QMetaType>

#include <vector>

namespace hearth::ui {

// Events drained from the engine in one GUI-timer tick, in arrival order.
using EventBatch = std::vector<hearth::Event>;

// Call once at start-up (MainWindow and tests do); idempotent.
void registerMetaTypes();

}  // namespace hearth::ui

Q_DECLARE_METATYPE(hearth::ui::EventBatch)
Q_DECLARE_METATYPE(hearth::RunStatus)
Q_DECLARE_METATYPE(hearth::RunStarted)
Q_DECLARE_METATYPE(hearth::RunFinished)
Q_DECLARE_METATYPE(hearth::RunFailed)
Q_DECLARE_METATYPE(hearth::ExperimentConfig)
