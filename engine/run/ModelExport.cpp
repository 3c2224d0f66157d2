#include "engine/run/ModelExport.h"

#include "engine/models/TorchScriptModel.h"
#include "engine/strategy/CheckpointFile.h"

namespace hearth {

void exportTorchScript(const ExperimentConfig& run_config, const std::string& checkpoint, const std::string& out) {
    const ModelConfig& m = run_config.model;
    if (m.name != "torchscript" || !m.path)
        throw ConfigError("--format", "torchscript exports a run of a TorchScript model (model.name=torchscript); "
                                      "this run trained " + m.name);
    TorchScriptClassifier model(loadTorchScriptModule(*m.path));
    try {
        loadCheckpointFile(checkpoint, *model);
    } catch (const c10::Error& e) {
        throw ConfigError("model.path", "the run's checkpoint " + checkpoint + " does not fit the module " + *m.path +
                                            " (was the file changed since the run?): " + e.what_without_backtrace());
    }
    try {
        model->saveScripted(out);
    } catch (const c10::Error& e) {
        throw ConfigError("--out", "cannot write " + out + ": " + e.what_without_backtrace());
    }
}

}  // namespace hearth
