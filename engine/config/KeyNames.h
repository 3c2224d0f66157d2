#pragma once
// KeyNames: the config keys' names as people type them: the names below a group, every key and
// group, and the keys a word may mean (its own name elsewhere, or the form's label for it). For
// the "unknown key" messages of experiment files and --set, and hearth-cli's hints.

#include <string>
#include <vector>

namespace hearth {

// The names directly below `prefix` ("" = the top level), in schema order: keys and groups
// ("trainer" -> max_epochs, ..., checkpoint, early_stopping, ...).
std::vector<std::string> configChildNames(const std::string& prefix);

// Every key, and every group above one ("trainer", "trainer.ddp"), in schema order.
std::vector<std::string> configKeysAndGroups();

// The keys called `word`: whose own name ("lr" -> optimizer.lr) or form label ("Learning rate",
// "Source" -> data.path) it is, case, '-', '_' and spaces aside ("max-epochs" -> trainer.max_epochs).
std::vector<std::string> configKeysCalled(const std::string& word);

// What `word`, typed where the names `here` are allowed (`group` their common prefix, "trainer."
// or ""), likely means: the names here close to it (likelyMeant), then the keys elsewhere called
// so (configKeysCalled: trainer.lr -> optimizer.lr, data.source -> data.path); when neither, the
// keys whose own name is close to it (data.workers -> trainer.num_workers). For didYouMean.
std::vector<std::string> configKeysMeant(const std::string& word, const std::vector<std::string>& here,
                                         const std::string& group = "");

}  // namespace hearth
