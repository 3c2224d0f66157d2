#pragma once
// DataInputs: what is wrong with the data a config names, found before a job stores anything or
// loads the data: inputProblems (paths that are not there, or not of their kind) and, for CSV
// data, the columns the config reads that a file's header does not have.

#include "engine/config/ExperimentConfig.h"

#include <vector>

namespace hearth {

// inputProblems, then for csv and text_csv data whose files are there: each of data.path,
// data.val_path and data.test_path whose header (its first 64 KiB) lacks data.label_column (or,
// for text_csv, data.text_column), as an issue of that column's key naming the file, the column
// likely meant and the columns it has. A file that cannot be read or is empty is an issue of its
// path's key. Rows are not read: their problems are found when the data loads.
std::vector<ConfigIssue> dataInputProblems(const ExperimentConfig& config);

}  // namespace hearth
