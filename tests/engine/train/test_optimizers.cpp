// The optimizer kernels (optimizer.implementation): foreach and fused Adam, AdamW and SGD agree
// with torch::optim's per-parameter loop after K steps (float32 to ~1e-6, float64 to 1e-12) with
// weight decay, AMSGrad, Nesterov momentum and a changing learning rate; under the GradScaler a
// fused step takes the scale and the inf flag (an injected inf skips the step and halves the
// scale, as the per-parameter path's read-back does); a state saved by one kernel loads into
// another; auto, adagrad and the refusals resolve as documented. On a GPU the same comparisons run
// with the CUDA kernels and the scaler's native ops (they skip, saying so, without one).

#include "engine/TorchCompat.h"
#include "engine/config/ConfigSchema.h"
#include "engine/optim/OffloadedOptimizer.h"
#include "engine/optim/Optimizers.h"
#include "engine/strategy/CheckpointFile.h"
#include "engine/strategy/GradScaler.h"

#include <QTest>

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>

using namespace hearth;

namespace {

std::vector<OptimizerKernel> multiTensorKernels() {
    std::vector<OptimizerKernel> k{OptimizerKernel::Foreach};
    if (compat::kFusedOptimizers) k.push_back(OptimizerKernel::Fused);
    return k;
}

OptimizerConfig withKernel(OptimizerConfig c, OptimizerKernel kernel) {
    c.implementation = optimizerKernelName(kernel);
    return c;
}

// Parameters of a few shapes (one never gets a gradient until step 3, like a frozen-then-thawed
// layer), identical for every optimizer under test.
// Drawn on the CPU and moved, so that every device starts from the same values.
std::vector<torch::Tensor> makeParams(torch::ScalarType dtype, torch::Device device = torch::kCPU) {
    torch::manual_seed(7);
    std::vector<torch::Tensor> ps;
    for (const auto& shape : std::vector<std::vector<int64_t>>{{16, 8}, {8}, {4, 4, 3}, {5}}) {
        ps.push_back(torch::randn(shape, torch::dtype(dtype)).to(device).requires_grad_(true));
    }
    return ps;
}

// The tensors of one parameter's optimizer state (Adam's, AdamW's or SGD's).
std::vector<torch::Tensor> stateTensors(torch::optim::OptimizerParamState& s) {
    namespace optim = torch::optim;
    std::vector<torch::Tensor> out;
    if (auto* a = dynamic_cast<optim::AdamParamState*>(&s)) out = {a->exp_avg(), a->exp_avg_sq(), a->max_exp_avg_sq()};
    if (auto* w = dynamic_cast<optim::AdamWParamState*>(&s)) out = {w->exp_avg(), w->exp_avg_sq(), w->max_exp_avg_sq()};
    if (auto* g = dynamic_cast<optim::SGDParamState*>(&s)) out = {g->momentum_buffer()};
    out.erase(std::remove_if(out.begin(), out.end(), [](const torch::Tensor& t) { return !t.defined(); }), out.end());
    return out;
}

// Gradients of step `step` for every parameter (the last one only from step 3 on).
void setGrads(std::vector<torch::Tensor>& ps, int step) {
    torch::manual_seed(100 + step);
    for (size_t i = 0; i < ps.size(); ++i) {
        auto& p = ps[i];
        if (i + 1 == ps.size() && step < 3) {
            p.mutable_grad() = torch::Tensor();
            continue;
        }
        p.mutable_grad() = torch::randn(p.sizes(), torch::dtype(p.scalar_type())).to(p.device());
    }
}

double maxDiff(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
    double d = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
        d = std::max(d, (a[i].cpu() - b[i].cpu()).abs().max().item<double>());
    }
    return d;
}

// K steps of `config` (its kernel) with the learning rate decayed each step, as a schedule does.
// device_lr: the fused kernel reads the rate from a device tensor that setLearningRate writes (a
// captured step's way).
std::vector<torch::Tensor> train(const OptimizerConfig& config, torch::ScalarType dtype, int steps = 12,
                                 torch::Device device = torch::kCPU, bool device_lr = false) {
    auto ps = makeParams(dtype, device);
    auto opt = createOptimizer(config, ps);
    if (device_lr && !keepLearningRateOnDevice(*opt)) return {};
    for (int s = 0; s < steps; ++s) {
        setGrads(ps, s);
        setLearningRate(*opt, config.lr * std::pow(0.9, s));
        opt->step();
    }
    std::vector<torch::Tensor> out;
    for (auto& p : ps) out.push_back(p.detach().clone());
    return out;
}

std::vector<OptimizerConfig> cases() {
    std::vector<OptimizerConfig> cs;
    OptimizerConfig adam;
    adam.name = "adam";
    adam.lr = 0.01;
    adam.weight_decay = 0.05;
    cs.push_back(adam);
    adam.amsgrad = true;
    cs.push_back(adam);
    OptimizerConfig adamw = adam;
    adamw.name = "adamw";
    adamw.amsgrad = false;
    adamw.weight_decay = 0.1;
    cs.push_back(adamw);
    adamw.amsgrad = true;
    cs.push_back(adamw);
    OptimizerConfig sgd;
    sgd.name = "sgd";
    sgd.lr = 0.05;
    sgd.momentum = 0.9;
    sgd.weight_decay = 0.01;
    cs.push_back(sgd);
    sgd.nesterov = true;
    cs.push_back(sgd);
    sgd.nesterov = false;
    sgd.momentum = 0.0;
    sgd.weight_decay = 0.0;
    cs.push_back(sgd);
    return cs;
}

QString label(const OptimizerConfig& c) {
    return QString("%1%2%3 wd=%4 m=%5")
        .arg(QString::fromStdString(c.name), c.amsgrad ? " amsgrad" : "", c.nesterov ? " nesterov" : "")
        .arg(c.weight_decay)
        .arg(c.momentum);
}

// A Linear layer's loss, scaled by the GradScaler, with an inf injected into one step's gradient.
struct ScaledRun {
    std::vector<double> scales;
    std::vector<torch::Tensor> params;
    int64_t skipped = 0;
};

// unscale_first: unscale_ before the step, as clipping does (a fused kernel then gets no scale).
ScaledRun scaledRun(const OptimizerConfig& config, int steps, int inf_at, bool unscale_first = false,
                    torch::Device device = torch::kCPU) {
    torch::manual_seed(3);
    torch::nn::Linear layer(16, 4);
    layer->to(device);
    const auto x = torch::randn({32, 16}).to(device);
    const auto y = torch::randint(0, 4, {32}, torch::kInt64).to(device);
    auto opt = createOptimizer(config, layer->parameters());
    GradScalerOptions o;
    o.init_scale = 1024.0;
    o.growth_interval = 100;
    GradScaler scaler(o);
    ScaledRun r;
    for (int i = 0; i < steps; ++i) {
        compat::clearGradients(*opt);
        scaler.scale(torch::nn::functional::cross_entropy(layer->forward(x), y)).backward();
        if (i == inf_at) {
            torch::NoGradGuard g;
            layer->weight.mutable_grad()[0][0] = std::numeric_limits<float>::infinity();
        }
        if (unscale_first) scaler.unscale_(*opt);
        scaler.step(*opt);
        scaler.update();
        r.scales.push_back(scaler.currentScale());
    }
    r.skipped = scaler.takeSkippedSteps();
    for (const auto& p : layer->parameters()) r.params.push_back(p.detach().clone());
    return r;
}

bool haveCuda() { return torch::cuda::is_available(); }

}  // namespace

class TestOptimizers final : public QObject {
    Q_OBJECT

private:
    // Every multi-tensor kernel against the per-parameter loop on `device`, after K steps (float64
    // to 1e-12, float32 to `float32_tolerance`); the loop on the device against the loop on the CPU.
    void kernelsEqualTheLoop(torch::Device device, double float32_tolerance) {
        for (const auto& base : cases()) {
            for (const auto dtype : {torch::kFloat32, torch::kFloat64}) {
                const double tolerance = dtype == torch::kFloat64 ? 1e-12 : float32_tolerance;
                const auto reference = train(withKernel(base, OptimizerKernel::PerParameter), dtype, 12, device);
                // The reference moved: the comparison is not between untouched parameters.
                QVERIFY(maxDiff(reference, makeParams(dtype)) > 1e-3);
                if (!device.is_cpu())
                    QVERIFY(maxDiff(reference, train(withKernel(base, OptimizerKernel::PerParameter), dtype)) <=
                            tolerance);
                for (const auto kernel : multiTensorKernels()) {
                    const double d = maxDiff(train(withKernel(base, kernel), dtype, 12, device), reference);
                    QVERIFY2(d <= tolerance, qPrintable(QString("%1 %2, %3, %4: max difference %5")
                                                            .arg(QString::fromStdString(device.str()), label(base),
                                                                 optimizerKernelName(kernel),
                                                                 dtype == torch::kFloat64 ? "float64" : "float32")
                                                            .arg(d)));
                }
            }
        }
    }

    // An inf injected at step 2 under the GradScaler, with and without unscale_ before the step.
    void scalerSkipsTheSameStep(torch::Device device, double tolerance) {
        for (const auto& base : cases()) {
            for (const bool unscale_first : {false, true}) {
                const auto reference =
                    scaledRun(withKernel(base, OptimizerKernel::PerParameter), 6, 2, unscale_first, device);
                QCOMPARE(reference.skipped, int64_t{1});
                QCOMPARE(reference.scales[2], 512.0);  // halved at the inf
                for (const auto kernel : multiTensorKernels()) {
                    const auto run = scaledRun(withKernel(base, kernel), 6, 2, unscale_first, device);
                    QCOMPARE(run.skipped, int64_t{1});
                    QCOMPARE(run.scales, reference.scales);
                    const double d = maxDiff(run.params, reference.params);
                    QVERIFY2(d <= tolerance, qPrintable(QString("%1 %2, %3%4: max difference %5")
                                                            .arg(QString::fromStdString(device.str()), label(base),
                                                                 optimizerKernelName(kernel),
                                                                 unscale_first ? ", unscaled first" : "")
                                                            .arg(d)));
                }
            }
        }
    }

private Q_SLOTS:
    void multiTensorKernelsEqualThePerParameterLoop() { kernelsEqualTheLoop(torch::kCPU, 2e-6); }

    // 16-mixed: the fused kernels get the scale and the inf flag; the per-parameter and foreach
    // paths unscale and read the flag back. All skip the injected step and halve the scale.
    void theLossScalerSkipsTheSameStepWithEveryKernel() { scalerSkipsTheSameStep(torch::kCPU, 2e-6); }

    // A skipped first step leaves the fused Adam's step count at 0: the next step's bias
    // correction is step 1's, as in the per-parameter path that never stepped.
    void aSkippedStepDoesNotCount() {
        if (!compat::kFusedOptimizers) QSKIP("this LibTorch has no fused kernels");
        OptimizerConfig c;
        c.name = "adam";
        c.lr = 0.01;
        const auto reference = scaledRun(withKernel(c, OptimizerKernel::PerParameter), 4, 0);
        const auto fused = scaledRun(withKernel(c, OptimizerKernel::Fused), 4, 0);
        QCOMPARE(fused.skipped, int64_t{1});
        QVERIFY(maxDiff(fused.params, reference.params) <= 2e-6);
    }

    // The learning rate kept on the device (what trainer.cuda_graph=step uses) follows the
    // schedule: the fused kernels give the per-parameter loop's result with a rate changed at every
    // step. The foreach kernels cannot take it, and say so.
    void aLearningRateOnTheDeviceFollowsTheSchedule() {
        if (!compat::kFusedOptimizers) QSKIP("this LibTorch has no fused kernels");
        for (const auto& base : cases()) {
            const auto reference = train(withKernel(base, OptimizerKernel::PerParameter), torch::kFloat32);
            const auto fused = train(withKernel(base, OptimizerKernel::Fused), torch::kFloat32, 12, torch::kCPU, true);
            QVERIFY2(!fused.empty(), qPrintable(label(base)));
            const double d = maxDiff(fused, reference);
            QVERIFY2(d <= 2e-6, qPrintable(QString("%1: max difference %2").arg(label(base)).arg(d)));
            // A rate that stayed at its first value would not give the scheduled result.
            const auto constant = train(withKernel(base, OptimizerKernel::Fused), torch::kFloat32, 1);
            QVERIFY(maxDiff(fused, constant) > 1e-4);
            QVERIFY(train(withKernel(base, OptimizerKernel::Foreach), torch::kFloat32, 1, torch::kCPU, true).empty());
        }
    }

    // Saved mid-run by a multi-tensor kernel, continued by another: the same result as one run.
    void aSavedStateLoadsIntoAnotherKernel() {
        for (const auto& base : cases()) {
            for (const auto kernel : multiTensorKernels()) {
                const auto reference = train(withKernel(base, OptimizerKernel::PerParameter), torch::kFloat64, 10);
                auto ps = makeParams(torch::kFloat64);
                auto first = createOptimizer(withKernel(base, kernel), ps);
                for (int s = 0; s < 5; ++s) {
                    setGrads(ps, s);
                    setLearningRate(*first, base.lr * std::pow(0.9, s));
                    first->step();
                }
                std::stringstream saved;
                {
                    torch::serialize::OutputArchive archive;
                    first->save(archive);
                    archive.save_to(saved);
                }
                auto second = createOptimizer(withKernel(base, OptimizerKernel::PerParameter), ps);
                {
                    torch::serialize::InputArchive archive;
                    archive.load_from(saved);
                    second->load(archive);
                }
                for (int s = 5; s < 10; ++s) {
                    setGrads(ps, s);
                    setLearningRate(*second, base.lr * std::pow(0.9, s));
                    second->step();
                }
                std::vector<torch::Tensor> out;
                for (auto& p : ps) out.push_back(p.detach());
                const double d = maxDiff(out, reference);
                QVERIFY2(d <= 1e-12, qPrintable(QString("%1, %2 then per_parameter: %3")
                                                    .arg(label(base), optimizerKernelName(kernel))
                                                    .arg(d)));
            }
        }
    }

    // trainer.offload_optimizer's optimizer: stepping host copies of the tensors and copying the
    // values back is the optimizer it wraps, step for step, through a schedule, a parameter without
    // gradients, a write to the tensors between steps (followDevice) and a save loaded into the
    // plain optimizer (and the other way round). On a GPU the copies are pinned.
    void anOffloadedOptimizerStepsAsTheOptimizerItWraps() {
        std::vector<torch::Device> devices{torch::kCPU};
        if (haveCuda()) devices.emplace_back(torch::kCUDA, 0);
        for (const auto& device : devices) {
            for (const auto& config : cases()) {
                const auto write = [](std::vector<torch::Tensor>& ps) {
                    torch::NoGradGuard g;
                    ps[1].detach().fill_(0.25);   // a resume's or a snapshot's write
                };
                QStringList problems;   // QVERIFY cannot return from the lambda
                const auto run = [&](bool offload_first, bool offload_second) -> std::vector<torch::Tensor> {
                    auto ps = makeParams(torch::kFloat64, device);
                    const auto make = [&](bool offload) -> std::unique_ptr<torch::optim::Optimizer> {
                        if (offload) return OffloadedOptimizer::create(config, ps);
                        return createOptimizer(config, ps);
                    };
                    auto first = make(offload_first);
                    if (auto* off = offloaded(*first)) {
                        if (off->pinned() != device.is_cuda()) problems << "pinned only on a GPU";
                        if (!off->hostTensors()[0].device().is_cpu()) problems << "host copies on the host";
                        if (off->hostTensors()[0].data_ptr() == ps[0].data_ptr()) problems << "copies of their own";
                    }
                    for (int s = 0; s < 5; ++s) {
                        setGrads(ps, s);
                        setLearningRate(*first, config.lr * std::pow(0.9, s));
                        first->step();
                    }
                    write(ps);
                    if (auto* off = offloaded(*first)) {
                        off->followDevice()();
                        // Its state is the inner optimizer's, on the host; its own holds none.
                        if (!first->state().empty()) problems << "no state of its own";
                        if (off->inner().state().empty() != (config.name == "sgd" && config.momentum == 0.0))
                            problems << "state in the inner optimizer";
                        if (off->steps() != 5) problems << "5 steps counted";
                    }
                    for (int s = 5; s < 8; ++s) {
                        setGrads(ps, s);
                        setLearningRate(*first, config.lr * std::pow(0.9, s));
                        first->step();
                    }
                    // As checkpoints save and load it: read on the host, then onto the parameters' device.
                    const torch::Tensor saved = optimizerBytes(*first);
                    auto second = make(offload_second);
                    loadOptimizerBytes(saved, *second);
                    for (int s = 8; s < 12; ++s) {
                        setGrads(ps, s);
                        setLearningRate(*second, config.lr * std::pow(0.9, s));
                        second->step();
                    }
                    std::vector<torch::Tensor> out;
                    for (auto& p : ps) out.push_back(p.detach().cpu());
                    return out;
                };
                const auto plain = run(false, false);
                for (const auto& [a, b] : std::vector<std::pair<bool, bool>>{{true, true}, {true, false}, {false, true}}) {
                    const double d = maxDiff(run(a, b), plain);
                    QVERIFY2(problems.isEmpty(), qPrintable(label(config) + ": " + problems.join(", ")));
                    QVERIFY2(d <= (device.is_cuda() ? 1e-6 : 1e-12),
                             qPrintable(QString("%1 on %2, offloaded %3 then %4: %5")
                                            .arg(label(config), QString::fromStdString(device.str()))
                                            .arg(a).arg(b).arg(d)));
                }
                // Not vacuous: the write changed the result.
                QVERIFY(maxDiff(train(config, torch::kFloat64, 12, device), plain) > 1e-6);
            }
        }
    }

    // A state read onto one device follows parameters that live on another (a shard read on the
    // host for a GPU's parameters; an offloaded optimizer's state read onto the GPU for its host
    // copies). The meta device stands in for the GPU here; the CUDA leg above does it for real.
    void aLoadedStateFollowsItsParameters() {
        for (const auto& config : cases()) {
            auto ps = makeParams(torch::kFloat32);
            auto trained = createOptimizer(config, ps);
            for (int s = 0; s < 3; ++s) {
                setGrads(ps, s);
                trained->step();
            }
            std::stringstream saved;
            {
                torch::serialize::OutputArchive archive;
                trained->save(archive);
                archive.save_to(saved);
            }
            std::vector<torch::Tensor> elsewhere;
            elsewhere.reserve(ps.size());
            for (const auto& p : ps) elsewhere.push_back(torch::empty_like(p, torch::Device(torch::kMeta)));
            auto loaded = createOptimizer(config, elsewhere);
            torch::serialize::InputArchive archive;
            archive.load_from(saved);
            loaded->load(archive);
            std::set<std::string> before, after;
            const auto collect = [&](std::set<std::string>& into) {
                for (const auto& [key, state] : loaded->state()) {
                    (void)key;
                    for (const torch::Tensor& t : stateTensors(*state)) into.insert(t.device().str());
                }
            };
            collect(before);
            moveStateToParameters(*loaded);
            collect(after);
            const bool has_state = !(config.name == "sgd" && config.momentum == 0.0);
            QCOMPARE(loaded->state().empty(), !has_state);
            if (!has_state) continue;
            QVERIFY2(before == std::set<std::string>{"cpu"}, qPrintable(label(config)));
            QVERIFY2(after == std::set<std::string>{"meta"}, qPrintable(label(config)));
        }
    }

    // The same comparisons on the GPU, where the fused and foreach kernels are CUDA kernels and the
    // GradScaler's unscale and inf check are ATen's native _amp_* ops (issue 27).
    void kernelsOnCudaEqualThePerParameterLoop() {
        if (!haveCuda()) QSKIP("needs a CUDA device");
        kernelsEqualTheLoop(torch::Device(torch::kCUDA, 0), 1e-5);
    }

    void theLossScalerOnCudaSkipsTheSameStepWithEveryKernel() {
        if (!haveCuda()) QSKIP("needs a CUDA device");
        scalerSkipsTheSameStep(torch::Device(torch::kCUDA, 0), 1e-5);
    }

    void autoPicksTheFastestKernelThisBuildHas() {
        OptimizerConfig c;  // adam, auto
        const auto chosen = resolveOptimizerKernel(c);
        QCOMPARE(chosen, compat::kFusedOptimizers ? OptimizerKernel::Fused : OptimizerKernel::Foreach);
        QVERIFY(QString::fromStdString(describeOptimizerKernel(c)).endsWith("chosen by auto"));
        // The created optimizer takes the scaler exactly when its kernel is fused.
        auto ps = makeParams(torch::kFloat32);
        QCOMPARE(scalerAware(*createOptimizer(c, ps)) != nullptr, chosen == OptimizerKernel::Fused);
        c.implementation = "foreach";
        QVERIFY(scalerAware(*createOptimizer(c, ps)) == nullptr);
        // adagrad has only the loop; any implementation steps per parameter.
        c.name = "adagrad";
        QCOMPARE(resolveOptimizerKernel(c), OptimizerKernel::PerParameter);
        QVERIFY(QString::fromStdString(describeOptimizerKernel(c)).contains("adagrad has only"));
    }

    void refusalsNameTheKey() {
        OptimizerConfig c;
        c.implementation = "fused";
        if (!compat::kFusedOptimizers) {
            QVERIFY_THROWS_EXCEPTION(ConfigError, resolveOptimizerKernel(c));
        }
        ExperimentConfig config;
        config.optimizer.implementation = "fused";
        DeviceCapabilities caps;
        caps.fused_optimizers = false;
        auto issues = validate(config, caps);
        auto names = [](const std::vector<ConfigIssue>& is) {
            QStringList out;
            for (const auto& i : is) out << QString::fromStdString(i.key);
            return out;
        };
        QVERIFY(names(issues).contains("optimizer.implementation"));
        caps.fused_optimizers = true;
        QVERIFY(!names(validate(config, caps)).contains("optimizer.implementation"));
        // The form offers fused only where the build has it.
        const ConfigKey* key = findConfigKey("optimizer.implementation");
        QVERIFY(key);
        caps.fused_optimizers = false;
        const auto offered = offeredChoices(*key, caps);
        QVERIFY(std::find(offered.begin(), offered.end(), "fused") == offered.end());
        QVERIFY(std::find(offered.begin(), offered.end(), "foreach") != offered.end());

        config = ExperimentConfig{};
        config.optimizer.name = "sgd";
        config.optimizer.momentum = 0.0;
        config.optimizer.nesterov = true;
        QVERIFY(names(validate(config, caps)).contains("optimizer.nesterov"));
        // Nesterov and AMSGrad say where they do nothing.
        config.optimizer.name = "adam";
        QVERIFY(!noEffectReason(*findConfigKey("optimizer.nesterov"), config, caps).empty());
        QVERIFY(noEffectReason(*findConfigKey("optimizer.amsgrad"), config, caps).empty());
    }
};

QTEST_APPLESS_MAIN(TestOptimizers)
#include "test_optimizers.moc"
