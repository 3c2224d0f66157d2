#include "ui/session/MetaTypes.h"

namespace hearth::ui {

void registerMetaTypes()
{
    qRegisterMetaType<EventBatch>("hearth::ui::EventBatch");
    qRegisterMetaType<hearth::RunStatus>("hearth::RunStatus");
    qRegisterMetaType<hearth::RunStarted>("hearth::RunStarted");
    qRegisterMetaType<hearth::RunFinished>("hearth::RunFinished");
    qRegisterMetaType<hearth::RunFailed>("hearth::RunFailed");
    qRegisterMetaType<hearth::ExperimentConfig>("hearth::ExperimentConfig");
}

}  // namespace hearth::ui
