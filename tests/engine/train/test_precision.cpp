// Precision and GradScaler: autocast guards for bf16 on CPU, and the GradScaler's skip, backoff
// and growth semantics (PyTorch's torch.amp.GradScaler), tested on CPU directly.
#include "engine/TorchCompat.h"
#include "engine/strategy/GradScaler.h"
#include "engine/strategy/Precision.h"
#include "engine/strategy/Strategy.h"

#include <QTest>

#include <limits>

using namespace hearth;

namespace {

struct TinyProblem {
    torch::nn::Linear layer{4, 2};
    torch::optim::SGD opt{layer->parameters(), torch::optim::SGDOptions(0.1)};
    torch::Tensor x = torch::randn({8, 4});
    torch::Tensor y = torch::randint(0, 2, {8}, torch::kInt64);

    torch::Tensor loss() { return torch::nn::functional::cross_entropy(layer->forward(x), y); }
    // One scaled backward, optionally with an inf injected into the weight gradient.
    void backward(GradScaler& scaler, bool inject_inf) {
        compat::clearGradients(opt);
        scaler.scale(loss()).backward();
        if (inject_inf) {
            torch::NoGradGuard g;
            layer->weight.mutable_grad()[0][0] = std::numeric_limits<float>::infinity();
        }
    }
};

GradScalerOptions smallScaler() {
    GradScalerOptions o;
    o.init_scale = 1024.0;
    o.growth_interval = 3;
    return o;
}

}  // namespace

class TestPrecision : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::manual_seed(0); }

    void scalerSkipsStepOnInf() {
        TinyProblem p;
        GradScaler scaler(smallScaler());
        // Two good steps first so the tracker is non-zero.
        for (int i = 0; i < 2; ++i) {
            p.backward(scaler, false);
            scaler.step(p.opt);
            QCOMPARE(scaler.takeSkippedSteps(), int64_t{0});
            scaler.update();
        }
        QCOMPARE(scaler.growthTracker(), int64_t(2));
        const auto before = p.layer->weight.detach().clone();
        p.backward(scaler, true);
        scaler.step(p.opt);
        QCOMPARE(scaler.takeSkippedSteps(), int64_t{1});  // read once: the count starts again
        scaler.update();
        QVERIFY(torch::equal(p.layer->weight.detach(), before));
        QCOMPARE(scaler.currentScale(), 512.0);
        QCOMPARE(scaler.growthTracker(), int64_t(0));
    }

    // A training state keeps the scale and the growth tracker; a new scaler given them (before its
    // first step, as on resume) continues exactly like the one that never stopped.
    void scalerStateContinuesExactly() {
        TinyProblem p;
        GradScaler scaler(smallScaler());
        p.backward(scaler, true);   // backs off to 512
        scaler.step(p.opt);
        scaler.update();
        p.backward(scaler, false);
        scaler.step(p.opt);
        scaler.update();
        const GradScalerState saved = scaler.state();
        QCOMPARE(saved.scale, 512.0);
        QCOMPARE(saved.growth_tracker, int64_t(1));
        GradScaler resumed(smallScaler());
        resumed.loadState(saved);
        QCOMPARE(resumed.currentScale(), 512.0);
        for (int i = 0; i < 2; ++i) {   // two more good steps: both grow to 1024 at the third
            for (GradScaler* s : {&scaler, &resumed}) {
                p.backward(*s, false);
                s->step(p.opt);
                s->update();
            }
            QCOMPARE(resumed.currentScale(), scaler.currentScale());
            QCOMPARE(resumed.growthTracker(), scaler.growthTracker());
        }
        QCOMPARE(resumed.currentScale(), 1024.0);
        resumed.loadState({4096.0, 2});   // also once the scale exists
        QCOMPARE(resumed.currentScale(), 4096.0);
        QCOMPARE(resumed.growthTracker(), int64_t(2));
    }

    void scalerGrowsAfterGrowthInterval() {
        TinyProblem p;
        GradScaler scaler(smallScaler());
        for (int i = 0; i < 3; ++i) {
            p.backward(scaler, false);
            scaler.step(p.opt);
            QCOMPARE(scaler.takeSkippedSteps(), int64_t{0});
            scaler.update();
            QCOMPARE(scaler.currentScale(), i < 2 ? 1024.0 : 2048.0);
        }
        QCOMPARE(scaler.growthTracker(), int64_t(0));
        p.backward(scaler, false);
        scaler.step(p.opt);
        scaler.update();
        QCOMPARE(scaler.growthTracker(), int64_t(1));
    }

    void scalerUnscalesGradientsToTheirTrueValues() {
        TinyProblem p;
        compat::clearGradients(p.opt);
        p.loss().backward();
        const auto plain = p.layer->weight.grad().clone();
        GradScaler scaler(smallScaler());
        p.backward(scaler, false);
        QVERIFY(!torch::allclose(p.layer->weight.grad(), plain));  // scaled by 1024
        scaler.unscale_(p.opt);
        QVERIFY(torch::allclose(p.layer->weight.grad(), plain, 1e-5, 1e-7));
        QVERIFY_THROWS_EXCEPTION(std::logic_error, scaler.unscale_(p.opt));
    }

    void scalerDefaultsMatchPyTorch() {
        GradScaler scaler;
        QCOMPARE(scaler.options().init_scale, 65536.0);
        QCOMPARE(scaler.options().growth_factor, 2.0);
        QCOMPARE(scaler.options().backoff_factor, 0.5);
        QCOMPARE(scaler.options().growth_interval, int64_t(2000));
    }

    void autocastGuardRunsLinearInBf16OnCpu() {
        torch::nn::Linear layer(4, 3);
        const auto x = torch::randn({2, 4});
        QVERIFY(!compat::autocastEnabled(c10::DeviceType::CPU));
        {
            compat::AutocastGuard guard(c10::DeviceType::CPU, torch::kBFloat16);
            QVERIFY(compat::autocastEnabled(c10::DeviceType::CPU));
            QCOMPARE(layer->forward(x).scalar_type(), torch::kBFloat16);
        }
        QVERIFY(!compat::autocastEnabled(c10::DeviceType::CPU));
        QCOMPARE(layer->forward(x).scalar_type(), torch::kFloat32);
    }

    void bf16PrecisionReturnsFloatLogitsAndFloatGrads() {
        ModelConfig c;
        c.name = "mlp";
        c.hidden = {8};
        auto model = createModel(c, ModelInput{{4}, 3});
        Precision precision("bf16-mixed", torch::kCPU);
        QVERIFY(precision.autocasts());
        QVERIFY(!precision.scalesLoss());
        const auto logits = precision.forward(*model, torch::randn({5, 4}));
        QCOMPARE(logits.scalar_type(), torch::kFloat32);
        precision.backward(torch::nn::functional::cross_entropy(logits, torch::zeros({5}, torch::kInt64)));
        for (const auto& p : model->parameters()) QCOMPARE(p.grad().scalar_type(), torch::kFloat32);
        QVERIFY(QString::fromStdString(precision.describe()).contains("CPU autocast"));
    }

    void fp16OnCpuIsRefusedBefore24() {
        if (compat::kCpuFp16Autocast) QSKIP("this LibTorch has CPU float16 autocast");
        QVERIFY_THROWS_EXCEPTION(ConfigError, Precision("16-mixed", torch::kCPU));
    }

    // backward() under 16-mixed multiplies the gradients by the loss scale (65536 at the start);
    // optimizerStep() unscales them before the update.
    void sixteenMixedOnCudaScalesTheLoss() {
        if (!torch::cuda::is_available()) QSKIP("needs a CUDA device");
        const torch::Device dev(torch::kCUDA, 0);
        torch::manual_seed(1);
        torch::nn::Linear layer(4, 2);
        layer->to(dev);
        const auto x = torch::randn({8, 4}, dev);
        const auto y = torch::randint(0, 2, {8}, torch::dtype(torch::kInt64).device(dev));
        torch::nn::functional::cross_entropy(layer->forward(x), y).backward();
        const auto plain = layer->weight.grad().clone();
        layer->weight.mutable_grad() = torch::Tensor();
        layer->bias.mutable_grad() = torch::Tensor();

        Precision precision("16-mixed", dev);
        QVERIFY(precision.scalesLoss());
        QCOMPARE(precision.lossScale(), 65536.0);
        precision.backward(torch::nn::functional::cross_entropy(layer->forward(x), y));
        QVERIFY(torch::allclose(layer->weight.grad() / 65536.0, plain, 1e-4, 1e-6));
        torch::optim::SGD opt(layer->parameters(), torch::optim::SGDOptions(0.0));
        precision.optimizerStep(opt, std::nullopt);
        QCOMPARE(precision.takeSkippedSteps(), int64_t{0});
        QVERIFY(torch::allclose(layer->weight.grad(), plain, 1e-4, 1e-6));  // unscaled before the step
    }

    // trainer.set_grads_to_none: after a step the gradients are gone, or zeroed in their own memory.
    void stepDropsOrZeroesGradientsAsConfigured() {
        for (const bool to_none : {true, false}) {
            TrainerConfig trainer;
            trainer.set_grads_to_none = to_none;
            auto strategy = createStrategy(trainer, torch::kCPU);
            QCOMPARE(strategy->gradsToNone(), to_none);
            TinyProblem p;
            p.loss().backward();
            const void* storage = p.layer->weight.grad().data_ptr();
            strategy->optimizerStep(p.opt, std::nullopt);
            if (to_none) {
                QVERIFY(!p.layer->weight.grad().defined());
                QVERIFY(!p.layer->bias.grad().defined());
            } else {
                QVERIFY(p.layer->weight.grad().defined());
                QCOMPARE(p.layer->weight.grad().data_ptr(), storage);   // the same memory, kept
                QCOMPARE(p.layer->weight.grad().abs().sum().item<double>(), 0.0);
                QCOMPARE(p.layer->bias.grad().abs().sum().item<double>(), 0.0);
            }
        }
        // Every strategy keeps the setting as given (ddp and zero1 drop their bucket views with it).
        for (const char* strategy : {"ddp", "zero1", "zero2"}) {
            for (const bool to_none : {true, false}) {
                TrainerConfig t;
                t.strategy = strategy;
                t.set_grads_to_none = to_none;
                QCOMPARE(resolveTrainer(t, DeviceCapabilities{}).set_grads_to_none, to_none);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestPrecision)
#include "test_precision.moc"
