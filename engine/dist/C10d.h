#pragma once
// The engine's window onto PyTorch's distributed core (c10d): a process group (Gloo, NCCL) joined
// through a TCPStore, its collectives, and the gradient Reducer under Python's
// DistributedDataParallel. engine/dist/C10d.cpp is the only unit that includes c10d headers; the
// differences between LibTorch 1.13 and 2.x live there.

#include "engine/dist/CommStats.h"
#include "engine/dist/Rendezvous.h"
#include "engine/dist/StoreServer.h"

#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace hearth::dist {

struct GroupOptions {
    std::string backend = "gloo";                   // gloo | nccl
    std::chrono::milliseconds timeout{std::chrono::seconds(60)};
    int cuda_device = -1;                           // this rank's GPU (made current before NCCL starts)
};

// One process's membership of a process group.
class ProcessGroup {
public:
    // Rendezvous through the TCPStore `env` names (rank 0 hosts it unless an agent does), then
    // builds the group. Throws std::runtime_error naming the address and the cause.
    static std::shared_ptr<ProcessGroup> join(const DistEnv& env, const GroupOptions& options);
    ~ProcessGroup();
    ProcessGroup(const ProcessGroup&) = delete;
    ProcessGroup& operator=(const ProcessGroup&) = delete;

    int64_t rank() const;
    int64_t worldSize() const;
    const std::string& backend() const;
    // The blocking collectives below launch nothing in a world of one (the sum over one rank, its
    // broadcast and its gather are its own values): a one-process job (a one-GPU node, the
    // strategy's world-of-one check) pays no thread handoff nor host round trip for them.
    // In place, summed over ranks.
    void allreduceSum(std::vector<torch::Tensor>& tensors);
    // In place: every rank ends with `root`'s values (coalesced: one collective per dtype).
    void broadcast(std::vector<torch::Tensor>& tensors, int64_t root = 0);
    // Every rank's `tensor` (same shape on every rank), in rank order.
    std::vector<torch::Tensor> allgather(const torch::Tensor& tensor);
    // Every rank's `slice` (same size on every rank) end to end, in rank order.
    torch::Tensor allgatherFlat(const torch::Tensor& slice);
    // A collective in flight while the caller computes (on Gloo's worker threads, on NCCL's
    // stream); wait() returns its result. Its input must not change until then. Destroyed unwaited,
    // it waits for the collective (every rank started it; its buffers must outlive it).
    class Pending {
    public:
        ~Pending();
        Pending(const Pending&) = delete;
        Pending& operator=(const Pending&) = delete;
        torch::Tensor wait();

    private:
        friend class ProcessGroup;
        struct State;
        explicit Pending(std::unique_ptr<State> state);
        std::unique_ptr<State> state_;
    };
    // allgatherFlat, started now and finished by wait().
    std::unique_ptr<Pending> allgatherFlatAsync(const torch::Tensor& slice);
    // This rank's slice of the sum over ranks of `flat` (world x slice elements): one
    // reduce-scatter on NCCL, one reduce per owner on Gloo. `flat` is scratch afterwards.
    std::unique_ptr<Pending> reduceScatterSumAsync(const torch::Tensor& flat);
    // The sum over ranks of `tensor` (same shape on every rank), which wait() returns on `root`
    // (elsewhere: scratch). `tensor` is scratch afterwards.
    std::unique_ptr<Pending> reduceSumAsync(const torch::Tensor& tensor, int64_t root);
    // Point to point (pipeline stages): `tensor` to rank `to`, started now (wait() returns it), and
    // the tensor rank `from` sends with the same `tag`, received into `into` (its shape and dtype).
    std::unique_ptr<Pending> sendAsync(const torch::Tensor& tensor, int64_t to, int tag);
    void recv(torch::Tensor& into, int64_t from, int tag);
    void barrier();

    struct Impl;
    Impl& impl() { return *impl_; }

private:
    explicit ProcessGroup(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

struct ReducerOptions {
    double bucket_cap_mb = 25.0;
    bool find_unused_parameters = false;
    bool gradient_as_bucket_view = false;
};

// c10d::Reducer driven the way Python's DDP drives it: identical starting weights (broadcast
// from rank 0), gradient buckets allreduced (averaged) during backward.
class GradientReducer {
public:
    GradientReducer(ProcessGroup& group, std::vector<torch::Tensor> parameters, const ReducerOptions& options);
    ~GradientReducer();
    GradientReducer(const GradientReducer&) = delete;
    GradientReducer& operator=(const GradientReducer&) = delete;

    // Before every forward that will be followed by a synchronised backward.
    void prepareForward();
    // Before backward: sync = false skips the allreduce (accumulation micro-steps, no_sync).
    void prepareBackward(const torch::Tensor& loss, bool sync);
    // Measured on every synchronised step (the Reducer's own timers; Python samples 1 in 100).
    CommStats commStats() const;
    // The buckets' flat tensors (the gradients' views point into them with gradient_as_bucket_view).
    std::vector<torch::Tensor> buckets() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::dist
