#pragma once
// The DDP tests' shared training: blob data, an MLP without dropout (or token blobs and a small
// DistilBERT), and a Trainer with the strategy the settings ask for; returns the final weights,
// flattened.

#include "TrainTestSupport.h"

#include "engine/models/ModelRegistry.h"
#include "engine/monitor/MemoryAccounting.h"
#include "engine/optim/OffloadedOptimizer.h"
#include "engine/train/Trainer.h"

#include <atomic>
#include <algorithm>
#include <cstdlib>
#include <random>
#include <set>
#include <sstream>
#include <string>

namespace hearth::testing {

struct DdpSettings {
    std::string optimizer = "sgd";
    int64_t batch = 16;          // per rank
    int64_t accumulate = 1;
    bool find_unused = false;
    bool bucket_view = false;
    bool grads_to_none = true;   // trainer.set_grads_to_none (DDP_GRADS_TO_NONE)
    double clip = 0.0;           // trainer.gradient_clip_val (0 = none)
    bool float64 = false;        // model and data in float64 (equality to ~1e-12)
    int64_t die_at_step = 0;     // 0 = never
    bool distributed = false;    // a distributed strategy (the world comes from the environment)
    std::string strategy = "ddp";
    std::string checkpoint_dir;  // rank 0 (or the single process) writes best.pt here
    std::string device = "cpu";  // cpu | cuda (each rank on GPU LOCAL_RANK % GPUs)
    std::string backend = "gloo";
    bool offload = false;        // trainer.offload_optimizer
    int64_t blocks_per_unit = 1; // trainer.fsdp.blocks_per_unit
    bool prefetch = true;        // trainer.fsdp.prefetch
    int64_t micro_batches = 4;   // trainer.pipeline.micro_batches
    double bucket_mb = 25.0;     // trainer.ddp.bucket_cap_mb
    std::vector<int64_t> stage_blocks;   // trainer.pipeline.stage_blocks (DDP_STAGE_BLOCKS "2,1")
    std::string model = "mlp";   // mlp (blobs) | distilbert (token blobs, padded) | torchscript (blobs, a scripted nn.Sequential)
    std::vector<int64_t> hidden{16, 8};  // the MLP's hidden widths (DDP_HIDDEN "512,512")

    static DdpSettings fromEnvironment() {
        auto get = [](const char* name, const char* fallback) {
            const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): a test program's start
            return std::string(v ? v : fallback);
        };
        DdpSettings s;
        s.optimizer = get("DDP_OPTIMIZER", "sgd");
        s.batch = std::stoll(get("DDP_BATCH", "16"));
        s.accumulate = std::stoll(get("DDP_ACCUMULATE", "1"));
        s.find_unused = get("DDP_FIND_UNUSED", "0") == "1";
        s.bucket_view = get("DDP_BUCKET_VIEW", "0") == "1";
        s.grads_to_none = get("DDP_GRADS_TO_NONE", "1") == "1";
        s.die_at_step = std::stoll(get("DDP_DIE_AT_STEP", "0"));
        s.clip = std::stod(get("DDP_CLIP", "0"));
        s.float64 = get("DDP_FLOAT64", "0") == "1";
        s.distributed = std::getenv("WORLD_SIZE") != nullptr;  // NOLINT(concurrency-mt-unsafe)
        s.strategy = get("DDP_STRATEGY", "ddp");
        if (get("RANK", "0") == "0") s.checkpoint_dir = get("DDP_CHECKPOINT", "");
        s.device = get("DDP_DEVICE", "cpu");
        s.backend = get("DDP_BACKEND", "gloo");
        s.offload = get("DDP_OFFLOAD", "0") == "1";
        s.blocks_per_unit = std::stoll(get("DDP_BLOCKS_PER_UNIT", "1"));
        s.prefetch = get("DDP_PREFETCH", "1") == "1";
        s.micro_batches = std::stoll(get("DDP_MICRO_BATCHES", "4"));
        s.bucket_mb = std::stod(get("DDP_BUCKET_MB", "25"));
        s.model = get("DDP_MODEL", "mlp");
        std::stringstream blocks(get("DDP_STAGE_BLOCKS", ""));
        for (std::string n; std::getline(blocks, n, ',');) s.stage_blocks.push_back(std::stoll(n));
        std::stringstream widths(get("DDP_HIDDEN", "16,8"));
        s.hidden.clear();
        for (std::string n; std::getline(widths, n, ',');) s.hidden.push_back(std::stoll(n));
        return s;
    }
};

// Counts the parameter elements this rank's optimizer holds (its share of the optimizer state),
// and the most gradient elements it held after any micro-batch (model and optimizer tensors,
// each counted once).
class OptimizerShare final : public Callback {
public:
    // The gradient elements the model holds when its first parameter's gradient arrives (the last
    // one backward computes): zero2 has reduced and freed every other bucket by then.
    void onFitStart(TrainerContext& ctx) override {
        auto first = ctx.model().parameters().front();
        ClassifierImpl* model = &ctx.model();
        first.register_hook([this, model](const torch::Tensor&) {
            int64_t held = 0;
            for (const auto& p : model->parameters()) held += p.grad().defined() ? p.grad().numel() : 0;
            grads_in_backward = std::max(grads_in_backward, held);
        });
    }
    // Between a training forward and its backward: zero3 has freed every block's parameters again
    // and holds the root unit's (the head) whole; the other strategies hold every parameter.
    void onForwardEnd(TrainerContext& ctx) override {
        int64_t live = 0;
        for (const auto& p : ctx.model().parameters())
            live += static_cast<int64_t>(p.storage().nbytes()) / static_cast<int64_t>(p.element_size());
        live_after_forward = std::max(live_after_forward, live);
    }
    void onTrainBatchEnd(TrainerContext& ctx) override {
        std::set<const void*> seen;
        int64_t held_grads = 0;
        auto count = [&](const torch::Tensor& p) {
            if (p.grad().defined() && seen.insert(p.unsafeGetTensorImpl()).second) held_grads += p.grad().numel();
        };
        for (const auto& p : ctx.model().parameters()) count(p);
        for (auto& group : ctx.optimizer().param_groups())
            for (auto& p : group.params()) count(p);
        grads = std::max(grads, held_grads);
    }
    void onFitEnd(TrainerContext& ctx) override {
        held = 0;
        for (auto& group : ctx.optimizer().param_groups())
            for (auto& p : group.params()) held += p.numel();
        // The memory breakdown's parameters, in elements (zero3: this rank's shards).
        const HeldBytes bytes = measureHeldBytes(ctx.model(), ctx.optimizer());
        counted_parameters = bytes.parameters / static_cast<int64_t>(ctx.optimizer().param_groups().front().params().front().element_size());
        // Offloaded: the elements of the host copies the inner optimizer stepped, each a tensor of
        // its own (not the device tensor it mirrors) with optimizer state beside it.
        host_copies = 0;
        if (OffloadedOptimizer* off = offloaded(ctx.optimizer())) {
            const auto& device = ctx.optimizer().param_groups().front().params();
            const auto& host = off->hostTensors();
            if (off->inner().state().size() == host.size() && host.size() == device.size()) {
                for (size_t i = 0; i < host.size(); ++i)
                    if (host[i].data_ptr() != device[i].data_ptr()) host_copies += host[i].numel();
            }
        }
        total = 0;
        model_storage = 0;
        for (const auto& p : ctx.model().parameters()) {
            total += p.numel();
            model_storage += static_cast<int64_t>(p.storage().nbytes()) / static_cast<int64_t>(p.element_size());
        }
    }
    // model_storage: elements the model's own parameters held in memory between steps (the
    // allocator's bytes for them; zero3 frees them and keeps its shards in the optimizer's).
    int64_t held = 0, total = 0, grads = 0, model_storage = 0, live_after_forward = 0, host_copies = 0,
            counted_parameters = 0, grads_in_backward = 0;
};

// Exits the process abruptly at a given optimizer step: a rank that dies mid-run.
class DieAtStep final : public Callback {
public:
    explicit DieAtStep(int64_t step) : step_(step) {}
    void onTrainBatchEnd(TrainerContext& ctx) override {
        if (step_ > 0 && ctx.state().global_step == step_) std::_Exit(9);
    }

private:
    int64_t step_;
};

// Token blobs: sequences of 4 to 8 tokens padded to 8 (pad id 0, "attention_mask" 0 there), the
// tokens of class c drawn mostly from the band 1 + 7c .. 7 + 7c of a 24-token vocabulary.
class TokenBlobDataset final : public Dataset {
public:
    static constexpr int64_t kLength = 8, kVocab = 24;
    TokenBlobDataset(int64_t n, int64_t classes, uint64_t seed) {
        std::mt19937_64 rng(seed);
        std::vector<int64_t> ids(static_cast<size_t>(n * kLength), 0), mask(ids.size(), 0), labels;
        for (int64_t i = 0; i < n; ++i) {
            const int64_t c = i % classes, length = 4 + static_cast<int64_t>(rng() % 5);
            labels.push_back(c);
            for (int64_t t = 0; t < length; ++t) {
                const auto at = static_cast<size_t>(i * kLength + t);
                const int64_t band = rng() % 4 == 0 ? static_cast<int64_t>(rng() % 3) : c;   // a quarter off-class
                ids[at] = 1 + 7 * band + static_cast<int64_t>(rng() % 7);
                mask[at] = 1;
            }
        }
        ids_ = torch::tensor(ids, torch::kInt64).reshape({n, kLength});
        mask_ = torch::tensor(mask, torch::kInt64).reshape({n, kLength});
        labels_ = torch::tensor(labels, torch::kInt64);
        for (int64_t c = 0; c < classes; ++c) names_.push_back("class" + std::to_string(c));
    }
    int64_t size() const override { return labels_.size(0); }
    Sample get(int64_t i) const override { return Sample{ids_[i].to(torch::kFloat32), labels_[i].item<int64_t>()}; }
    Batch getBatch(const std::vector<int64_t>& indices) const override {
        const auto idx = torch::tensor(indices, torch::kInt64);
        Batch b;
        b.indices = idx;
        b.set("input_ids", ids_.index_select(0, idx));
        b.set("attention_mask", mask_.index_select(0, idx));
        b.set(Batch::kLabel, labels_.index_select(0, idx));
        return b;
    }
    std::vector<int64_t> sampleShape() const override { return {kLength}; }
    const std::vector<std::string>& classNames() const override { return names_; }
    int64_t sampleLength(int64_t i) const override { return mask_[i].sum().item<int64_t>(); }

private:
    torch::Tensor ids_, mask_, labels_;
    std::vector<std::string> names_;
};

// The settings' model (new, from torch seed 5) and its data: the blob MLP or the token-blob DistilBERT.
inline std::pair<std::shared_ptr<ClassifierImpl>, DataSplits> blobModelAndData(ExperimentConfig& c,
                                                                               const DdpSettings& s) {
    const auto dtype = s.float64 ? torch::kFloat64 : torch::kFloat32;
    DataSplits splits;
    ModelInput input{{8}, 3};
    if (s.model == "distilbert") {
        c.model.name = "distilbert";
        c.model.hidden_size = 16;
        c.model.num_layers = 3;
        c.model.num_heads = 2;
        c.model.intermediate_size = 32;
        c.model.dropout = 0.0;
        splits.train = std::make_shared<TokenBlobDataset>(256, 3, 1);
        splits.val = std::make_shared<TokenBlobDataset>(32, 3, 2);
        splits.test = std::make_shared<TokenBlobDataset>(33, 3, 3);
        splits.class_names = splits.train->classNames();
        splits.description = "token blobs";
        splits.text = {TokenBlobDataset::kVocab, TokenBlobDataset::kLength, 0, "token blobs"};
        input.vocab_size = TokenBlobDataset::kVocab;
        input.max_length = TokenBlobDataset::kLength;
    } else if (s.model == "torchscript") {
        c.model.name = "torchscript";
        c.model.path = std::string(HEARTH_FIXTURES_DIR) + "/torchscript/sequential_mlp.pt";   // its own weights
        splits = blobSplits(256, 32, 33, {8}, 3, dtype);
    } else {
        c.model.name = "mlp";
        c.model.hidden = s.hidden;
        c.model.dropout = 0.0;
        splits = blobSplits(256, 32, 33, {8}, 3, dtype);  // 256 = a multiple of every global batch
    }
    torch::manual_seed(5);
    auto model = createModel(c.model, input);
    model->to(dtype);
    return {model, splits};
}

struct BlobsRun {
    torch::Tensor weights;      // final weights, flattened
    // [optimizer elements held, model elements, most gradient elements held, elements the model's
    // parameters held in memory at the end of fit, the most they held after a training forward,
    // elements of the host copies an offloaded optimizer stepped, parameter elements the memory
    // breakdown counts, the most gradient elements the model held when backward reached its first
    // parameter, the memory breakdown's activations in bytes, its gradients in bytes, the bytes of
    // the strategy's gradient buffers (ddp's reducer buckets)]
    torch::Tensor share;
    torch::Tensor predictions;  // test split, float64 [n, 3]: source index, true, predicted
    torch::Tensor losses;       // float64: validation loss of every epoch, then the test loss
};

// Trains the blob MLP (256 training, 32 validation and 33 test samples: an odd test split, so
// two ranks' shards need padding) and tests it.
inline BlobsRun trainBlobs(const DdpSettings& s) {
    torch::set_num_threads(1);
    ExperimentConfig c;
    c.seed = 3;
    c.optimizer.name = s.optimizer;
    c.optimizer.lr = s.optimizer == "sgd" ? 0.1 : 0.01;
    c.trainer.max_epochs = 2;
    c.trainer.batch_size = s.batch;
    c.trainer.accumulate_grad_batches = s.accumulate;
    c.trainer.num_workers = 0;
    c.trainer.log_every_n_steps = 1;
    c.trainer.strategy = s.distributed ? s.strategy : "auto";
    c.trainer.offload_optimizer = s.distributed && s.offload;
    c.trainer.fsdp.blocks_per_unit = s.blocks_per_unit;
    c.trainer.fsdp.prefetch = s.prefetch;
    c.trainer.pipeline.micro_batches = s.micro_batches;
    c.trainer.pipeline.stage_blocks = s.stage_blocks;
    c.trainer.ddp.backend = s.backend;
    c.trainer.ddp.find_unused_parameters = s.find_unused;
    c.trainer.ddp.gradient_as_bucket_view = s.bucket_view;
    c.trainer.set_grads_to_none = s.grads_to_none;
    c.trainer.ddp.bucket_cap_mb = s.bucket_mb;
    c.trainer.ddp.timeout_s = 30;
    if (s.clip > 0.0) c.trainer.gradient_clip_val = s.clip;
    auto [model, splits] = blobModelAndData(c, s);
    auto parts = defaultTrainerParts(c, torch::Device(s.device), s.checkpoint_dir);
    if (s.die_at_step > 0) parts.callbacks.push_back(std::make_shared<DieAtStep>(s.die_at_step));
    auto counter = std::make_shared<OptimizerShare>();
    parts.callbacks.push_back(counter);
    RecordingSink sink;
    std::atomic<bool> stop{false};
    Trainer trainer(c, std::move(parts), model, splits, sink, stop);
    trainer.fit();
    trainer.test();
    int64_t buffer_bytes = 0;
    for (const auto& b : trainer.strategyInUse().gradientBuffers()) buffer_bytes += static_cast<int64_t>(b.storage().nbytes());
    BlobsRun run;
    run.share = torch::tensor({counter->held, counter->total, counter->grads, counter->model_storage,
                               counter->live_after_forward, counter->host_copies, counter->counted_parameters,
                               counter->grads_in_backward, trainer.memoryBreakdown().activations_bytes,
                               trainer.memoryBreakdown().gradients_bytes, buffer_bytes},
                              torch::kInt64);
    std::vector<torch::Tensor> flat;
    // Read through the strategy (zero3 keeps only shards between steps); the Trainer lends it const.
    const WeightsAccess weights(const_cast<Strategy&>(trainer.strategyInUse()), /*writes=*/false);
    for (const auto& p : model->parameters()) flat.push_back(p.detach().flatten().cpu());
    run.weights = torch::cat(flat);
    std::vector<double> rows;
    for (const auto& ready : sink.all<PredictionsReady>())
        for (const auto& p : ready.predictions)
            rows.insert(rows.end(), {static_cast<double>(p.index), static_cast<double>(p.true_label),
                                     static_cast<double>(p.predicted)});
    run.predictions = torch::tensor(rows, torch::kFloat64).reshape({-1, 3});
    std::vector<double> losses;
    for (const auto& report : sink.all<EvalReport>()) losses.push_back(report.loss);
    run.losses = torch::tensor(losses, torch::kFloat64);
    return run;
}

}  // namespace hearth::testing
