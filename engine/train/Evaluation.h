#pragma once
// evaluate(): one pass over a loader in eval mode without gradients (validation and test),
// collecting loss, accuracy and, when asked, per-sample predictions. Under a distributed strategy
// each rank evaluates its shard of the split and the rows are gathered from every rank: every
// rank ends with the whole split's results, each sample counted once, in the split's order.

#include "engine/data/Loader.h"
#include "engine/events/Events.h"
#include "engine/models/ModelRegistry.h"
#include "engine/strategy/Strategy.h"
#include "engine/train/Task.h"

#include <functional>
#include <vector>

namespace hearth {

struct EvalResult {
    double loss = 0.0;
    double accuracy = 0.0;
    int64_t samples = 0;
    bool interrupted = false;  // between_batches asked to stop
    std::vector<int64_t> y_true, y_pred;
    std::vector<Prediction> predictions;  // only with keep_predictions
};

// Batches reach the device through the strategy, the loss and predictions come from the task.
// between_batches is called after each batch; returning false stops the pass early (every rank
// must stop at the same batch: between_batches agrees through the strategy).
EvalResult evaluate(ClassifierImpl& model, Loader& loader, const Dataset& dataset, Strategy& strategy,
                    const Task& task, bool keep_predictions, const std::function<bool()>& between_batches);

}  // namespace hearth
