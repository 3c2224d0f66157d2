#pragma once
// TrainingError: training cannot go on (non-finite loss, ...); carries what to try instead.

#include <stdexcept>
#include <string>

namespace hearth {

class TrainingError : public std::runtime_error {
public:
    TrainingError(const std::string& message, std::string suggestion)
        : std::runtime_error(message), suggestion_(std::move(suggestion)) {}
    const std::string& suggestion() const noexcept { return suggestion_; }

private:
    std::string suggestion_;
};

}  // namespace hearth
