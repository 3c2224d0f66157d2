#pragma once
// Spelling: which of a set of words a mistyped one most likely meant, for the "did you mean"
// hints of config keys, their allowed values and hearth-cli's commands and options.

#include <string>
#include <vector>

namespace hearth {

// The words of `words` closest to `typed`, at most three, in the order `words` gives them.
// Close: a few letters apart (one for a short word, about one in four for a longer one; a swap of
// two neighbours counts once, case not at all), or `typed` is part of the word ("bf16" of
// "bf16-mixed"). A word a few letters apart beats one that only contains `typed`. Empty when none
// is close, or when `typed` is one of `words`.
std::vector<std::string> likelyMeant(const std::string& typed, const std::vector<std::string>& words);

// "'a'", "'a' or 'b'", "'a', 'b' or 'c'": the words, each between `quote`s.
std::string alternatives(const std::vector<std::string>& words, const std::string& quote = "'");

// " (did you mean 'a'?)", " (did you mean 'a' or 'b'?)", " (did you mean 'a', 'b' or 'c'?)": the
// words meant, each between `quote`s; "" when there are none, or more than three (no guess then).
std::string didYouMean(const std::vector<std::string>& meant, const std::string& quote = "'");

// didYouMean(likelyMeant(typed, words), quote).
std::string didYouMean(const std::string& typed, const std::vector<std::string>& words, const std::string& quote = "'");

}  // namespace hearth
