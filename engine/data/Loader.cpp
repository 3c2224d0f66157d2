#include "engine/data/Loader.h"

#include "engine/config/ByteSize.h"
#include "engine/data/Augment.h"
#include "engine/data/DataError.h"
#include "engine/data/Permutation.h"
#include "engine/monitor/Elapsed.h"
#ifdef HEARTH_WITH_CUDA
#include "engine/data/CudaBatchCopy.h"
#include "engine/monitor/CudaMemory.h"
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <utility>

namespace hearth {
namespace {

using BatchPlan = std::vector<std::vector<int64_t>>;

struct BuiltBatch {
    Batch batch;
    std::exception_ptr error;
};

void checkOptions(const LoaderOptions& o) {
    auto fail = [](const std::string& what) { throw std::invalid_argument("Loader: " + what); };
    if (o.batch_size < 1) fail("batch_size must be at least 1");
    if (o.num_workers < 0) fail("num_workers must not be negative");
    if (o.prefetch_factor < 1) fail("prefetch_factor must be at least 1");
    if (o.world_size < 1) fail("world_size must be at least 1");
    if (o.rank < 0 || o.rank >= o.world_size)
        fail("rank " + std::to_string(o.rank) + " outside 0.." + std::to_string(o.world_size - 1));
}

int64_t batchBytes(const Batch& batch) {
    int64_t bytes = 0;
    for (const auto& field : batch.fields()) bytes += static_cast<int64_t>(field.second.nbytes());
    return bytes;
}

// The room resident data may take on a CUDA device: what is free now, less a tenth of the device
// for the model, its optimizer state and activations. Unlimited elsewhere (the host holds the
// dataset already).
void checkResidentFits(int64_t bytes, int64_t samples, torch::Device device) {
#ifdef HEARTH_WITH_CUDA
    if (!device.is_cuda()) return;
    const CudaMemoryStats memory = cudaMemoryStats(device.index() < 0 ? 0 : device.index());
    const int64_t reserve = memory.total_bytes / 10;
    if (bytes <= memory.free_bytes - reserve) return;
    throw DataError("data.on_device: the training set (" + std::to_string(samples) + " samples) takes " +
                    formatBytes(bytes) + " on " + device.str() + ", but " + formatBytes(memory.free_bytes) +
                    " of its " + formatBytes(memory.total_bytes) + " is free and " + formatBytes(reserve) +
                    " is kept for the model and its activations; turn data.on_device off to stream batches "
                    "from host memory");
#else
    (void)bytes;
    (void)samples;
    (void)device;
#endif
}

}  // namespace

// Workers claim batch numbers in order and file the results by number; next() hands them out
// strictly in that order, so the stream of batches is the same for any number of workers. A
// worker may only claim batch k while k < delivered + num_workers * prefetch_factor, which
// bounds the batches built or being built ahead of the consumer.
struct Loader::Impl {
    std::shared_ptr<const Dataset> dataset;
    LoaderOptions options;
    bool pin = false;
    bool epoch_started = false;
    double last_wait_ms = 0.0;
    std::atomic<int64_t> epoch{0};   // the epoch being built (augmentation seeds)

    // num_workers == 0: the plan and a cursor, used on the caller's thread only.
    BatchPlan plan;
    size_t cursor = 0;

    // num_workers > 0: shared with the worker threads under `mutex`.
    std::mutex mutex;
    std::condition_variable work_cv, result_cv;
    std::vector<std::thread> threads;
    bool shutdown = false;
    uint64_t generation = 0;   // bumped when an epoch is abandoned: stale results are dropped
    std::shared_ptr<const BatchPlan> jobs;
    size_t next_job = 0, next_deliver = 0;
    std::map<size_t, BuiltBatch> results;
    size_t max_in_flight = 1;

#ifdef HEARTH_WITH_CUDA
    std::unique_ptr<CudaBatchCopy> copier;   // copy_to_device with pinned memory on CUDA
#endif
    std::exception_ptr deferred_error;       // building the batch after the one handed out failed

    // resident: the dataset on the device, the epoch's order there, each batch's start in it.
    Batch resident;
    int64_t resident_bytes = 0;
    torch::Tensor epoch_order;
    std::vector<int64_t> batch_offsets;

    BatchPlan epochPlan(int64_t epoch) const;
    BatchPlan bucketedBatches(const std::vector<int64_t>& shard, int64_t epoch) const;
    Batch build(const std::vector<int64_t>& indices) const;
    Batch toDevice(Batch batch) const;
    bool claimable() const {
        return jobs && next_job < jobs->size() && next_job < next_deliver + max_in_flight;
    }
    void workerLoop();
    void startThreads();
    void stopThreads();
    void abandonEpochLocked();
    std::optional<Batch> nextFromWorkers();
    std::optional<Batch> nextHost();
    std::optional<Batch> nextCopiedAhead();
    std::optional<Batch> nextResident();
    void makeResident();
    bool overlaps() const {
#ifdef HEARTH_WITH_CUDA
        return copier != nullptr;
#else
        return false;
#endif
    }
};

BatchPlan Loader::Impl::epochPlan(int64_t epoch) const {
    const int64_t n = dataset->size();
    std::vector<int64_t> order;
    if (options.shuffle) {
        order = seededPermutation(n, options.seed + static_cast<uint64_t>(epoch));
    } else {
        order.resize(static_cast<size_t>(n));
        std::iota(order.begin(), order.end(), int64_t{0});
    }
    // Like PyTorch's DistributedSampler: pad by cycling to a multiple of world_size, then
    // rank r takes positions r, r + world, r + 2·world, ...
    std::vector<int64_t> shard;
    const int64_t world = options.world_size;
    if (world == 1) {
        shard = std::move(order);
    } else if (n > 0) {
        const int64_t per_rank = (n + world - 1) / world;
        for (int64_t i = 0; i < per_rank; ++i) {
            const int64_t position = options.rank + i * world;
            shard.push_back(order[static_cast<size_t>(position % n)]);
        }
    }
    BatchPlan batches;
    const auto bs = static_cast<size_t>(options.batch_size);
    if (options.bucket_by_length) return bucketedBatches(shard, epoch);
    for (size_t start = 0; start < shard.size(); start += bs) {
        const size_t end = std::min(shard.size(), start + bs);
        if (end - start < bs && options.drop_last) break;
        batches.emplace_back(shard.begin() + static_cast<std::ptrdiff_t>(start),
                             shard.begin() + static_cast<std::ptrdiff_t>(end));
    }
    return batches;
}

// Length bucketing (as Hugging Face's group_by_length): windows of kBucketWindow batches of the
// shuffled shard are sorted by sample length (longest first) and cut into batches, then the
// batches of the epoch are shuffled with their own seeded stream. Same seed, same plan.
BatchPlan Loader::Impl::bucketedBatches(const std::vector<int64_t>& shard, int64_t epoch) const {
    constexpr size_t kBucketWindow = 50;
    const auto bs = static_cast<size_t>(options.batch_size);
    BatchPlan batches;
    for (size_t begin = 0; begin < shard.size(); begin += bs * kBucketWindow) {
        const size_t end = std::min(shard.size(), begin + bs * kBucketWindow);
        std::vector<std::pair<int64_t, int64_t>> window;   // (-length, sample): longest first, stable
        window.reserve(end - begin);
        for (size_t i = begin; i < end; ++i) window.emplace_back(-dataset->sampleLength(shard[i]), shard[i]);
        std::stable_sort(window.begin(), window.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (size_t start = 0; start < window.size(); start += bs) {
            const size_t stop = std::min(window.size(), start + bs);
            if (stop - start < bs && options.drop_last) break;
            std::vector<int64_t> batch;
            batch.reserve(stop - start);
            for (size_t i = start; i < stop; ++i) batch.push_back(window[i].second);
            batches.push_back(std::move(batch));
        }
    }
    if (options.shuffle && batches.size() > 1) {
        const auto order = seededPermutation(static_cast<int64_t>(batches.size()),
                                             (options.seed + static_cast<uint64_t>(epoch)) ^ 0xB0C4E7ull);
        BatchPlan shuffled;
        shuffled.reserve(batches.size());
        for (int64_t k : order) shuffled.push_back(std::move(batches[static_cast<size_t>(k)]));
        batches = std::move(shuffled);
    }
    return batches;
}

Batch Loader::Impl::build(const std::vector<int64_t>& indices) const {
    Batch batch = options.raw_inputs ? dataset->getRawBatch(indices) : dataset->getBatch(indices);
    if (options.augment) options.augment->apply(batch, options.seed, epoch.load());
    // Page-locked staging lets the host->device copy run asynchronously.
    return pin ? pinned(batch) : batch;
}

Batch Loader::Impl::toDevice(Batch batch) const {
    if (options.device.is_cpu() || !options.copy_to_device) return batch;
    // Indices stay on the host: they name samples for per-sample predictions.
    return onDevice(batch, options.device, /*non_blocking=*/pin);
}

void Loader::Impl::workerLoop() {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
        work_cv.wait(lock, [this] { return shutdown || claimable(); });
        if (shutdown) return;
        const size_t k = next_job++;
        const uint64_t claimed_in = generation;
        const std::shared_ptr<const BatchPlan> plan_ref = jobs;
        lock.unlock();
        BuiltBatch built;
        try {
            built.batch = build((*plan_ref)[k]);
        } catch (...) {
            built.error = std::current_exception();   // rethrown by next(), in batch order
        }
        lock.lock();
        if (claimed_in == generation) {
            results.emplace(k, std::move(built));
            result_cv.notify_all();
        }
    }
}

void Loader::Impl::startThreads() {
    if (!threads.empty()) return;
    shutdown = false;
    for (int64_t i = 0; i < options.num_workers; ++i) threads.emplace_back([this] { workerLoop(); });
}

void Loader::Impl::stopThreads() {
    {
        std::lock_guard<std::mutex> lock(mutex);
        shutdown = true;
    }
    work_cv.notify_all();
    for (auto& t : threads) t.join();   // a worker mid-batch finishes that batch first
    threads.clear();
    std::lock_guard<std::mutex> lock(mutex);
    shutdown = false;
}

void Loader::Impl::abandonEpochLocked() {
    ++generation;
    jobs.reset();
    results.clear();
    next_job = next_deliver = 0;
}

std::optional<Batch> Loader::Impl::nextFromWorkers() {
    std::unique_lock<std::mutex> lock(mutex);
    if (!jobs || next_deliver >= jobs->size()) {
        last_wait_ms = 0.0;
        return std::nullopt;
    }
    const auto start = std::chrono::steady_clock::now();
    result_cv.wait(lock, [this] { return results.count(next_deliver) > 0; });
    last_wait_ms = millisecondsSince(start);
    BuiltBatch built = std::move(results.at(next_deliver));
    results.erase(next_deliver);
    ++next_deliver;
    const bool epoch_done = next_deliver >= jobs->size();
    if (built.error) abandonEpochLocked();   // the epoch ends at the failed batch
    lock.unlock();
    work_cv.notify_all();
    if ((epoch_done || built.error) && !options.persistent_workers) stopThreads();
    if (built.error) std::rethrow_exception(built.error);
    return std::move(built.batch);
}

// The next host batch (built on the workers, or here without them), and the wait for it.
std::optional<Batch> Loader::Impl::nextHost() {
    if (options.num_workers > 0) return nextFromWorkers();
    if (cursor >= plan.size()) {
        last_wait_ms = 0.0;
        return std::nullopt;
    }
    // Without workers the caller waits for the whole batch to be built.
    const auto start = std::chrono::steady_clock::now();
    Batch batch;
    try {
        batch = build(plan[cursor++]);
    } catch (...) {
        cursor = plan.size();   // as with workers: the epoch ends at the failed batch
        throw;
    }
    last_wait_ms = millisecondsSince(start);
    return batch;
}

// Hands out the batch copied during the last step and issues the next one's copy, so that copy
// runs on the copy stream while this batch's step computes. A failure building the next batch is
// kept for the next call: batches and errors still come in order.
std::optional<Batch> Loader::Impl::nextCopiedAhead() {
#ifdef HEARTH_WITH_CUDA
    if (deferred_error) std::rethrow_exception(std::exchange(deferred_error, nullptr));
    double waited = 0.0;
    if (!copier->pending()) {
        std::optional<Batch> first = nextHost();
        waited += last_wait_ms;
        if (!first) return std::nullopt;
        copier->start(*first);
    }
    Batch ready = copier->take();
    try {
        if (std::optional<Batch> following = nextHost()) copier->start(*following);
        waited += last_wait_ms;
    } catch (...) {
        deferred_error = std::current_exception();
    }
    last_wait_ms = waited;
    return ready;
#else
    return std::nullopt;
#endif
}

void Loader::Impl::makeResident() {
    const int64_t n = dataset->size();
    if (n > 0 && dataset->sampleLength(0) > 0)
        throw std::invalid_argument("Loader: resident data needs fixed-size samples (text is padded per batch)");
    std::vector<int64_t> all(static_cast<size_t>(n));
    std::iota(all.begin(), all.end(), int64_t{0});
    // One sample first: the size check comes before the whole set is gathered.
    const int64_t per_sample = n > 0 ? batchBytes(dataset->getRawBatch({0})) : 0;
    checkResidentFits(per_sample * n, n, options.device);
    const Batch host = dataset->getRawBatch(all);
    resident_bytes = batchBytes(host);
    resident = copiedTo(host, options.device, /*non_blocking=*/false);   // stays raw: normalised per batch
}

// A batch cut from the resident data by the epoch's order (already on the device), augmented
// and normalised there. The host only launches kernels: the wait is that time.
std::optional<Batch> Loader::Impl::nextResident() {
    if (cursor >= plan.size()) {
        last_wait_ms = 0.0;
        return std::nullopt;
    }
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int64_t>& rows = plan[cursor];
    const auto count = static_cast<int64_t>(rows.size());
    const torch::Tensor picks = epoch_order.narrow(0, batch_offsets[cursor], count);
    ++cursor;
    Batch batch = resident.map([&](const std::string&, const torch::Tensor& t) { return t.index_select(0, picks); });
    batch.indices = torch::tensor(rows, torch::kInt64).reshape({count});
    if (options.augment) options.augment->apply(batch, options.seed, epoch.load());
    batch = normalized(std::move(batch));
    last_wait_ms = millisecondsSince(start);
    return batch;
}

Loader::Loader(std::shared_ptr<const Dataset> dataset, LoaderOptions options)
    : impl_(std::make_unique<Impl>()) {
    if (!dataset) throw std::invalid_argument("Loader: no dataset");
    checkOptions(options);
    impl_->dataset = std::move(dataset);
    impl_->options = std::move(options);
    Impl& d = *impl_;
    if (d.options.resident) {
        d.makeResident();
        return;
    }
    // pin_memory() needs a CUDA build and device; CPU-only LibTorch throws on it.
    d.pin = d.options.pin_memory && d.options.device.is_cuda();
    d.max_in_flight = static_cast<size_t>(d.options.num_workers * d.options.prefetch_factor);
#ifdef HEARTH_WITH_CUDA
    if (d.pin && d.options.copy_to_device)
        d.copier = std::make_unique<CudaBatchCopy>(d.options.device.index() < 0 ? 0 : d.options.device.index());
#endif
}

Loader::~Loader() {
    if (!impl_->threads.empty()) {
        {
            std::lock_guard<std::mutex> lock(impl_->mutex);
            impl_->abandonEpochLocked();
        }
        impl_->stopThreads();
    }
}

int64_t Loader::samplesPerEpoch() const {
    const int64_t n = impl_->dataset->size();
    const int64_t world = impl_->options.world_size;
    return world == 1 ? n : (n + world - 1) / world;
}

int64_t Loader::batchesPerEpoch() const {
    const int64_t samples = samplesPerEpoch();
    const int64_t bs = impl_->options.batch_size;
    return impl_->options.drop_last ? samples / bs : (samples + bs - 1) / bs;
}

void Loader::startEpoch(int64_t epoch, int64_t first_batch) {
    Impl& d = *impl_;
    BatchPlan plan = d.epochPlan(epoch);
    // The plan is the same for every start; a resumed epoch drops the batches it already had.
    const auto skip = static_cast<size_t>(std::clamp<int64_t>(first_batch, 0, static_cast<int64_t>(plan.size())));
    plan.erase(plan.begin(), plan.begin() + static_cast<std::ptrdiff_t>(skip));
    d.epoch = epoch;
    d.epoch_started = true;
    d.last_wait_ms = 0.0;
    d.deferred_error = nullptr;
#ifdef HEARTH_WITH_CUDA
    if (d.copier) d.copier->drop();
#endif
    if (d.options.resident) {
        // The epoch's order goes to the device once; each batch is a slice of it.
        std::vector<int64_t> order;
        d.batch_offsets.clear();
        for (const auto& rows : plan) {
            d.batch_offsets.push_back(static_cast<int64_t>(order.size()));
            order.insert(order.end(), rows.begin(), rows.end());
        }
        d.epoch_order = toDeviceAsync(torch::tensor(order, torch::kInt64).reshape({static_cast<int64_t>(order.size())}),
                                      d.options.device);
    }
    if (d.options.num_workers == 0 || d.options.resident) {
        d.plan = std::move(plan);
        d.cursor = 0;
        return;
    }
    {
        std::lock_guard<std::mutex> lock(d.mutex);
        d.abandonEpochLocked();
    }
    if (!d.options.persistent_workers) d.stopThreads();   // workers of an unfinished epoch
    if (plan.empty()) return;
    d.startThreads();
    {
        std::lock_guard<std::mutex> lock(d.mutex);
        d.jobs = std::make_shared<const BatchPlan>(std::move(plan));
    }
    d.work_cv.notify_all();
}

std::optional<Batch> Loader::next() {
    Impl& d = *impl_;
    if (!d.epoch_started) throw std::logic_error("Loader::next() called before startEpoch()");
    if (d.options.resident) return d.nextResident();
    if (d.overlaps()) return d.nextCopiedAhead();
    std::optional<Batch> batch = d.nextHost();
    if (!batch) return std::nullopt;
    return d.toDevice(std::move(*batch));
}

double Loader::lastWaitMs() const { return impl_->last_wait_ms; }
bool Loader::pinsMemory() const { return impl_->pin; }
bool Loader::overlapsCopies() const { return impl_->overlaps(); }
int64_t Loader::residentBytes() const { return impl_->resident_bytes; }
const LoaderOptions& Loader::options() const { return impl_->options; }

}  // namespace hearth
