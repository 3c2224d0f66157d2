#pragma once
// A run's name and tags. The name a run gets when none was given: the built-in experiment keeps
// "fashion-cnn"; any other data or model names itself after them, e.g. "iris-mlp" (iris.csv),
// "wordnet-distilbert". Names and tags are one line each, without surrounding blanks, however
// they were typed (a config file, --set, hearth-cli rename or tag, the History's cells).

#include "engine/config/ExperimentConfig.h"

#include <string>
#include <string_view>
#include <vector>

namespace hearth {

std::string defaultRunName(const ExperimentConfig& config);
// Makes config.name one line (oneLine); replaces the built-in default name, or a blank one, with
// defaultRunName() when the data or the model are not the built-in ones (a run given only --set
// keys); a name the user chose is kept.
void nameAfterDataAndModel(ExperimentConfig& config);

// `text` on one line: control characters (line breaks, tabs) become spaces; leading and trailing
// blanks go. "" when nothing else is left.
std::string oneLine(std::string_view text);

// The tags `words` name: each word split at commas (a comma separates tags wherever tags are
// listed), each tag one line, empty ones left out, each tag once, in the order first named.
std::vector<std::string> tagsFromWords(const std::vector<std::string>& words);

}  // namespace hearth
