// CUDA-only: the captured training step (see CapturedStep.h).

#include "engine/strategy/CapturedStep.h"

#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <optional>
#include <stdexcept>

namespace hearth {
namespace {

bool sameLayout(const torch::Tensor& a, const torch::Tensor& b) {
    return a.defined() == b.defined() &&
           (!a.defined() || (a.sizes() == b.sizes() && a.strides() == b.strides() &&
                             a.scalar_type() == b.scalar_type() && a.device() == b.device()));
}

bool sameShape(const Batch& a, const Batch& b) {
    const auto& fa = a.fields();
    const auto& fb = b.fields();
    if (fa.size() != fb.size()) return false;
    for (size_t i = 0; i < fa.size(); ++i) {
        if (fa[i].first != fb[i].first || !sameLayout(fa[i].second, fb[i].second)) return false;
    }
    return true;
}

// The autocast weight cache off while capturing (PyTorch's rule for graphs: a cached cast would
// outlive the capture that made it), restored afterwards.
class AutocastCacheOff {
public:
    AutocastCacheOff() : was_(at::autocast::is_autocast_cache_enabled()) { at::autocast::set_autocast_cache_enabled(false); }
    ~AutocastCacheOff() { at::autocast::set_autocast_cache_enabled(was_); }
    AutocastCacheOff(const AutocastCacheOff&) = delete;
    AutocastCacheOff& operator=(const AutocastCacheOff&) = delete;

private:
    bool was_;
};

class CudaGraphStep final : public CapturedStep {
public:
    CudaGraphStep(torch::Device device, int64_t warmup_steps)
        : device_(device.index() < 0 ? torch::Device(torch::kCUDA, 0) : device),
          side_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device_.index())),
          warmup_left_(std::max<int64_t>(warmup_steps, 1)) {}

    bool fits(const std::vector<Batch>& group) const override {
        if (slots_.empty()) return !group.empty();
        if (group.size() != slots_.size()) return false;
        for (size_t i = 0; i < group.size(); ++i) {
            if (!sameShape(group[i], slots_[i])) return false;
        }
        return true;
    }

    Mode run(const std::vector<Batch>& group, const Body& body) override {
        if (!fits(group)) throw std::logic_error("CapturedStep::run: a group of another shape than the captured one");
        c10::cuda::CUDAGuard device_guard(device_);
        stage(group);
        if (graph_) {
            graph_->replay();  // on the current stream, after the copies into the slots
            return Mode::Replayed;
        }
        const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(device_.index());
        // The side stream starts after the copies into the slots; the current stream goes on after
        // the step (what follows reads its parameters, metrics and gradients).
        waitFor(side_, current);
        Mode mode = Mode::Warmup;
        {
            c10::cuda::CUDAStreamGuard stream_guard(side_);
            if (warmup_left_ > 0) {
                body(slots_, /*capturing=*/false);
                --warmup_left_;
            } else {
                capture(body);
                mode = Mode::Captured;
            }
        }
        waitFor(current, side_);
        if (mode == Mode::Captured) graph_->replay();  // the captured step has not run yet
        return mode;
    }

    bool captured() const override { return graph_ != nullptr; }
    int64_t poolBytes() const override { return pool_bytes_; }

private:
    static void waitFor(const c10::cuda::CUDAStream& waiter, const c10::cuda::CUDAStream& done) {
        at::cuda::CUDAEvent event;
        event.record(done);
        event.block(waiter);
    }

    // The group's tensors into the static slots (made at the first step), on the current stream.
    void stage(const std::vector<Batch>& group) {
        if (slots_.empty()) {
            for (const Batch& b : group) {
                slots_.push_back(b.map([](const std::string&, const torch::Tensor& t) {
                    return t.defined() ? t.clone(at::MemoryFormat::Preserve) : t;
                }));
            }
            return;
        }
        torch::NoGradGuard no_grad;
        for (size_t i = 0; i < group.size(); ++i) {
            const auto& from = group[i].fields();
            const auto& to = slots_[i].fields();
            for (size_t f = 0; f < from.size(); ++f) {
                if (from[f].second.defined()) to[f].second.copy_(from[f].second, /*non_blocking=*/true);
            }
        }
    }

    void capture(const Body& body) {
        auto graph = std::make_unique<at::cuda::CUDAGraph>();
        {
            AutocastCacheOff cache_off;
            // Thread-local: the loader's workers may pin host memory meanwhile.
            try {
                graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
                try {
                    body(slots_, /*capturing=*/true);
                } catch (...) {
                    try {
                        graph->capture_end();
                    } catch (...) {
                    }
                    throw;
                }
                graph->capture_end();
            } catch (const std::exception& e) {
                throw std::runtime_error(std::string("trainer.cuda_graph=step: the training step could not be captured "
                                                     "as a CUDA graph (") + e.what() +
                                         "); train with trainer.cuda_graph=off");
            }
        }
        graph_ = std::move(graph);
        pool_bytes_ = 0;
        const auto pool = graph_->pool();
        for (const auto& segment : c10::cuda::CUDACachingAllocator::snapshot(pool, /*include_traces=*/false).segments) {
            if (segment.owner_private_pool_id == pool) pool_bytes_ += static_cast<int64_t>(segment.total_size);
        }
    }

    torch::Device device_;
    c10::cuda::CUDAStream side_;
    int64_t warmup_left_;
    std::vector<Batch> slots_{};
    std::unique_ptr<at::cuda::CUDAGraph> graph_{};
    int64_t pool_bytes_ = 0;
};

}  // namespace

std::unique_ptr<CapturedStep> makeCudaGraphStep(torch::Device device, int64_t warmup_steps) {
    return std::make_unique<CudaGraphStep>(device, warmup_steps);
}

}  // namespace hearth
