#pragma once
// LoopState: where a fit stands, as one value that can be saved and read back (the foundation
// for resuming a run): the epoch and the micro-batch within it, the optimizer steps taken, the
// best monitored value so far, the learning rate last set and, once early stopping ended the fit,
// why (a resume past that point reports it as the uninterrupted fit would).

#include <cstdint>
#include <optional>
#include <string>

namespace hearth {

struct LoopState {
    int64_t epoch = 0;              // 0-based epoch in progress (max_epochs once the fit ended)
    int64_t batch_in_epoch = 0;     // micro-batches of `epoch` already trained
    int64_t global_step = 0;        // optimizer steps taken
    int64_t micro_batches = 0;      // micro-batches trained since the fit started
    int64_t epochs_completed = 0;   // trained and validated
    std::optional<double> best_value;  // the checkpoint's monitored metric at its best epoch
    int64_t best_epoch = -1;
    double lr = 0.0;                // the learning rate of the last optimizer step
    std::string finish_reason;      // why the fit ended before max_epochs (early stopping); "" otherwise

    bool operator==(const LoopState& o) const;
    bool operator!=(const LoopState& o) const { return !(*this == o); }
};

// Where a resumed fit continues: the training state it was read from, its loop position and the
// fit's time before the interruption.
struct ResumePoint {
    std::string path;
    LoopState loop;
    double elapsed_s = 0.0;
};

// {"epoch": 2, "batch_in_epoch": 0, ...}; best_value null when there is none; finish_reason only
// when set (a state written before it existed reads as "").
std::string loopStateToJson(const LoopState& state);
// Throws std::invalid_argument naming the key that is missing or of the wrong type.
LoopState loopStateFromJson(const std::string& json);

}  // namespace hearth
