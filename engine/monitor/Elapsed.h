#pragma once
// Time since a steady-clock point, the one spelling of "how long since `start`" in the engine and
// the command-line tools.

#include <chrono>

namespace hearth {

inline double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline double millisecondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace hearth
