#pragma once
// The name a run gets when none was given: the built-in experiment keeps "fashion-cnn"; any other
// data or model names itself after them, e.g. "iris-mlp" (iris.csv), "wordnet-distilbert".

#include "engine/config/ExperimentConfig.h"

#include <string>

namespace hearth {

std::string defaultRunName(const ExperimentConfig& config);
// Replaces the built-in default name with defaultRunName() when the data or the model are not the
// built-in ones (a run given only --set keys); a name the user chose is kept.
void nameAfterDataAndModel(ExperimentConfig& config);

}  // namespace hearth
