#pragma once
// Loader: turns a Dataset into batches for one epoch at a time: seeded shuffling per epoch,
// sharding per rank, worker threads with bounded prefetch (num_workers 0 = on the caller's
// thread), pinned staging and non-blocking copies on CUDA (on a side stream, one batch ahead),
// images kept raw until the device, or the whole dataset resident on the device; and the time
// each batch was waited for. Every mode gives the same samples in the same order.

#include "engine/data/Dataset.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace hearth {

class ImageAugment;

struct LoaderOptions {
    int64_t batch_size = 64;
    bool shuffle = true;
    bool drop_last = false;
    uint64_t seed = 0;                // epoch e shuffles with seed + e
    int64_t num_workers = 0;
    int64_t prefetch_factor = 2;      // batches in flight per worker
    bool persistent_workers = false;  // keep worker threads between epochs
    bool pin_memory = false;          // only honoured when device is CUDA
    torch::Device device = torch::kCPU;
    // false: next() hands out host batches (pinned when pin_memory is in effect) and the caller
    // copies them. true: batches on `device`; on CUDA with pinned memory the copy of the next
    // batch is issued on a copy stream before next() returns, so it overlaps the step.
    bool copy_to_device = true;
    // Images stay uint8 on the host (Dataset::getRawBatch: a quarter of the bytes to build, pin
    // and copy) and are normalised where they are copied to (Batch::raw_input, normalized()).
    bool raw_inputs = false;
    // data.on_device: the whole dataset copied to `device` once (raw), each batch cut there by
    // index, augmented and normalised there; no workers, no per-batch copies. Fixed-size samples
    // only. Throws DataError, with the sizes, where it does not fit the device's free memory.
    bool resident = false;
    // Text: within windows of 50 batches of the shuffled order, sort samples by length before
    // cutting batches, then shuffle the batches (little padding, order still random).
    bool bucket_by_length = false;
    int64_t rank = 0;                 // this rank's shard of every epoch
    int64_t world_size = 1;
    // Training images: random crop / flip per sample as each batch is built (on the workers),
    // seeded by `seed`, the epoch and the sample. Null: batches as the dataset gives them.
    std::shared_ptr<const ImageAugment> augment;
};

class Loader {
public:
    Loader(std::shared_ptr<const Dataset> dataset, LoaderOptions options);
    ~Loader();
    Loader(const Loader&) = delete;
    Loader& operator=(const Loader&) = delete;

    int64_t batchesPerEpoch() const;
    int64_t samplesPerEpoch() const;   // this rank's share
    // (Re)starts iteration at batch `first_batch` of the epoch's plan (a resumed epoch skips the
    // batches it already trained, without building them); stops any unfinished epoch.
    void startEpoch(int64_t epoch, int64_t first_batch = 0);
    // Next batch on options.device, or nullopt at the end of the epoch. Rethrows worker errors.
    std::optional<Batch> next();
    double lastWaitMs() const;         // how long the last next() blocked for data
    bool pinsMemory() const;           // pin_memory is in effect (CUDA device)
    bool overlapsCopies() const;       // next batch copied on a CUDA copy stream during the step
    int64_t residentBytes() const;     // bytes held on the device (resident), else 0
    const LoaderOptions& options() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hearth
