#include "engine/data/WordNetGlosses.h"

#include "engine/data/DataError.h"

#include <fstream>
#include <sstream>

namespace hearth {

const std::vector<std::string>& wordNetNounClasses() {
    static const std::vector<std::string> names{
        "noun.Tops",      "noun.act",       "noun.animal",   "noun.artifact",   "noun.attribute", "noun.body",
        "noun.cognition", "noun.communication", "noun.event", "noun.feeling",   "noun.food",      "noun.group",
        "noun.location",  "noun.motive",    "noun.object",   "noun.person",     "noun.phenomenon", "noun.plant",
        "noun.possession", "noun.process",  "noun.quantity", "noun.relation",   "noun.shape",     "noun.state",
        "noun.substance", "noun.time"};
    return names;
}

TextSamples readWordNetGlosses(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        throw DataError("WordNet: cannot read '" + path + "' (Debian's wordnet-base package provides " +
                        std::string(kWordNetNouns) + "; scripts/install-deps installs it)");
    }
    TextSamples out;
    out.class_names = wordNetNounClasses();
    constexpr int kFirstNounFile = 3;
    std::string line;
    int64_t number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (line.empty() || line[0] == ' ') continue;  // the license header lines start with two spaces
        const auto fail = [&](const std::string& what) {
            std::string message = "WordNet: '" + path + "' line " + std::to_string(number) + ": ";
            message += what;
            return DataError(message);
        };
        std::istringstream fields(line);
        std::string offset, lex_file, type;
        if (!(fields >> offset >> lex_file >> type) || type != "n") throw fail("not a noun synset line");
        int lex = -1;
        try {
            lex = std::stoi(lex_file);
        } catch (const std::exception&) {
        }
        const int label = lex - kFirstNounFile;
        if (label < 0 || label >= static_cast<int>(out.class_names.size())) {
            throw fail("lexicographer file '" + lex_file + "' is not a noun class (03..28)");
        }
        const size_t bar = line.find(" | ");
        if (bar == std::string::npos) throw fail("no gloss (' | ' is missing)");
        std::string gloss = line.substr(bar + 3);
        while (!gloss.empty() && (gloss.back() == ' ' || gloss.back() == '\r')) gloss.pop_back();
        if (gloss.empty()) throw fail("the gloss is empty");
        out.texts.push_back(std::move(gloss));
        out.labels.push_back(label);
    }
    if (out.texts.empty()) throw DataError("WordNet: '" + path + "' has no noun synsets");
    return out;
}

}  // namespace hearth
