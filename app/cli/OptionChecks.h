#pragma once
// Checks on hearth-cli's number options, with messages in words. CLI11's PositiveNumber and
// NonNegativeNumber say "Value 0 not in range 0.000000 to 1797693134862315708145274237317043567..."
// (the bounds of a double), and its Range "Value x not in range 1 to 100", for a word as for a
// number.

#include <CLI/CLI.hpp>

#include <string>
#include <type_traits>

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

// A number from `low` to `high`, both included: a whole number when T is an integer type. Help
// shows "INT:[1, 100]"; errors read "--repeats: 0 is out of range: 1 to 100" and
// "--cap-epochs: 'x' is not a whole number: 1 to 100000".
template <typename T>
CLI::Validator between(T low, T high)
{
    const auto show = [](T v) {
        if constexpr (std::is_integral_v<T>) {
            return std::to_string(v);
        } else {
            std::string text = std::to_string(v);  // "0.500000" -> "0.5"
            text.erase(text.find_last_not_of('0') + 1);
            if (!text.empty() && text.back() == '.') text.pop_back();
            return text;
        }
    };
    const std::string bound = show(low) + " to " + show(high);
    const std::string kind = std::is_integral_v<T> ? "a whole number" : "a number";
    return CLI::Validator(
        [low, high, bound, kind](std::string& text) -> std::string {
            T value{};
            if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not " + kind + ": " + bound;
            if (!(value >= low && value <= high)) return text + " is out of range: " + bound;  // NaN too
            return {};
        },
        "[" + show(low) + ", " + show(high) + "]",
        "BETWEEN");
}

}  // namespace hearth::cli
