// The one translation unit that includes c10d. LibTorch 1.13 (Debian) and 2.x (the PyTorch
// wheel) differ in the Reducer's constructor and in how a backend becomes a ProcessGroup.
#include "engine/dist/C10d.h"

#include "engine/TorchCompat.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/csrc/distributed/c10d/logger.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include <stdexcept>

namespace hearth::dist {

bool available() {
    return true;
}

struct ProcessGroup::Impl {
    c10::intrusive_ptr<c10d::Store> store;
    c10::intrusive_ptr<c10d::ProcessGroup> group;
    std::string backend;
    int64_t rank = 0;
    int64_t world = 1;

    void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) const {
        try {
            work->wait();
        } catch (const std::exception& e) {
            throw std::runtime_error(std::string(what) + " across " + std::to_string(world) +
                                     " processes failed (a peer stopped or timed out): " + e.what());
        }
    }
};

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProcessGroup::~ProcessGroup() = default;

std::shared_ptr<ProcessGroup> ProcessGroup::join(const DistEnv& env, const GroupOptions& options) {
    auto impl = std::make_unique<Impl>();
    impl->rank = env.rank;
    impl->world = env.world_size;
    impl->backend = options.backend;
    const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
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
    if (options.backend != "gloo") {
        throw std::runtime_error("backend '" + options.backend + "' is not in this build (it has gloo)");
    }
    try {
        auto gloo_options = c10d::ProcessGroupGloo::Options::create(options.timeout);
        // One host: the loopback device (createDefaultDevice may resolve to 127.0.1.1 on Debian).
        gloo_options->devices.push_back(env.master_addr == "127.0.0.1" || env.master_addr == "localhost"
                                            ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                            : c10d::ProcessGroupGloo::createDefaultDevice());
        gloo_options->threads = 1;
        impl->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, static_cast<int>(env.rank),
                                                                  static_cast<int>(env.world_size), gloo_options);
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot form the gloo process group of " + std::to_string(env.world_size) +
                                 " processes through " + where + ": " + e.what());
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
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::SUM;
    impl_->wait(impl_->group->allreduce(tensors, o), "allreduce");
}

void ProcessGroup::reduceSum(torch::Tensor& tensor, int64_t root) {
    std::vector<torch::Tensor> one{tensor};
    c10d::ReduceOptions o;
    o.reduceOp = c10d::ReduceOp::SUM;
    o.rootRank = root;
    impl_->wait(impl_->group->reduce(one, o), "reduce");
}

void ProcessGroup::broadcast(std::vector<torch::Tensor>& tensors, int64_t root) {
    for (auto& t : tensors) {
        std::vector<torch::Tensor> one{t};
        c10d::BroadcastOptions o;
        o.rootRank = root;
        impl_->wait(impl_->group->broadcast(one, o), "broadcast");
    }
}

std::vector<torch::Tensor> ProcessGroup::allgather(const torch::Tensor& tensor) {
    std::vector<std::vector<torch::Tensor>> out(1);
    for (int64_t r = 0; r < impl_->world; ++r) out[0].push_back(torch::empty_like(tensor));
    std::vector<torch::Tensor> in{tensor.contiguous()};
    impl_->wait(impl_->group->allgather(out, in), "allgather");
    return out[0];
}

void ProcessGroup::barrier() {
    impl_->wait(impl_->group->barrier(), "barrier");
}

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
        c10d::broadcast_coalesced(pg, detached, size_t{250} * 1024 * 1024, 0);
    }
    const auto cap = static_cast<int64_t>(options.bucket_cap_mb * 1024 * 1024);
    const std::vector<size_t> limits{static_cast<size_t>(1024 * 1024), static_cast<size_t>(cap)};
    const std::vector<bool> sparse(parameters.size(), false);
    auto [buckets, per_bucket_limits] = c10d::compute_bucket_assignment_by_size(parameters, limits, sparse);
    std::reverse(buckets.begin(), buckets.end());
    std::reverse(per_bucket_limits.begin(), per_bucket_limits.end());
    impl_->reducer = std::make_shared<c10d::Reducer>(std::move(parameters), std::move(buckets),
                                                     std::move(per_bucket_limits), pg, sparse, cap,
                                                     options.find_unused_parameters,
                                                     options.gradient_as_bucket_view,
                                                     std::unordered_map<size_t, std::string>{},
                                                     static_cast<int64_t>(1024 * 1024));
    impl_->logger = std::make_shared<c10d::Logger>(impl_->reducer);
    impl_->reducer->set_logger(impl_->logger);
    // Time every step, not Python's 1 in 100: the per-rank record shows where the step went.
    impl_->reducer->set_ddp_runtime_logging_sample_rate(1);
}

GradientReducer::~GradientReducer() = default;

void GradientReducer::prepareForward() {
    // As Python's DDP forward: record the previous step's timings, then start this one.
    impl_->logger->set_runtime_stats_and_log();
    impl_->reducer->rebuild_buckets();
    impl_->reducer->prepare_for_forward();
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
