#pragma once
// CudaBatchCopy: host->device copies of batches on a side stream, one batch ahead, so the next
// batch's copy (and its normalisation) runs while the current step computes. Implemented in
// CudaBatchCopy.cpp, compiled only when HEARTH_WITH_CUDA; callers guard their use with the same
// macro. Batches must come from pinned memory for the copy to be asynchronous.

#include "engine/data/Batch.h"

#include <cstdint>
#include <memory>

namespace hearth {

class CudaBatchCopy {
public:
    explicit CudaBatchCopy(int64_t device);
    ~CudaBatchCopy();
    CudaBatchCopy(const CudaBatchCopy&) = delete;
    CudaBatchCopy& operator=(const CudaBatchCopy&) = delete;

    // Issues the copy of a (pinned) host batch and its pending normalisation on the copy
    // stream and returns at once. Replaces a batch started and never taken.
    void start(const Batch& host);
    bool pending() const;
    // The batch started last, for the current stream: the stream waits for the copy on the
    // device (the host does not), and the caching allocator learns the tensors are used there.
    Batch take();
    void drop();   // forgets a started batch (a new epoch)

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hearth
