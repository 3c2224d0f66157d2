#pragma once
// DataError: a data file is missing, truncated or malformed. The message names the file and,
// where it applies, the line/offset and what was expected. Maps to exit code 3.

#include <stdexcept>
#include <string>

namespace hearth {

class DataError : public std::runtime_error {
public:
    explicit DataError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace hearth
