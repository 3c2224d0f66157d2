#pragma once
// CapturedStep: one optimizer step recorded once as a CUDA graph and replayed
// (trainer.cuda_graph=step). The Trainer hands it each accumulation group's device batches and
// the step's body (forward, backward, unscale, clipping, the fused optimizer, zeroing the
// gradients: eager code with no host sync). The batches are copied into static input tensors;
// the first steps run the body eagerly on a side stream (warm-up: cuBLAS and cuDNN workspaces,
// the optimizer's state, the loss scaler), the next is captured and every later one replays the
// graph: one launch instead of hundreds. The CUDA generator is registered with the graph, so
// dropout draws new masks at every replay, as eagerly. CUDA builds only (makeCudaGraphStep).

#include "engine/data/Batch.h"

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace hearth {

// Eager steps on the side stream before the capture (as PyTorch's examples).
inline constexpr int64_t kCaptureWarmupSteps = 3;

class CapturedStep {
public:
    enum class Mode { Warmup, Captured, Replayed };
    // The step over the static batches. capturing: being recorded (no host reads, no callbacks).
    using Body = std::function<void(const std::vector<Batch>& batches, bool capturing)>;

    virtual ~CapturedStep() = default;
    // Whether `group` can run through the graph: as many batches as the captured one, each with
    // the same fields, shapes, dtypes and layouts (before the first step: any group).
    virtual bool fits(const std::vector<Batch>& group) const = 0;
    // One optimizer step over `group` (on the device); what ran: a warm-up step, the capture (and
    // its first replay), or a replay.
    virtual Mode run(const std::vector<Batch>& group, const Body& body) = 0;
    virtual bool captured() const = 0;
    // Device memory the graph's private pool holds (its activations and temporaries); 0 before.
    virtual int64_t poolBytes() const = 0;
};

#ifdef HEARTH_WITH_CUDA
std::unique_ptr<CapturedStep> makeCudaGraphStep(torch::Device device, int64_t warmup_steps = kCaptureWarmupSteps);
#endif

}  // namespace hearth
