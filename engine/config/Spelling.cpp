#include "engine/config/Spelling.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace hearth {
namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbouring letters each count one.
size_t editDistance(const std::string& a, const std::string& b) {
    const size_t n = a.size(), m = b.size();
    std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
    for (size_t i = 0; i <= n; ++i) d[i][0] = i;
    for (size_t j = 0; j <= m; ++j) d[0][j] = j;
    for (size_t i = 1; i <= n; ++i) {
        for (size_t j = 1; j <= m; ++j) {
            const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[n][m];
}

}  // namespace

std::vector<std::string> likelyMeant(const std::string& typed, const std::vector<std::string>& words) {
    if (typed.empty() || words.empty() || std::find(words.begin(), words.end(), typed) != words.end()) return {};
    const std::string t = lower(typed);
    const size_t allowed = std::max<size_t>(1, (t.size() + 1) / 4);   // 1 up to 6 letters, 2 up to 10, ...
    // A word that only contains `typed` scores one worse than the furthest typo still taken.
    constexpr size_t kNone = std::numeric_limits<size_t>::max();
    std::vector<size_t> score(words.size(), kNone);
    for (size_t i = 0; i < words.size(); ++i) {
        const std::string w = lower(words[i]);
        if (const size_t d = editDistance(t, w); d <= allowed)
            score[i] = d;
        else if (t.size() >= 2 && w.find(t) != std::string::npos)
            score[i] = allowed + 1;
    }
    const size_t best = *std::min_element(score.begin(), score.end());
    std::vector<std::string> meant;
    if (best == kNone) return meant;
    for (size_t i = 0; i < words.size() && meant.size() < 3; ++i)
        if (score[i] == best && std::find(meant.begin(), meant.end(), words[i]) == meant.end())
            meant.push_back(words[i]);
    return meant;
}

std::string alternatives(const std::vector<std::string>& words, const std::string& quote) {
    std::string text;
    for (size_t i = 0; i < words.size(); ++i) {
        if (i > 0) text += i + 1 == words.size() ? " or " : ", ";
        text.append(quote).append(words[i]).append(quote);
    }
    return text;
}

std::string didYouMean(const std::vector<std::string>& meant, const std::string& quote) {
    return meant.empty() || meant.size() > 3 ? "" : " (did you mean " + alternatives(meant, quote) + "?)";
}

std::string didYouMean(const std::string& typed, const std::vector<std::string>& words, const std::string& quote) {
    return didYouMean(likelyMeant(typed, words), quote);
}

}  // namespace hearth
