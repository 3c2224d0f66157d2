#pragma once
// The finders on a prepared run, with LibTorch: the state guards that leave the model and the
// process's random state as they were, and the two finders themselves. Engine-internal (the
// public, torch-free entry points are in Finders.h); tests call these to see the model.

#include "engine/run/Finders.h"
#include "engine/run/RunSetup.h"
#include "engine/train/RandomState.h"

#include <torch/torch.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace hearth {
class Strategy;

// A clone of every parameter and buffer of a module; restore() copies them back bit for bit and
// drops the gradients (both through `strategy`'s WeightsAccess: zero3 keeps only shards).
class ModelSnapshot {
public:
    ModelSnapshot(torch::nn::Module& module, Strategy& strategy);
    void restore();

private:
    std::vector<torch::Tensor> live_, saved_;
    torch::nn::Module& module_;
    Strategy& strategy_;
};

bool isOutOfMemoryMessage(const std::string& message);

// The search over any trial function (no LibTorch in it): power scaling from `start`, then
// bisection between the last fit and the first failure; `cap` bounds every trial. `bound_reason`
// says what `cap` is (reported when the search stops there).
BatchSizeResult searchBatchSizes(int64_t start, int64_t cap, const std::string& bound_reason,
                                 const BatchSizeFinderOptions& options,
                                 const std::function<BatchSizeTrial(int64_t)>& trial, const std::atomic<bool>& stop);

// The finders on `run`'s model (placed by the run's strategy); the model's parameters and buffers
// are restored before they return or throw.
BatchSizeResult searchBatchSize(PreparedRun& run, const BatchSizeFinderOptions& options,
                                const std::atomic<bool>& stop);
FootprintPrediction probeFootprint(PreparedRun& run, const FootprintOptions& options, const std::atomic<bool>& stop);
LrFinderResult sweepLearningRate(PreparedRun& run, const LrFinderOptions& options, const std::atomic<bool>& stop);

}  // namespace hearth
