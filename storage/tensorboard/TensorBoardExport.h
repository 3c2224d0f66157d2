#pragma once
// `hearth-cli export RUN --format tensorboard --out DIR`: a stored run as a TensorBoard event file
// in DIR/<id>-<name>/, so `tensorboard --logdir DIR` shows every exported run side by side.
// Scalars per logged step (train/*, speed/*) and per epoch (epoch/*), the validation and test
// results (val/*, test/*), the hparams plugin's view (the requested config, the metrics, the
// run's status) and the run's report as text (Markdown, as `export --format md` writes it).

#include "storage/RunStore.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace hearth::report {

struct TensorBoardExport {
    std::string run_dir;             // DIR/<id>-<name>
    std::string file;                // the event file written (replaced on a second export)
    int64_t step_points = 0;         // logged steps written (one event each)
    int64_t epoch_points = 0;
    int64_t hparams = 0;             // config leaves given to the hparams plugin
};

// The output directory or file cannot be written (the message names it and says why).
class ExportError : public std::runtime_error {
public:
    explicit ExportError(const std::string& message) : std::runtime_error(message) {}
};

// Throws StoreError when the run cannot be read, ExportError when the directory or the file
// cannot be written; a previous export of the run is then left as it was.
TensorBoardExport exportTensorBoard(const RunStore& store, int64_t run_id, const std::string& out_dir);

}  // namespace hearth::report
