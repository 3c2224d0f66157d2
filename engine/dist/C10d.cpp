// The one translation unit that includes c10d. LibTorch 1.13 (Debian, CPU) and 2.x (the PyTorch
// wheel, CUDA) differ in four places, each marked HEARTH_TORCH_VERSION below:
//  - 1.13's ProcessGroupGloo *is* a c10d::ProcessGroup; 2.x's backends derive from c10d::Backend
//    and a c10d::ProcessGroup routes each collective to the backend of its tensors' device;
//  - the Reducer's constructor (2.x drops per_bucket_size_limits' position, adds two flags);
//  - NCCL exists only in the wheel (USE_C10D_NCCL, set by the torch_cuda CMake target);
//  - the TCPStore wire protocol: 1.13's client cannot talk to a 2.x store (torchrun 2.x's agent
//    store), so a 1.13 build asks a launcher's store which protocol it speaks before joining it.
#include "engine/dist/C10d.h"

#include "engine/TorchCompat.h"
#include "engine/dist/StoreProbe.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/csrc/distributed/c10d/logger.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>
#include <torch/csrc/utils/tensor_flatten.h>

#include <chrono>
#include <functional>
#include <thread>

#if defined(USE_C10D_NCCL) && HEARTH_TORCH_VERSION >= 200
#define HEARTH_WITH_NCCL 1
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <algorithm>
#include <stdexcept>

namespace hearth::dist {

namespace {

#if HEARTH_TORCH_VERSION >= 200
using Backend = c10d::Backend;
#else
using Backend = c10d::ProcessGroup;
#endif

c10::intrusive_ptr<Backend> makeGloo(const c10::intrusive_ptr<c10d::Store>& store, const DistEnv& env,
                                     std::chrono::milliseconds timeout) {
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    // One host: the loopback device (createDefaultDevice may resolve to 127.0.1.1 on Debian).
    options->devices.push_back(env.master_addr == "127.0.0.1" || env.master_addr == "localhost"
                                   ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                   : c10d::ProcessGroupGloo::createDefaultDevice());
    options->threads = 1;
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, static_cast<int>(env.rank),
                                                       static_cast<int>(env.world_size), options);
}

#ifdef HEARTH_WITH_NCCL
c10::intrusive_ptr<Backend> makeNccl(const c10::intrusive_ptr<c10d::Store>& store, const DistEnv& env,
                                     const GroupOptions& group) {
    if (group.cuda_device >= 0) c10::cuda::set_device(static_cast<c10::DeviceIndex>(group.cuda_device));
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = group.timeout;
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, static_cast<int>(env.rank),
                                                       static_cast<int>(env.world_size), options);
}
#endif

#if HEARTH_TORCH_VERSION < 200
// A launcher's store (torchrun's agent, Hearth's own launcher) must speak this client's protocol.
// Against torchrun 2.x's libuv store, Gloo's rendezvous through 1.13's client sends SET (0 in
// 1.x), which the store takes for a VALIDATE (0 in 2.x) with a wrong magic number and leaves
// unanswered; the WAIT that follows gets no STOP_WAITING when it arrived in the same read (the
// rank blocks in recv until the store timeout, 300 s by default, silently) and a closed
// connection when it came later ("Broken pipe"). Asked first on a socket of our own, a mismatch
// fails in seconds and says what to launch instead. Unreachable is left to c10d's connect, which
// retries and reports as before.
void requireStoreThisClientSpeaks(const DistEnv& env, std::chrono::milliseconds timeout) {
    const auto wait = std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(5));
    const auto probe = probeStoreProtocol(env.master_addr, static_cast<int>(env.master_port), wait);
    if (probe.protocol == StoreProtocol::LibTorch1 || probe.protocol == StoreProtocol::Unreachable) return;
    const std::string version = std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
    const std::string why =
        probe.protocol == StoreProtocol::LibTorch2
            ? "the store speaks the protocol of PyTorch 2.x (torchrun 2.x hosts it), which LibTorch " + version +
                  "'s store client does not understand"
            : "the store does not speak LibTorch " + version + "'s store protocol (torchrun 2.x hosts such a store)";
    throw LaunchError("hearth-cli (LibTorch " + version + ") cannot talk to its launcher's rendezvous store at " +
                      env.master_addr + ":" + std::to_string(env.master_port) + ": " + why + "; asked as LibTorch " +
                      version + " asks, it " + probe.detail + ". Launch this build with torchrun from PyTorch " +
                      version + " or with hearth-cli's own launcher (hearth-cli run --set trainer.devices=N, "
                      "without torchrun), or launch the cuda build of Hearth (LibTorch 2.11) with PyTorch 2.11's "
                      "torchrun; with torchrun 2.x, TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 also works (rank 0 then "
                      "hosts the store).");
}
#endif

// A failed collective's message, with the fix where the cause is a known misconfiguration.
std::string explain(const std::string& what) {
    if (what.find("Duplicate GPU") != std::string::npos) {
        return what + " (NCCL runs one rank per GPU: use trainer.ddp.backend=gloo to put several ranks on one GPU)";
    }
    return what;
}

}  // namespace

struct ProcessGroup::Impl {
    c10::intrusive_ptr<c10d::Store> store;
    // 1.13: the Gloo group itself. 2.x: the wrapper that routes CPU tensors to Gloo and CUDA
    // tensors to NCCL (or Gloo), as Python's init_process_group("cpu:gloo,cuda:nccl") does.
    c10::intrusive_ptr<c10d::ProcessGroup> group;
    std::string backend;
    int64_t rank = 0;
    int64_t world = 1;

    ~Impl() {
#if HEARTH_TORCH_VERSION >= 200
        // 2.x: NCCL's watchdog threads must be stopped before the group goes (Python's
        // destroy_process_group does the same); a peer already gone must not turn into a crash.
        if (group && backend == "nccl") {
            try {
                group->shutdown();
            } catch (const std::exception&) {
            }
        }
#endif
    }

    void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) const {
        try {
            work->wait();
        } catch (const std::exception& e) {
            throw std::runtime_error(std::string(what) + " across " + std::to_string(world) +
                                     " processes failed (a peer stopped or timed out): " + explain(e.what()));
        }
    }
    // As Python's DDP syncs its parameters and buffers: flattened into one collective per dtype
    // and device (in parts of up to 250 MiB), not one per tensor, each of which costs a launch and
    // a wait; only the root flattens, the others receive into an empty buffer. On the host the
    // call returns once Gloo's worker thread has let go of the finished work and with it the flat
    // buffer (it holds both a moment after waking the waiter): the memory breakdown's baseline,
    // read at fit start just after the Reducer's broadcast, caught a whole parameter set there in
    // some runs. (NCCL's watchdog keeps its works until it next polls; device memory
    // is ordered by the stream and no baseline reads it.)
    void broadcastCoalesced(std::vector<at::Tensor>& tensors, int64_t root, const char* what) const {
        at::NoGradGuard no_grad;
        for (auto& part : torch::utils::take_tensors(tensors, size_t{250} * 1024 * 1024)) {
            int64_t numel = 0;
            for (const auto& t : part.tensors) numel += t.numel();
            std::vector<at::Tensor> flat{rank == root ? torch::utils::flatten_dense_tensors(part.tensors)
                                                      : at::empty({numel}, part.tensors.front().options())};
            c10d::BroadcastOptions options;
            options.rootRank = root;
            auto work = group->broadcast(flat, options);
            wait(work, what);
            if (rank != root) {
                const auto values = torch::utils::unflatten_dense_tensors(flat.front(), part.tensors);
                for (size_t i = 0; i < values.size(); ++i) part.tensors[i].copy_(values[i]);
            }
            if (flat.front().is_cuda()) continue;
            flat.clear();
            const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
            while (work.use_count() > 1 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
        }
    }
    // Gloo has no reduce for CUDA tensors in every version: stage those through the host.
    bool staged(const torch::Tensor& t) const { return backend == "gloo" && t.is_cuda(); }
};

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProcessGroup::~ProcessGroup() = default;

std::shared_ptr<ProcessGroup> ProcessGroup::join(const DistEnv& env, const GroupOptions& options) {
    auto impl = std::make_unique<Impl>();
    impl->rank = env.rank;
    impl->world = env.world_size;
    impl->backend = options.backend;
    const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
#if HEARTH_TORCH_VERSION < 200
    if (env.agent_store) requireStoreThisClientSpeaks(env, options.timeout);
#endif
    try {
        c10d::TCPStoreOptions so;
        so.port = static_cast<std::uint16_t>(env.master_port);
        so.isServer = env.rank == 0 && !env.agent_store;
        so.numWorkers = env.agent_store ? c10::nullopt : c10::optional<std::size_t>(env.world_size);
        so.waitWorkers = false;
        so.timeout = options.timeout;
        c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
        if (env.agent_store) {
            store = c10::make_intrusive<c10d::PrefixStore>("/worker/attempt_" + std::to_string(env.restart_count),
                                                           store);
        }
        impl->store = store;
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot reach the rendezvous store at " + where + ": " + e.what());
    }
#ifdef HEARTH_WITH_NCCL
    const bool known = options.backend == "gloo" || options.backend == "nccl";
#else
    const bool known = options.backend == "gloo";
#endif
    if (!known) {
        throw std::runtime_error("backend '" + options.backend + "' is not in this build of Hearth (it has gloo" +
#ifdef HEARTH_WITH_NCCL
                                 std::string(" and nccl)"));
#else
                                 std::string("; nccl comes with the CUDA build)"));
#endif
    }
    try {
#if HEARTH_TORCH_VERSION >= 200
        using Type = c10d::ProcessGroup::BackendType;
        auto group = c10::make_intrusive<c10d::ProcessGroup>(impl->store, static_cast<int>(env.rank),
                                                             static_cast<int>(env.world_size));
        // Each backend under its own key prefix, as Python does, so their rendezvous keys never meet.
        auto gloo = makeGloo(c10::make_intrusive<c10d::PrefixStore>("cpu/", impl->store), env, options.timeout);
        group->setBackend(c10::DeviceType::CPU, Type::GLOO, gloo);
#ifdef HEARTH_WITH_NCCL
        if (options.backend == "nccl") {
            auto nccl = makeNccl(c10::make_intrusive<c10d::PrefixStore>("cuda/", impl->store), env, options);
            group->setBackend(c10::DeviceType::CUDA, Type::NCCL, nccl);
            group->setDefaultBackend(Type::NCCL);
        } else {
            group->setBackend(c10::DeviceType::CUDA, Type::GLOO, gloo);
            group->setDefaultBackend(Type::GLOO);
        }
#else
        group->setDefaultBackend(Type::GLOO);
#endif
        group->setGroupName("hearth");
        impl->group = group;
#else
        impl->group = makeGloo(impl->store, env, options.timeout);
#endif
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot form the " + options.backend + " process group of " +
                                 std::to_string(env.world_size) + " processes through " + where + ": " +
                                 explain(e.what()));
    }
    return std::shared_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));
}

struct StoreServer::Impl {
    c10::intrusive_ptr<c10d::TCPStore> store;
};

StoreServer::StoreServer(std::chrono::milliseconds timeout, int port) : impl_(std::make_unique<Impl>()) {
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(port);
    so.isServer = true;
    so.numWorkers = c10::nullopt;  // the ranks join as clients; nobody waits for a count
    so.waitWorkers = false;
    so.timeout = timeout;
    try {
        impl_->store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", so);
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot host the rendezvous store on 127.0.0.1: " + std::string(e.what()));
    }
}

StoreServer::~StoreServer() = default;

int StoreServer::port() const { return impl_->store->getPort(); }

int64_t ProcessGroup::rank() const { return impl_->rank; }
int64_t ProcessGroup::worldSize() const { return impl_->world; }
const std::string& ProcessGroup::backend() const { return impl_->backend; }

void ProcessGroup::allreduceSum(std::vector<torch::Tensor>& tensors) {
    if (impl_->world == 1) return;
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::SUM;
    impl_->wait(impl_->group->allreduce(tensors, o), "allreduce");
}

void ProcessGroup::broadcast(std::vector<torch::Tensor>& tensors, int64_t root) {
    if (tensors.empty() || impl_->world == 1) return;
    impl_->broadcastCoalesced(tensors, root, "broadcast");
}

std::vector<torch::Tensor> ProcessGroup::allgather(const torch::Tensor& tensor) {
    if (impl_->world == 1) return {tensor.clone()};   // a copy, as the collective's output is
    std::vector<std::vector<torch::Tensor>> out(1);
    for (int64_t r = 0; r < impl_->world; ++r) out[0].push_back(torch::empty_like(tensor));
    std::vector<torch::Tensor> in{tensor.contiguous()};
    impl_->wait(impl_->group->allgather(out, in), "allgather");
    return out[0];
}

struct ProcessGroup::Pending::State {
    const ProcessGroup::Impl* group = nullptr;
    const char* what = "";
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    std::vector<torch::Tensor> in;                  // kept alive while the collective runs
    std::vector<std::vector<torch::Tensor>> parts;  // Gloo's allgather: one tensor per rank
    std::function<torch::Tensor()> result;          // read once every work is done
    bool done = false;
};

ProcessGroup::Pending::Pending(std::unique_ptr<State> state) : state_(std::move(state)) {}

ProcessGroup::Pending::~Pending() {
    if (state_->done) return;
    for (auto& work : state_->works) {
        try {
            work->wait();
        } catch (const std::exception&) {
            // The run is failing already (this is an unwinding scope); the cause was reported there.
        }
    }
}

torch::Tensor ProcessGroup::Pending::wait() {
    state_->done = true;
    for (auto& work : state_->works) state_->group->wait(work, state_->what);
    return state_->result();
}

std::unique_ptr<ProcessGroup::Pending> ProcessGroup::reduceScatterSumAsync(const torch::Tensor& flat) {
    auto state = std::make_unique<Pending::State>();
    state->group = impl_.get();
    const int64_t slice = flat.numel() / impl_->world;
    if (impl_->backend == "nccl") {
        state->what = "reduce-scatter";
        auto mine = torch::empty({slice}, flat.options());
        state->in = {flat};
        c10d::ReduceScatterOptions o;
        o.reduceOp = c10d::ReduceOp::SUM;
        state->works.push_back(impl_->group->_reduce_scatter_base(mine, state->in[0], o));
        state->result = [mine] { return mine; };
    } else {
        // Gloo (1.13 has no reduce-scatter): the sum of each slice onto its owner, one reduce per owner.
        state->what = "reduce";
        auto host = impl_->staged(flat) ? flat.to(torch::kCPU) : flat.contiguous();
        state->in = {host};
        for (int64_t owner = 0; owner < impl_->world; ++owner) {
            std::vector<torch::Tensor> one{host.narrow(0, owner * slice, slice)};
            c10d::ReduceOptions o;
            o.reduceOp = c10d::ReduceOp::SUM;
            o.rootRank = owner;
            state->works.push_back(impl_->group->reduce(one, o));
        }
        state->result = [host, slice, rank = impl_->rank, device = flat.device()] {
            return host.narrow(0, rank * slice, slice).to(device);
        };
    }
    return std::unique_ptr<Pending>(new Pending(std::move(state)));
}

std::unique_ptr<ProcessGroup::Pending> ProcessGroup::reduceSumAsync(const torch::Tensor& tensor, int64_t root) {
    auto state = std::make_unique<Pending::State>();
    state->group = impl_.get();
    state->what = "reduce";
    auto buffer = impl_->staged(tensor) ? tensor.to(torch::kCPU) : tensor.contiguous();
    state->in = {buffer};
    c10d::ReduceOptions o;
    o.reduceOp = c10d::ReduceOp::SUM;
    o.rootRank = root;
    state->works.push_back(impl_->group->reduce(state->in, o));
    state->result = [buffer, device = tensor.device()] { return buffer.to(device); };
    return std::unique_ptr<Pending>(new Pending(std::move(state)));
}

std::unique_ptr<ProcessGroup::Pending> ProcessGroup::allgatherFlatAsync(const torch::Tensor& slice) {
    auto state = std::make_unique<Pending::State>();
    state->group = impl_.get();
    state->what = "all-gather";
    state->in = {slice.contiguous()};
    if (impl_->backend == "nccl") {
        auto out = torch::empty({slice.numel() * impl_->world}, slice.options());
        state->works.push_back(impl_->group->_allgather_base(out, state->in[0]));
        state->result = [out] { return out; };
    } else {
        // Each rank's part lands in its place of one flat tensor: no concatenation afterwards
        // (a second full-size copy of what is gathered).
        auto out = torch::empty({slice.numel() * impl_->world}, state->in[0].options());
        state->parts.resize(1);
        for (int64_t r = 0; r < impl_->world; ++r) state->parts[0].push_back(out.narrow(0, r * slice.numel(), slice.numel()));
        state->works.push_back(impl_->group->allgather(state->parts, state->in));
        state->result = [out] { return out; };
    }
    return std::unique_ptr<Pending>(new Pending(std::move(state)));
}

std::unique_ptr<ProcessGroup::Pending> ProcessGroup::sendAsync(const torch::Tensor& tensor, int64_t to, int tag) {
    auto state = std::make_unique<Pending::State>();
    state->group = impl_.get();
    state->what = "send";
    // Gloo sends host tensors; NCCL device tensors as they are.
    state->in = {impl_->staged(tensor) ? tensor.to(torch::kCPU) : tensor.contiguous()};
    state->works.push_back(impl_->group->send(state->in, static_cast<int>(to), tag));
    state->result = [sent = state->in[0]] { return sent; };
    return std::unique_ptr<Pending>(new Pending(std::move(state)));
}

void ProcessGroup::recv(torch::Tensor& into, int64_t from, int tag) {
    std::vector<torch::Tensor> buffer{impl_->staged(into) ? torch::empty(into.sizes(), into.options().device(torch::kCPU))
                                                          : into.contiguous()};
    impl_->wait(impl_->group->recv(buffer, static_cast<int>(from), tag), "receive");
    if (!buffer[0].is_same(into)) into.copy_(buffer[0]);
}

torch::Tensor ProcessGroup::allgatherFlat(const torch::Tensor& slice) {
    return allgatherFlatAsync(slice)->wait();
}

void ProcessGroup::barrier() {
    if (impl_->world == 1) return;
    impl_->wait(impl_->group->barrier(), "barrier");
}

namespace {

// What DDP does with a gradient bucket: average it across the group. Registered as the Reducer's
// communication hook, it replaces the Reducer's default, which divides every parameter's gradient
// by the world size as it becomes ready (a kernel per parameter on every step) and then sums each
// bucket: here a bucket is averaged in one collective, NCCL's own average where the bucket is on a
// GPU with NCCL; elsewhere the division first (c10d's built-in allreduce hook does the same: no
// float16 overflow in the sum) and then the sum.
class AverageBucketHook final : public c10d::CommHookInterface {
public:
    AverageBucketHook(c10::intrusive_ptr<c10d::ProcessGroup> group, bool nccl)
        : group_(std::move(group)), nccl_(nccl) {}

    c10::intrusive_ptr<c10::ivalue::Future> runHook(c10d::GradBucket& bucket) override {
        at::Tensor& buffer = bucket.getBufferRef();
        const int world = group_->getSize();   // > 1: a world of one builds no reducer (DdpStrategy)
        std::vector<at::Tensor> tensors{buffer};
        c10d::AllreduceOptions options;
        if (nccl_ && buffer.is_cuda()) {
            options.reduceOp = c10d::ReduceOp::AVG;
        } else {
            buffer.div_(world);
            options.reduceOp = c10d::ReduceOp::SUM;
        }
        return group_->allreduce(tensors, options)->getFuture();
    }

    at::Tensor parseHookResult(const c10::IValue& result) override {
        if (result.isTensor()) return result.toTensor();
        return result.toTensorVector().at(0);
    }

private:
    c10::intrusive_ptr<c10d::ProcessGroup> group_;
    bool nccl_;
};

}  // namespace

struct GradientReducer::Impl {
    std::shared_ptr<c10d::Reducer> reducer;
    std::shared_ptr<c10d::Logger> logger;  // destroyed before the reducer (members in reverse)
    int64_t synced_steps = 0;
    ~Impl() {
        logger.reset();
        reducer.reset();
    }
};

GradientReducer::GradientReducer(ProcessGroup& group, std::vector<torch::Tensor> parameters,
                                 const ReducerOptions& options)
    : impl_(std::make_unique<Impl>()) {
    auto& pg = group.impl().group;
    c10d::verify_params_across_processes(pg, parameters, c10::nullopt);
    // Identical starting weights: rank 0's.
    {
        torch::NoGradGuard no_grad;
        std::vector<at::Tensor> detached;
        detached.reserve(parameters.size());
        for (const auto& p : parameters) detached.push_back(p.detach());
        group.impl().broadcastCoalesced(detached, 0, "the starting weights' broadcast");
    }
    const auto cap = static_cast<int64_t>(options.bucket_cap_mb * 1024 * 1024);
    const std::vector<size_t> limits{static_cast<size_t>(1024 * 1024), static_cast<size_t>(cap)};
    const std::vector<bool> sparse(parameters.size(), false);
    auto [buckets, per_bucket_limits] = c10d::compute_bucket_assignment_by_size(parameters, limits, sparse);
    std::reverse(buckets.begin(), buckets.end());
    std::reverse(per_bucket_limits.begin(), per_bucket_limits.end());
#if HEARTH_TORCH_VERSION >= 200
    // 2.x takes no per-bucket limits (Python's binding drops them); an empty cap list keeps the
    // Reducer's own rule when it rebuilds buckets in execution order: first bucket 1 MiB, then cap.
    impl_->reducer = std::make_shared<c10d::Reducer>(std::move(parameters), std::move(buckets), pg, sparse, cap,
                                                     options.find_unused_parameters,
                                                     options.gradient_as_bucket_view,
                                                     std::unordered_map<size_t, std::string>{},
                                                     static_cast<int64_t>(1024 * 1024),
                                                     /*skip_all_reduce_unused_params=*/false,
                                                     /*use_python_reducer=*/false,
                                                     /*bucket_bytes_cap_list=*/std::vector<int64_t>{});
#else
    impl_->reducer = std::make_shared<c10d::Reducer>(std::move(parameters), std::move(buckets),
                                                     std::move(per_bucket_limits), pg, sparse, cap,
                                                     options.find_unused_parameters,
                                                     options.gradient_as_bucket_view,
                                                     std::unordered_map<size_t, std::string>{},
                                                     static_cast<int64_t>(1024 * 1024));
#endif
    impl_->reducer->register_comm_hook(
        std::make_unique<AverageBucketHook>(pg, group.impl().backend == "nccl"));
    impl_->logger = std::make_shared<c10d::Logger>(impl_->reducer);
    impl_->reducer->set_logger(impl_->logger);
    // Python's DDP rate: the first 10 steps and then 1 in 100 are timed. Each timed step reads
    // five CUDA events back (host syncs), so timing every step would stall the GPU's queue; the
    // averages over the sampled steps still show where the step went.
    impl_->reducer->set_ddp_runtime_logging_sample_rate(100);
}

GradientReducer::~GradientReducer() = default;

void GradientReducer::prepareForward() {
    // As Python's DDP forward: record the previous step's timings, then start this one.
    impl_->logger->set_runtime_stats_and_log();
    impl_->reducer->rebuild_buckets();
    impl_->reducer->prepare_for_forward();
}

std::vector<torch::Tensor> GradientReducer::buckets() const {
    std::vector<torch::Tensor> out;
    for (const auto& bucket : impl_->reducer->get_grad_buckets(/*return_zero_tensors=*/false))
        out.push_back(bucket.getBuffer());
    return out;
}

CommStats GradientReducer::commStats() const {
    const auto data = impl_->logger->get_ddp_logging_data();
    auto ms = [&](const char* key) {
        const auto it = data.ints_map.find(key);
        return it == data.ints_map.end() ? 0.0 : static_cast<double>(it->second) / 1e6;  // ns
    };
    CommStats s;
    s.steps = impl_->synced_steps;
    s.forward_ms = ms("avg_forward_compute_time");
    s.backward_compute_ms = ms("avg_backward_compute_time");
    s.comm_ms = ms("avg_backward_comm_time");
    s.overlap_ms = ms("avg_backward_compute_comm_overlap_time");
    return s;
}

void GradientReducer::prepareBackward(const torch::Tensor& loss, bool sync) {
    if (sync) {
        impl_->reducer->prepare_for_backward(std::vector<at::Tensor>{loss});
        ++impl_->synced_steps;
    }
}

}  // namespace hearth::dist
