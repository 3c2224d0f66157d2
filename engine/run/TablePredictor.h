#pragma once
// TablePredictor: `hearth-cli predict RUN --input rows.csv` for a run trained on a CSV table
// (data.kind csv, any tabular model). Each row's features are found by the training file's column
// names (in any order; columns the model does not read are left aside and named in a note) and
// standardised with the statistics of the run's training rows, as its evaluation saw them (as the
// run stored them, NormalizationFile; a run from before that reads its training file again and
// splits it with its seed). A row that carries the run's label column is scored. Public header: standard types only (app/cli includes it without LibTorch).

#include "engine/run/TextPredictor.h"

namespace hearth {

// Output columns: index (the row's 0-based number in the input), predicted (class name),
// confidence, true (the row's label, or empty; only when the input has the label column), then
// prob:<class> for every class. Reads options.input_csv, options.output_csv and
// options.batch_size. Throws DataError (the input, the stored statistics or an older run's training
// file, the checkpoint) or
// ConfigError (a run that did not train on a table).
PredictResult predictTableCsv(const PredictModel& model, const PredictOptions& options);

}  // namespace hearth
