#pragma once
// Checks on hearth-cli's whole-number options, with messages in words. CLI11's PositiveNumber and
// NonNegativeNumber say "Value 0 not in range 0.000000 to 1797693134862315708145274237317043567..."
// (the bounds of a double), for a word as for a number.

#include <CLI/CLI.hpp>

#include <string>

namespace hearth::cli {

// A whole number of at least `minimum`; `zero_means` says what 0 stands for where 0 is allowed
// (e.g. "every run"). Help shows "INT:>=1"; an error reads "--steps: 0 is too small: 1 or more".
inline CLI::Validator atLeast(long long minimum, const std::string& zero_means = "")
{
    const std::string bound = std::to_string(minimum) + " or more" + (zero_means.empty() ? "" : " (0: " + zero_means + ")");
    return CLI::Validator(
        [minimum, bound](std::string& text) -> std::string {
            long long value = 0;
            if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a whole number: " + bound;
            if (value < minimum) return text + " is too small: " + bound;
            return {};
        },
        ">=" + std::to_string(minimum), "AT_LEAST");
}

}  // namespace hearth::cli
