#pragma once
// WordNetGlosses: the built-in text experiment's data, offline: every noun synset of WordNet
// (Debian's wordnet-base, /usr/share/wordnet/data.noun) as its gloss, labelled with its
// lexicographer class (noun.animal, noun.food, ... : 26 classes).

#include "engine/config/ExperimentConfig.h"   // kWordNetNouns

#include <string>
#include <vector>

namespace hearth {

struct TextSamples {
    std::vector<std::string> texts;
    std::vector<int64_t> labels;          // index into class_names
    std::vector<std::string> class_names;
};

// The 26 noun classes, in lexicographer file order (noun.Tops = 03 ... noun.time = 28).
const std::vector<std::string>& wordNetNounClasses();

// Reads a WordNet data.noun file: one sample per synset, text = its gloss (definition and
// examples), label = its lexicographer class. Throws DataError naming the file, the line and
// what is wrong (a missing file says which package provides it).
TextSamples readWordNetGlosses(const std::string& path = kWordNetNouns);

}  // namespace hearth
