// The CUDA paths, run on a real GPU by scripts/gpu-check: the GradScaler's native kernels agree
// with the CPU path, fp16 and bf16 autocast, pinned non-blocking loader copies, the memory
// gauges, and a whole run on the device. Each test skips with "needs a CUDA device" elsewhere;
// gpu-check fails when any of them skips there.
#include "TrainTestSupport.h"

#include "engine/TorchCompat.h"
#include "engine/data/Augment.h"
#include "engine/data/IdxDataset.h"
#include "engine/data/Loader.h"
#include "engine/monitor/DeviceMonitor.h"
#include "engine/optim/Optimizers.h"
#include "engine/run/RunController.h"
#include "engine/strategy/CapturedStep.h"
#include "engine/strategy/GradScaler.h"
#include "engine/strategy/Precision.h"
#include "engine/train/MetricsLogger.h"
#include "engine/train/Trainer.h"
#include "engine/train/TrainerParts.h"
#ifdef HEARTH_WITH_CUDA
#include "engine/monitor/CudaMemory.h"

#include <c10/cuda/CUDAFunctions.h>
#endif

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <limits>
#include <numeric>

using namespace hearth;
using namespace hearth::testing;

#define HEARTH_NEEDS_CUDA()                                             \
    do {                                                                \
        if (!torch::cuda::is_available()) QSKIP("needs a CUDA device"); \
    } while (false)

namespace {

// An MLP of `hidden` widths on the GPU, plain SGD, no loader workers.
ExperimentConfig gpuMlp(std::vector<int64_t> hidden, int64_t batch_size, int64_t epochs) {
    ExperimentConfig c;
    c.model.name = "mlp";
    c.model.hidden = std::move(hidden);
    c.optimizer.name = "sgd";
    c.trainer.batch_size = batch_size;
    c.trainer.max_epochs = epochs;
    c.trainer.num_workers = 0;
    return c;
}

// Scale and growth tracker after each of `steps` scaled SGD steps on `device`, with an inf
// injected into the gradient at step `inf_at`; the same seed gives the same problem anywhere.
struct ScalerTrace {
    std::vector<double> scales;
    std::vector<int64_t> trackers;
    torch::Tensor weight;  // final weights, on the CPU
};

ScalerTrace traceScaler(torch::Device device, int steps, int inf_at) {
    torch::manual_seed(3);
    torch::nn::Linear layer(16, 4);
    const auto x = torch::randn({32, 16});
    const auto y = torch::randint(0, 4, {32}, torch::kInt64);
    layer->to(device);
    torch::optim::SGD opt(layer->parameters(), torch::optim::SGDOptions(0.1));
    GradScalerOptions o;
    o.init_scale = 1024.0;
    o.growth_interval = 2;
    GradScaler scaler(o);
    ScalerTrace t;
    for (int i = 0; i < steps; ++i) {
        compat::clearGradients(opt);
        const auto loss = torch::nn::functional::cross_entropy(layer->forward(x.to(device)), y.to(device));
        scaler.scale(loss).backward();
        if (i == inf_at) {
            torch::NoGradGuard g;
            layer->weight.mutable_grad()[0][0] = std::numeric_limits<float>::infinity();
        }
        scaler.step(opt);
        const bool stepped = scaler.takeSkippedSteps() == 0;
        if (stepped == (i == inf_at)) {
            qWarning("step %d: stepped=%d with inf_at=%d", i, int(stepped), inf_at);
            return {};
        }
        scaler.update();
        t.scales.push_back(scaler.currentScale());
        t.trackers.push_back(scaler.growthTracker());
    }
    t.weight = layer->weight.detach().cpu();
    return t;
}

// The first `n` Fashion-MNIST training images: uint8 on the host, normalised where they land.
std::shared_ptr<const Dataset> fashionImages(int64_t n) {
    std::vector<int64_t> first(static_cast<size_t>(n));
    std::iota(first.begin(), first.end(), int64_t{0});
    return std::make_shared<Subset>(IdxDataset::load(kDefaultFashionMnistPath, IdxDataset::Split::Train), first);
}

std::shared_ptr<const Dataset> blobDataset(int64_t n) {
    return std::make_shared<BlobDataset>(n, std::vector<int64_t>{8}, 3, 11);
}

// An MLP for 8 features and 3 classes with one hidden layer, on `device`.
std::shared_ptr<ClassifierImpl> mlpOn(torch::Device device, int64_t hidden) {
    ModelConfig mc;
    mc.name = "mlp";
    mc.hidden = {hidden};
    auto model = createModel(mc, ModelInput{{8}, 3});
    model->to(device);
    return model;
}

// Runs `c` eagerly and with trainer.cuda_graph=step (2 epochs, deterministic, logged at every
// step) and compares them step by step.
void compareCapturedWithEager(ExperimentConfig c, const QString& what) {
    c.trainer.accelerator = "cuda";
    c.trainer.max_epochs = 2;
    c.trainer.num_workers = 0;
    c.trainer.log_every_n_steps = 1;
    c.trainer.deterministic = true;
    c.trainer.cudnn_benchmark = false;
    std::atomic<bool> stop{false};
    RecordingSink eager_sink, graph_sink;
    c.trainer.cuda_graph = "off";
    const auto eager = runExperiment(c, RunOptions{}, eager_sink, stop);
    c.trainer.cuda_graph = "step";
    const auto graphed = runExperiment(c, RunOptions{}, graph_sink, stop);
    QVERIFY2(eager.status == RunStatus::Completed, qPrintable(what + ": " + eager.message.c_str()));
    QVERIFY2(graphed.status == RunStatus::Completed, qPrintable(what + ": " + graphed.message.c_str()));
    const auto logs = graph_sink.all<LogLine>();
    QVERIFY2(std::any_of(logs.begin(), logs.end(),
                         [](const LogLine& l) { return l.text.find("captured the training step") == 0; }),
             qPrintable(what + ": no capture logged"));
    const auto effective = graph_sink.all<RunStarted>().at(0).effective;
    QVERIFY2(effective.at("trainer.cuda_graph").find("step (") == 0, effective.at("trainer.cuda_graph").c_str());
    const auto a = eager_sink.all<StepMetrics>();
    const auto b = graph_sink.all<StepMetrics>();
    QCOMPARE(b.size(), a.size());
    QVERIFY(a.size() > static_cast<size_t>(2 * (kCaptureWarmupSteps + 2)));
    for (size_t i = 0; i < a.size(); ++i) {
        QCOMPARE(b[i].global_step, a[i].global_step);
        QVERIFY2(std::abs(b[i].loss - a[i].loss) <= 1e-5 * std::max(1.0, std::abs(a[i].loss)),
                 qPrintable(QString("%1, step %2: captured loss %3, eager %4")
                                .arg(what).arg(a[i].global_step).arg(b[i].loss, 0, 'g', 10).arg(a[i].loss, 0, 'g', 10)));
        QCOMPARE(b[i].lr, a[i].lr);
        QCOMPARE(b[i].skipped_steps, a[i].skipped_steps);
    }
    const auto fa = eager_sink.all<RunFinished>().at(0);
    const auto fb = graph_sink.all<RunFinished>().at(0);
    QVERIFY2(std::abs(fb.test_loss - fa.test_loss) <= 1e-5 * std::max(1.0, fa.test_loss),
             qPrintable(QString("%1: test loss %2 vs %3").arg(what).arg(fb.test_loss).arg(fa.test_loss)));
    QCOMPARE(fb.test_accuracy, fa.test_accuracy);
}

}  // namespace

class TestCuda : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // torch.amp.GradScaler semantics through _amp_foreach_non_finite_check_and_unscale_ and
    // _amp_update_scale_ on the device: the same skip, backoff and growth as the CPU path.
    void gradScalerNativeKernelsMatchTheCpuPath() {
        HEARTH_NEEDS_CUDA();
        const auto cuda = traceScaler(torch::Device(torch::kCUDA, 0), 6, 2);
        const auto cpu = traceScaler(torch::kCPU, 6, 2);
        QVERIFY(cuda.weight.defined() && cpu.weight.defined());
        // 1024 -> grow after 2 good steps -> back off at the inf -> grow again after 2 good ones.
        QCOMPARE(cuda.scales, (std::vector<double>{1024, 2048, 1024, 1024, 2048, 2048}));
        QCOMPARE(cuda.trackers, (std::vector<int64_t>{1, 0, 0, 1, 0, 1}));
        QCOMPARE(cuda.scales, cpu.scales);
        QCOMPARE(cuda.trackers, cpu.trackers);
        QVERIFY(torch::allclose(cuda.weight, cpu.weight, 1e-4, 1e-5));
    }

    void fp16AutocastRunsMatmulsInHalfWithFloatMasterWeights() {
        HEARTH_NEEDS_CUDA();
        const torch::Device dev(torch::kCUDA, 0);
        torch::nn::Linear layer(8, 4);
        layer->to(dev);
        const auto x = torch::randn({5, 8}, dev);
        {
            compat::AutocastGuard guard(c10::DeviceType::CUDA, torch::kHalf);
            QCOMPARE(layer->forward(x).scalar_type(), torch::kHalf);
        }
        QCOMPARE(layer->forward(x).scalar_type(), torch::kFloat32);

        auto model = mlpOn(dev, 64);
        Precision precision("16-mixed", dev);
        QVERIFY(precision.autocasts() && precision.scalesLoss());
        torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(0.01));
        const auto data = blobDataset(256);
        const Batch all = data->getBatch([] {
            std::vector<int64_t> idx(256);
            for (int64_t i = 0; i < 256; ++i) idx[static_cast<size_t>(i)] = i;
            return idx;
        }());
        const auto inputs = all.input().to(dev), labels = all.label().to(dev);
        double first = 0, last = 0;
        for (int step = 0; step < 60; ++step) {
            compat::clearGradients(opt);
            const auto logits = precision.forward(*model, inputs);
            QCOMPARE(logits.scalar_type(), torch::kFloat32);
            const auto loss = torch::nn::functional::cross_entropy(logits, labels);
            precision.backward(loss);
            precision.optimizerStep(opt, std::nullopt);
            (step == 0 ? first : last) = loss.item<double>();
        }
        QVERIFY2(last < 0.5 * first, qPrintable(QString("loss %1 -> %2").arg(first).arg(last)));
        for (const auto& p : model->parameters()) {
            QCOMPARE(p.scalar_type(), torch::kFloat32);
            QCOMPARE(p.grad().scalar_type(), torch::kFloat32);
        }
        QCOMPARE(precision.lossScale(), 65536.0);  // no overflow on this problem
    }

    void bf16AutocastOnCudaKeepsFloatGradients() {
        HEARTH_NEEDS_CUDA();
        const torch::Device dev(torch::kCUDA, 0);
        torch::nn::Linear layer(8, 4);
        layer->to(dev);
        {
            compat::AutocastGuard guard(c10::DeviceType::CUDA, torch::kBFloat16);
            QCOMPARE(layer->forward(torch::randn({3, 8}, dev)).scalar_type(), torch::kBFloat16);
        }
        auto model = mlpOn(dev, 16);
        Precision precision("bf16-mixed", dev);
        QVERIFY(precision.autocasts() && !precision.scalesLoss());
        const auto logits = precision.forward(*model, torch::randn({6, 8}, dev));
        precision.backward(
            torch::nn::functional::cross_entropy(logits, torch::zeros({6}, torch::dtype(torch::kInt64).device(dev))));
        for (const auto& p : model->parameters()) QCOMPARE(p.grad().scalar_type(), torch::kFloat32);
        QVERIFY(QString::fromStdString(precision.describe()).contains("CUDA"));
    }

    // pin_memory: staging buffers in page-locked memory, copies issued non-blocking; the batches
    // that reach the device equal the ones a CPU loader with the same seed produces.
    void pinnedLoaderDeliversTheSameBatchesOnTheDevice() {
        HEARTH_NEEDS_CUDA();
        const auto data = blobDataset(1000);
        LoaderOptions o;
        o.batch_size = 64;
        o.seed = 5;
        o.num_workers = 2;
        o.pin_memory = true;
        o.device = torch::Device(torch::kCUDA, 0);
        Loader gpu(data, o);
        QVERIFY(gpu.pinsMemory());
        o.pin_memory = false;
        o.device = torch::kCPU;
        Loader cpu(data, o);
        QVERIFY(!cpu.pinsMemory());
        gpu.startEpoch(0);
        cpu.startEpoch(0);
        int batches = 0;
        while (auto g = gpu.next()) {
            auto c = cpu.next();
            QVERIFY(c.has_value());
            QVERIFY(g->input().is_cuda() && g->label().is_cuda());
            QVERIFY(torch::equal(g->input().cpu(), c->input()));
            QVERIFY(torch::equal(g->label().cpu(), c->label()));
            ++batches;
        }
        QVERIFY(!cpu.next().has_value());
        QCOMPARE(batches, 16);
    }

    // The GPU's two data paths give the host loader's batches: raw uint8 images copied one batch
    // ahead on a copy stream and normalised there, and the whole set resident on the device
    // (cut, augmented and normalised there); same samples and order, same pixels.
    void copiedAheadAndResidentBatchesAreTheHostBatches() {
        HEARTH_NEEDS_CUDA();
        if (!std::filesystem::exists(kDefaultFashionMnistPath)) QFAIL("Fashion-MNIST is missing");
        const auto data = fashionImages(500);
        LoaderOptions host;
        host.batch_size = 64;
        host.seed = 3;
        host.num_workers = 2;
        host.device = torch::kCPU;
        host.augment = std::make_shared<ImageAugment>(2, true);
        LoaderOptions ahead = host;
        ahead.device = torch::Device(torch::kCUDA, 0);
        ahead.pin_memory = true;
        ahead.raw_inputs = true;
        LoaderOptions resident = ahead;
        resident.resident = true;
        Loader h(data, host), g(data, ahead), r(data, resident);
        QVERIFY(g.overlapsCopies());
        QVERIFY(!r.overlapsCopies());
        QCOMPARE(r.residentBytes(), int64_t{500 * 28 * 28 + 500 * 8});
        int batches = 0;
        for (int64_t epoch = 0; epoch < 2; ++epoch) {
            h.startEpoch(epoch);
            g.startEpoch(epoch);
            r.startEpoch(epoch);
            while (auto want = h.next()) {
                for (Loader* loader : {&g, &r}) {
                    const auto got = loader->next();
                    QVERIFY(got.has_value());
                    QVERIFY(got->input().is_cuda() && got->label().is_cuda());
                    QCOMPARE(got->input().scalar_type(), torch::kFloat32);
                    QVERIFY(!got->raw_input.has_value());
                    QVERIFY(torch::equal(got->indices, want->indices));
                    QVERIFY(torch::equal(got->label().cpu(), want->label()));
                    const double diff = (got->input().cpu() - want->input()).abs().max().item<double>();
                    QVERIFY2(diff <= 1e-6, qPrintable(QString("batch %1: pixels differ by %2").arg(batches).arg(diff)));
                }
                ++batches;
            }
            QVERIFY(!g.next().has_value() && !r.next().has_value());
        }
        QCOMPARE(batches, 16);
    }

    // Taking batches from either GPU data path and training on them never waits for the device:
    // a whole epoch of the CNN under CUDA's sync-debug mode "error".
    void gpuDataPathsNeverSyncWithTheHost() {
        HEARTH_NEEDS_CUDA();
#ifdef HEARTH_WITH_CUDA
        const torch::Device dev(torch::kCUDA, 0);
        const auto data = fashionImages(640);
        for (const bool resident : {false, true}) {
            ExperimentConfig c;
            c.model.name = "cnn";
            c.optimizer.name = "adamw";
            c.trainer.precision = "bf16-mixed";
            torch::manual_seed(1);
            auto model = createModel(c.model, ModelInput{{1, 28, 28}, 10});
            auto strategy = createStrategy(c.trainer, dev);
            strategy->setupModel(*model, false);
            auto optimizer = strategy->setupOptimizer(c.optimizer, *model);
            const ClassificationTask task;
            TrainingStep step(*strategy, *model, task);
            MetricsLogger metrics;
            LoaderOptions o = strategy->loaderOptions(c.trainer, true, 4);
            o.num_workers = 0;
            o.resident = resident;
            o.augment = std::make_shared<ImageAugment>(2, true);
            Loader loader(data, o);
            QCOMPARE(loader.overlapsCopies(), !resident);
            // One epoch outside the check: first steps allocate state and set things up.
            for (int64_t epoch = 0; epoch < 2; ++epoch) {
                loader.startEpoch(epoch);
                if (epoch == 1) {
                    torch::cuda::synchronize();
                    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
                }
                try {
                    while (auto batch = loader.next()) {
                        step.microBatch(strategy->toDevice(*batch, loader.pinsMemory()), 1, true, metrics);
                        step.optimizerStep(*optimizer, std::nullopt);
                    }
                } catch (const std::exception& e) {
                    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
                    QFAIL(qPrintable(QString("%1: a host sync in the data path: %2")
                                         .arg(resident ? "resident" : "copied ahead", e.what())));
                }
                c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
            }
            QCOMPARE(metrics.intervalTotals().samples, int64_t{2 * 640});
        }
#endif
    }

    void memoryGaugesFollowTheCachingAllocator() {
        HEARTH_NEEDS_CUDA();
#ifdef HEARTH_WITH_CUDA
        releaseCudaCache();
        resetCudaPeakStats(0);
        const auto before = cudaMemoryStats(0);
        QVERIFY(before.total_bytes > (int64_t(1) << 30));
        constexpr int64_t kBytes = int64_t(256) << 20;
        {
            auto t = torch::empty({kBytes / 4}, torch::dtype(torch::kFloat32).device(torch::kCUDA, 0));
            const auto during = cudaMemoryStats(0);
            QVERIFY(during.allocated_bytes - before.allocated_bytes >= kBytes);
            QVERIFY(during.reserved_bytes >= during.allocated_bytes);
            QVERIFY(during.free_bytes < before.free_bytes);

            RecordingSink sink;
            DeviceMonitor monitor(torch::Device(torch::kCUDA, 0));
            monitor.poll(sink, /*force=*/true);
            const auto samples = sink.all<DeviceSample>();
            QVERIFY(std::any_of(samples.begin(), samples.end(), [&](const DeviceSample& s) {
                return s.device == 0 && !s.name.empty() && s.allocated_bytes >= kBytes &&
                       s.total_bytes == during.total_bytes;
            }));
            QVERIFY(monitor.peakBytes() >= kBytes);
        }
        QVERIFY(cudaMemoryStats(0).allocated_peak_bytes >= kBytes);
        releaseCudaCache();
        QVERIFY(cudaMemoryStats(0).reserved_bytes < before.reserved_bytes + kBytes);
#endif
    }

    // The best checkpoint's copy of the model lives on the host, not beside the model on the GPU:
    // what the fit's peak allocated beyond what the device held before it, the gradients and the
    // optimizer state stays far below the model's size (large model, batch of 8).
    void bestCheckpointKeepsNoCopyOnTheGpu() {
        HEARTH_NEEDS_CUDA();
        const auto s = blobSplits(64, 16, 16, {256});
        const ExperimentConfig c = gpuMlp({2048, 2048}, 8, 2);
        RecordingSink sink;
        std::atomic<bool> stop{false};
        Trainer trainer(c, torch::Device(torch::kCUDA, 0), seededModel(c, s), s, "", sink, stop);
        int64_t before_fit = 0;   // what the device holds with the model on it
#ifdef HEARTH_WITH_CUDA
        before_fit = cudaMemoryStats(0).allocated_bytes;
#endif
        trainer.fit();
        const MemoryBreakdown& m = trainer.memoryBreakdown();
        QVERIFY(m.parameters_bytes > 16'000'000);
        const int64_t grown = m.peak_bytes - before_fit - m.gradients_bytes - m.optimizer_state_bytes;
        QVERIFY2(grown < m.parameters_bytes / 4,
                 qPrintable(QString("grown %1 B, parameters %2 B").arg(grown).arg(m.parameters_bytes)));
        QVERIFY(m.activations_bytes < m.parameters_bytes / 4);
        QVERIFY(trainer.test().ran);
    }

    // On the GPU, activations are what a forward pass keeps allocated for its backward, not the
    // whole peak beyond the counted tensors (cuBLAS and cuDNN workspaces, the backward's
    // temporaries: Other): per-block checkpointing keeps fewer of them.
    void checkpointingKeepsFewerActivationsOnTheGpu() {
        HEARTH_NEEDS_CUDA();
        const auto s = blobSplits(1024, 64, 64, {256});
        auto measure = [&](bool checkpointing) {
            ExperimentConfig c = gpuMlp({2048, 2048, 2048, 2048}, 256, 1);
            c.model.gradient_checkpointing = checkpointing;
            RecordingSink sink;
            std::atomic<bool> stop{false};
            Trainer trainer(c, torch::Device(torch::kCUDA, 0), seededModel(c, s), s, "", sink, stop);
            trainer.fit();
            return trainer.memoryBreakdown();
        };
        const MemoryBreakdown plain = measure(false), checkpointed = measure(true);
        // Four blocks of 256 x 2048 float32 outputs (2 MiB each) and more are kept without it.
        QVERIFY2(plain.activations_bytes > 8 * (int64_t{1} << 20), qPrintable(QString::number(plain.activations_bytes)));
        QVERIFY2(checkpointed.activations_bytes < plain.activations_bytes,
                 qPrintable(QString("%1 vs %2").arg(checkpointed.activations_bytes).arg(plain.activations_bytes)));
    }

    // Between two logged steps the training step reads nothing back: K micro-batches and
    // optimizer steps of the CNN (forward, loss, running meter, NaN watch, backward, the fused
    // AdamW with the GradScaler's unscale and skip) under CUDA's sync-debug mode "error", where any
    // synchronising call throws, in every precision; then the log point reads the totals.
    void stepsBetweenLogPointsNeverSyncWithTheHost() {
        HEARTH_NEEDS_CUDA();
#ifdef HEARTH_WITH_CUDA
        const torch::Device dev(torch::kCUDA, 0);
        for (const std::string precision : {"32-true", "bf16-mixed", "16-mixed"}) {
            ExperimentConfig c;
            c.model.name = "cnn";
            c.optimizer.name = "adamw";
            c.trainer.precision = precision;
            torch::manual_seed(1);
            auto model = createModel(c.model, ModelInput{{1, 28, 28}, 10});
            auto strategy = createStrategy(c.trainer, dev);
            strategy->setupModel(*model, false);
            auto optimizer = strategy->setupOptimizer(c.optimizer, *model);
            QVERIFY(scalerAware(*optimizer) != nullptr);  // auto: fused on this build
            const ClassificationTask task;
            TrainingStep step(*strategy, *model, task);
            MetricsLogger metrics;
            std::vector<Batch> batches;
            for (int i = 0; i < 4; ++i) {
                batches.emplace_back(torch::randn({64, 1, 28, 28}, dev),
                                     torch::randint(0, 10, {64}, torch::dtype(torch::kInt64).device(dev)),
                                     torch::arange(64));
            }
            // One step outside the check: the first step allocates state and may set things up.
            step.microBatch(batches[0], 1, true, metrics);
            step.optimizerStep(*optimizer, std::nullopt);
            torch::cuda::synchronize();
            c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
            try {
                for (int k = 0; k < 8; ++k) {
                    const auto loss = step.microBatch(batches[static_cast<size_t>(k % 4)], 1, true, metrics);
                    strategy->watchLoss(loss, k + 2);
                    step.optimizerStep(*optimizer, std::nullopt);
                }
            } catch (const std::exception& e) {
                c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
                QFAIL(qPrintable(QString("%1: a host sync between log points: %2")
                                     .arg(precision.c_str(), e.what())));
            }
            c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
            // The log point: one read of the interval's totals.
            const MeterTotals totals = metrics.intervalTotals();
            QCOMPARE(totals.samples, int64_t{9 * 64});
            QVERIFY(std::isfinite(totals.meanLoss()));
        }
#endif
    }

    // trainer.cuda_graph=step: K captured steps equal K eager steps, in deterministic mode, logged
    // at every step, with the epoch's last smaller batch (run eagerly). The blob MLP (dropout 0.1,
    // AdamW, cosine schedule) in each precision, alone and with 2-batch accumulation and clipping;
    // the Fashion-MNIST CNN (BatchNorm, dropout) in bf16-mixed. The step losses, learning rates and
    // test results agree to float32 rounding; eager dropout draws new masks at every step, so a
    // replay that reused one mask would part from the eager losses at once.
    void capturedStepsEqualEagerSteps() {
        HEARTH_NEEDS_CUDA();
        QTemporaryDir dir;
        const std::string csv = writeBlobCsv(dir.filePath("blobs.csv").toStdString(), 1100);
        for (const std::string precision : {"32-true", "bf16-mixed", "16-mixed"}) {
            for (const bool accumulate_and_clip : {false, true}) {
                auto c = blobCsvConfig(csv);
                c.trainer.precision = precision;
                c.trainer.batch_size = 32;  // 660 training samples: 20 full batches and one of 20
                c.optimizer.name = "adamw";
                c.scheduler.name = "cosine";
                if (accumulate_and_clip) {
                    c.trainer.accumulate_grad_batches = 2;
                    c.trainer.gradient_clip_val = 0.5;
                }
                compareCapturedWithEager(c, QString("mlp %1%2").arg(precision.c_str(),
                                                                    accumulate_and_clip ? " accumulate+clip" : ""));
            }
        }
        ExperimentConfig cnn;  // the default experiment: Fashion-MNIST, cnn, AdamW
        cnn.data.limit = 1000;
        cnn.trainer.precision = "bf16-mixed";
        compareCapturedWithEager(cnn, "cnn bf16-mixed");
    }

#ifdef HEARTH_WITH_CUDA
    // The graph's dropout draws a new mask at every replay (the CUDA generator is registered with
    // the graph and advanced by each replay), and a replay reads the static inputs of its step.
    void capturedDropoutDrawsNewMasksAtEveryReplay() {
        HEARTH_NEEDS_CUDA();
        const torch::Device dev(torch::kCUDA, 0);
        auto step = makeCudaGraphStep(dev, /*warmup_steps=*/1);
        const torch::Tensor out = torch::zeros({4096}, torch::TensorOptions().device(dev));
        const CapturedStep::Body body = [&out](const std::vector<Batch>& batches, bool) {
            out.copy_(torch::dropout(batches[0].input(), 0.5, /*train=*/true));
        };
        std::vector<torch::Tensor> masks;
        std::vector<CapturedStep::Mode> modes;
        for (int i = 0; i < 4; ++i) {
            const std::vector<Batch> group{Batch(torch::full({4096}, double(i + 1), torch::TensorOptions().device(dev)),
                                                 torch::zeros({4096}, torch::dtype(torch::kInt64).device(dev)),
                                                 torch::arange(4096))};
            QVERIFY(step->fits(group));
            modes.push_back(step->run(group, body));
            masks.push_back(out.ne(0).cpu());
            // Kept values are input * 2: the replay read this step's input.
            QCOMPARE(out.max().item<double>(), 2.0 * (i + 1));
        }
        QVERIFY(modes[0] == CapturedStep::Mode::Warmup);
        QVERIFY(modes[1] == CapturedStep::Mode::Captured);
        QVERIFY(modes[2] == CapturedStep::Mode::Replayed && modes[3] == CapturedStep::Mode::Replayed);
        QVERIFY(step->captured());
        QVERIFY(step->poolBytes() > 0);
        QVERIFY(!torch::equal(masks[1], masks[2]));
        QVERIFY(!torch::equal(masks[2], masks[3]));
        const double kept = masks[3].to(torch::kFloat64).mean().item<double>();
        QVERIFY2(kept > 0.45 && kept < 0.55, qPrintable(QString::number(kept)));
        // Another shape does not fit the captured one.
        const std::vector<Batch> smaller{Batch(torch::ones({100}, torch::TensorOptions().device(dev)),
                                               torch::zeros({100}, torch::dtype(torch::kInt64).device(dev)),
                                               torch::arange(100))};
        QVERIFY(!step->fits(smaller));
    }
#endif

    // A whole experiment on the GPU: 16-mixed, pinned memory, workers; it learns, and the run
    // reports the device and its memory.
    void wholeRunTrainsOnTheGpu() {
        HEARTH_NEEDS_CUDA();
        QTemporaryDir dir;
        auto c = blobCsvConfig(writeBlobCsv(dir.filePath("blobs.csv").toStdString(), 1200));
        c.trainer.accelerator = "cuda";
        c.trainer.precision = "16-mixed";
        c.trainer.pin_memory = true;
        c.trainer.num_workers = 2;
        RecordingSink sink;
        std::atomic<bool> stop{false};
        const auto outcome = runExperiment(c, RunOptions{}, sink, stop);
        QVERIFY2(outcome.status == RunStatus::Completed, outcome.message.c_str());
        const auto started = sink.all<RunStarted>().at(0);
        QVERIFY2(started.device.find("cuda") != std::string::npos, started.device.c_str());
        QVERIFY(started.effective.at("trainer.pin_memory").find("on") == 0);
        QVERIFY(started.effective.at("trainer.precision").find("16-mixed") == 0);
        const auto finished = sink.all<RunFinished>().at(0);
        QVERIFY2(finished.test_accuracy > 0.9, qPrintable(QString::number(finished.test_accuracy)));
        QVERIFY(finished.peak_memory_bytes > 0);
        const auto samples = sink.all<DeviceSample>();
        QVERIFY(std::any_of(samples.begin(), samples.end(), [](const DeviceSample& s) { return s.device == 0; }));

        // The same with the training set held on the GPU.
        c.data.on_device = true;
        RecordingSink resident;
        const auto on_device = runExperiment(c, RunOptions{}, resident, stop);
        QVERIFY2(on_device.status == RunStatus::Completed, on_device.message.c_str());
        const auto effective = resident.all<RunStarted>().at(0).effective;
        QVERIFY2(effective.at("data.on_device").find("on (") == 0, effective.at("data.on_device").c_str());
        QVERIFY(resident.all<RunFinished>().at(0).test_accuracy > 0.9);
    }
};

QTEST_GUILESS_MAIN(TestCuda)
#include "test_cuda.moc"
