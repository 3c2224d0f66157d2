// Model registry: forward shapes, input checks, parameter counts and per-layer summaries; the
// memory toggles (per-block activation checkpointing, in-place ReLU) leave the numbers unchanged;
// the models' FLOP counts equal PyTorch's FlopCounterMode, and the peak table finds GPUs by name;
// each model lists its blocks and calls the block hooks (ZeRO-3's) around them in forward order;
// the pipeline's stages chained give the whole forward, and its cuts balance the stages' FLOPs.
#include "engine/models/ModelRegistry.h"
#include "engine/monitor/PeakFlops.h"
#include "engine/strategy/PipelineStrategy.h"

#include <QTest>

#include <set>

using namespace hearth;

namespace {

// One training step's loss, every gradient and every buffer (BatchNorm's running statistics),
// for a fresh model from seed 7 on a fixed batch, with the toggles given.
struct StepResult {
    double loss = 0.0;
    std::vector<torch::Tensor> grads;
    std::vector<torch::Tensor> buffers;
};
StepResult trainingStep(ModelConfig c, bool checkpointing, bool inplace) {
    c.gradient_checkpointing = checkpointing;
    c.inplace_activations = inplace;
    torch::manual_seed(7);
    auto m = createModel(c, ModelInput{{1, 16, 16}, 5});
    m->train();
    const auto x = torch::randn({6, 1, 16, 16});
    const auto y = torch::tensor({0, 1, 2, 3, 4, 0}, torch::kInt64);
    torch::manual_seed(99);   // the same dropout masks in every variant
    auto loss = torch::nn::functional::cross_entropy(m->forward(x), y);
    loss.backward();
    StepResult r;
    r.loss = loss.item<double>();
    for (const auto& p : m->parameters()) {
        if (!p.grad().defined()) throw std::runtime_error("a parameter got no gradient");
        r.grads.push_back(p.grad().clone());
    }
    for (const auto& b : m->buffers()) r.buffers.push_back(b.clone());
    return r;
}

}  // namespace

class TestModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void mlpMapsFlattenedInputToLogits() {
        ModelConfig c;
        c.name = "mlp";
        c.hidden = {16, 8};
        auto m = createModel(c, ModelInput{{1, 28, 28}, 10});
        const auto out = m->forward(torch::randn({5, 1, 28, 28}));
        QCOMPARE(out.sizes().vec(), (std::vector<int64_t>{5, 10}));
        // 784*16+16 + 16*8+8 + 8*10+10
        QCOMPARE(parameterCount(*m), int64_t(784 * 16 + 16 + 16 * 8 + 8 + 8 * 10 + 10));
    }

    void cnnMapsImagesToLogits() {
        ModelConfig c;
        c.name = "cnn";
        c.channels = {4, 8};
        auto m = createModel(c, ModelInput{{1, 28, 28}, 10});
        QVERIFY(m->isConvolutional());
        const auto out = m->forward(torch::randn({3, 1, 28, 28}));
        QCOMPARE(out.sizes().vec(), (std::vector<int64_t>{3, 10}));
        // Two blocks halve 28 -> 7; the head sees 8*7*7 features.
        const int64_t convs = 1 * 4 * 9 + 4 * 4 * 9 + 4 * 8 * 9 + 8 * 8 * 9;
        const int64_t bns = 2 * (4 + 4 + 8 + 8);
        QCOMPARE(parameterCount(*m), convs + bns + 8 * 7 * 7 * 10 + 10);
    }

    void cnnRejectsTabularInput() {
        ModelConfig c;
        c.name = "cnn";
        try {
            createModel(c, ModelInput{{12}, 3});
            QFAIL("cnn accepted tabular input");
        } catch (const ConfigError& e) {
            QCOMPARE(QString::fromStdString(e.key()), QString("model.name"));
            QVERIFY(QString(e.what()).contains("cnn needs image input"));
        }
    }

    void unknownModelNamesTheKnownOnes() {
        ModelConfig c;
        c.name = "transformer9000";
        try {
            createModel(c, ModelInput{{4}, 2});
            QFAIL("unknown model accepted");
        } catch (const ConfigError& e) {
            QCOMPARE(QString::fromStdString(e.key()), QString("model.name"));
            QVERIFY(QString(e.what()).contains("mlp"));
        }
        QCOMPARE(modelNames(), (std::vector<std::string>{"bert", "cnn", "distilbert", "mlp", "resnet18", "resnet34",
                                                         "resnet50", "torchscript"}));
    }

    void summaryListsEveryLeafWithItsParameters() {
        ModelConfig c;
        c.name = "mlp";
        c.hidden = {16};
        auto m = createModel(c, ModelInput{{4}, 3});
        const auto lines = modelSummary(*m);
        // flatten, fc1, relu1, dropout1, head
        QCOMPARE(lines.size(), size_t(5));
        QVERIFY(QString::fromStdString(lines[1]).startsWith("fc1"));
        QVERIFY(QString::fromStdString(lines[1]).contains("Linear(in_features=4, out_features=16"));
        QVERIFY(QString::fromStdString(lines[1]).endsWith(" 80 params"));
        QVERIFY(QString::fromStdString(lines[4]).endsWith(" 51 params"));
        QVERIFY(QString::fromStdString(lines[2]).endsWith(" 0 params"));
    }

    void dropoutZeroMakesTrainingForwardDeterministic() {
        ModelConfig c;
        c.name = "mlp";
        c.hidden = {8};
        c.dropout = 0.0;
        auto m = createModel(c, ModelInput{{4}, 2});
        m->train();
        const auto x = torch::randn({6, 4});
        QVERIFY(torch::equal(m->forward(x), m->forward(x)));
    }

    // The other half: with dropout > 0 training forwards differ (units are dropped) while
    // evaluation forwards are deterministic.
    void dropoutIsAppliedInTrainingOnly() {
        ModelConfig c;
        c.name = "mlp";
        c.hidden = {64};
        c.dropout = 0.5;
        auto m = createModel(c, ModelInput{{4}, 2});
        const auto x = torch::randn({16, 4});
        m->train();
        QVERIFY(!torch::equal(m->forward(x), m->forward(x)));
        m->eval();
        QVERIFY(torch::equal(m->forward(x), m->forward(x)));
    }

    void memoryTogglesKeepLossGradientsAndRunningStats_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<bool>("checkpointing");
        QTest::addColumn<bool>("inplace");
        for (const char* model : {"cnn", "mlp"}) {
            QTest::addRow("%s checkpointing", model) << model << true << false;
            QTest::addRow("%s in-place", model) << model << false << true;
            QTest::addRow("%s both", model) << model << true << true;
        }
    }
    void memoryTogglesKeepLossGradientsAndRunningStats() {
        QFETCH(QString, model);
        QFETCH(bool, checkpointing);
        QFETCH(bool, inplace);
        ModelConfig c;
        c.name = model.toStdString();
        c.channels = {4, 8};
        c.hidden = {32, 16};
        c.dropout = 0.3;   // the mlp's blocks hold dropout: the recomputation must replay its masks
        const auto plain = trainingStep(c, false, false);
        const auto toggled = trainingStep(c, checkpointing, inplace);
        QCOMPARE(toggled.loss, plain.loss);
        QCOMPARE(toggled.grads.size(), plain.grads.size());
        for (size_t i = 0; i < plain.grads.size(); ++i)
            QVERIFY2(torch::allclose(toggled.grads[i], plain.grads[i], 1e-5, 1e-6),
                     qPrintable(QString("gradient %1 differs").arg(i)));
        // BatchNorm ran twice under checkpointing (forward and recomputation); its running
        // statistics and batch count must show one update.
        QCOMPARE(toggled.buffers.size(), plain.buffers.size());
        for (size_t i = 0; i < plain.buffers.size(); ++i)
            QVERIFY2(torch::equal(toggled.buffers[i], plain.buffers[i]), qPrintable(QString("buffer %1 differs").arg(i)));
        if (c.name == "cnn") QVERIFY(!plain.buffers.empty());
    }

    // Checkpointing applies in training with grad mode on; evaluation and no-grad run plainly.
    void checkpointingOnlyInTraining() {
        ModelConfig c;
        c.name = "cnn";
        c.channels = {4};
        c.gradient_checkpointing = true;
        auto m = createModel(c, ModelInput{{1, 8, 8}, 3});
        QVERIFY(m->gradientCheckpointing());
        m->train();
        QVERIFY(m->checkpointsNow());
        {
            torch::NoGradGuard no_grad;
            QVERIFY(!m->checkpointsNow());
        }
        m->eval();
        QVERIFY(!m->checkpointsNow());
        // The first block sees images that need no gradient; its parameters still get theirs.
        m->train();
        m->forward(torch::randn({2, 1, 8, 8})).sum().backward();
        for (const auto& p : m->parameters()) QVERIFY(p.grad().defined());
    }

    // The toggle reaches the layers: every ReLU of the CNN and the MLP works in place, or none does.
    void inplaceActivationsReachEveryRelu() {
        for (const char* name : {"cnn", "mlp"}) {
            for (const bool inplace : {false, true}) {
                ModelConfig c;
                c.name = name;
                c.inplace_activations = inplace;
                auto m = createModel(c, ModelInput{{1, 16, 16}, 5});
                int relus = 0;
                for (const auto& module : m->modules(/*include_self=*/false)) {
                    if (const auto* relu = module->as<torch::nn::ReLU>()) {
                        ++relus;
                        QCOMPARE(relu->options.inplace(), inplace);
                    }
                }
                QCOMPARE(relus, c.name == "cnn" ? 4 : 2);
            }
        }
    }

    // The counts PyTorch's own counter gives for the same models (tests/fixtures/flops/
    // flop_counter.py: torch.utils.flop_counter.FlopCounterMode, PyTorch 2.11; DistilBERT from
    // transformers with eager attention), built by the registry from the defaults.
    void modelFlopsMatchPyTorchsFlopCounter() {
        ModelConfig c;
        c.name = "mlp";
        QCOMPARE(createModel(c, ModelInput{{1, 28, 28}, 10})->forwardFlops().forward(1), 469504.0);
        c.name = "cnn";
        const auto cnn = createModel(c, ModelInput{{1, 28, 28}, 10})->forwardFlops();
        QCOMPARE(cnn.forward(1), 36641024.0);
        QCOMPARE(cnn.training(64), 3.0 * 64 * 36641024.0);   // backward: twice the forward
        c.name = "distilbert";
        c.hidden_size = 768;
        c.num_layers = 6;
        c.num_heads = 12;
        c.intermediate_size = 3072;
        ModelInput text{{128}, 2};
        text.vocab_size = 30522;
        text.max_length = 512;
        const auto distilbert = createModel(c, text)->forwardFlops();
        QCOMPARE(distilbert.forward(1, 128), 11174808576.0);
        QVERIFY(distilbert.forward(1, 256) > 2.0 * distilbert.forward(1, 128));   // attention grows with T^2
        // The counts do not depend on the memory toggles (model FLOPs, not recomputed ones).
        c.gradient_checkpointing = true;
        QCOMPARE(createModel(c, text)->forwardFlops().forward(1, 128), 11174808576.0);
    }

    void peakFlopsByDeviceNameAndPrecision() {
        const auto h200 = densePeakFlops("NVIDIA H200", "bf16-mixed", false);
        QVERIFY(h200);
        QCOMPARE(h200->tflops, 989.4);
        QVERIFY(QString::fromStdString(h200->basis).contains("dense bf16"));
        QCOMPARE(densePeakFlops("NVIDIA H100 80GB HBM3", "16-mixed", false)->tflops, 989.4);
        QCOMPARE(densePeakFlops("NVIDIA H100 PCIe", "bf16-mixed", false)->tflops, 756.0);
        QCOMPARE(densePeakFlops("NVIDIA H100 NVL", "bf16-mixed", false)->tflops, 835.0);
        QCOMPARE(densePeakFlops("NVIDIA A100-SXM4-80GB", "32-true", false)->tflops, 19.5);
        QCOMPARE(densePeakFlops("NVIDIA A100-SXM4-80GB", "32-true", true)->tflops, 156.0);   // TF32
        QCOMPARE(densePeakFlops("NVIDIA L40S", "bf16-mixed", false)->tflops, 362.05);
        QCOMPARE(densePeakFlops("NVIDIA L4", "bf16-mixed", false)->tflops, 121.0);
        QCOMPARE(densePeakFlops("NVIDIA A10", "16-mixed", false)->tflops, 125.0);
        QVERIFY(!densePeakFlops("NVIDIA A10G", "16-mixed", false));         // not the A10's figures
        QVERIFY(!densePeakFlops("Tesla V100-SXM2-16GB", "bf16-mixed", false));   // no bf16 there
        QCOMPARE(densePeakFlops("Tesla V100-SXM2-16GB", "16-mixed", false)->tflops, 125.0);
        QVERIFY(!densePeakFlops("cpu", "32-true", false));
        QVERIFY(!densePeakFlops("NVIDIA H200", "64-true", false));
    }

    // ZeRO-3's view of a model: its blocks in forward order, each with its own parameters (no
    // parameter in two blocks), and the hooks called around each block in that order, in
    // training, with checkpointing, and in evaluation.
    void blocksAreListedAndHookedInForwardOrder_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("blocks");
        QTest::addColumn<bool>("checkpointing");
        QTest::newRow("mlp") << "mlp" << 2 << false;
        QTest::newRow("cnn") << "cnn" << 2 << false;
        QTest::newRow("cnn, checkpointing") << "cnn" << 2 << true;
        QTest::newRow("resnet18") << "resnet18" << 8 << false;
        QTest::newRow("bert") << "bert" << 2 << true;
    }
    void blocksAreListedAndHookedInForwardOrder() {
        QFETCH(QString, name);
        QFETCH(int, blocks);
        QFETCH(bool, checkpointing);
        ModelConfig c;
        c.name = name.toStdString();
        c.hidden = {16, 8};
        c.num_layers = 2;
        c.hidden_size = 32;
        c.num_heads = 2;
        c.intermediate_size = 64;
        c.gradient_checkpointing = checkpointing;
        const bool text = name == "bert";
        ModelInput input{text ? std::vector<int64_t>{12} : std::vector<int64_t>{1, 32, 32}, 3};
        input.vocab_size = 50;
        input.max_length = 12;
        auto m = createModel(c, input);
        const auto listed = m->blockParameters();
        QCOMPARE(static_cast<int>(listed.size()), blocks);
        std::set<const void*> model_params, seen;
        for (const auto& p : m->parameters()) model_params.insert(p.unsafeGetTensorImpl());
        for (const auto& block : listed) {
            QVERIFY(!block.empty());
            for (const auto& p : block) {
                QVERIFY(model_params.count(p.unsafeGetTensorImpl()));
                QVERIFY(seen.insert(p.unsafeGetTensorImpl()).second);   // in one block only
            }
        }
        QVERIFY(seen.size() < model_params.size());   // a stem, embeddings or a head outside them
        struct Recorder final : BlockHooks {
            QStringList calls;
            void beforeBlock(size_t i) override { calls << QString("before %1").arg(i); }
            torch::Tensor afterBlock(size_t i, torch::Tensor out) override {
                calls << QString("after %1").arg(i);
                return out;
            }
        } recorder;
        m->setBlockHooks(&recorder);
        QStringList expected;
        for (int i = 0; i < blocks; ++i) expected << QString("before %1").arg(i) << QString("after %1").arg(i);
        const auto x = text ? torch::randint(1, 50, {2, 12}, torch::kInt64) : torch::randn({2, 1, 32, 32});
        for (const bool training : {true, false}) {
            m->train(training);
            recorder.calls.clear();
            const torch::AutoGradMode grad_mode(training);
            const auto out = m->forward(x);
            QCOMPARE(out.size(1), int64_t(3));
            QCOMPARE(recorder.calls, expected);
        }
        m->setBlockHooks(nullptr);
    }

    // The pipeline's view of a model: stem, blocks and head partition its parameters, the FLOP
    // count has a part per block summing to the whole, and running the stages one after another
    // (each from the batch and the last one's output) gives the whole forward's logits, cut
    // anywhere between blocks, in training and in evaluation.
    void stagesChainToTheWholeForward_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("blocks");
        QTest::newRow("mlp") << "mlp" << 2;
        QTest::newRow("cnn") << "cnn" << 2;
        QTest::newRow("resnet18") << "resnet18" << 8;
        QTest::newRow("distilbert, padded") << "distilbert" << 3;
        QTest::newRow("bert, padded") << "bert" << 3;
    }
    void stagesChainToTheWholeForward() {
        QFETCH(QString, name);
        QFETCH(int, blocks);
        ModelConfig c;
        c.name = name.toStdString();
        c.hidden = {16, 8};
        c.dropout = 0.0;
        c.num_layers = 3;
        c.hidden_size = 32;
        c.num_heads = 2;
        c.intermediate_size = 64;
        const bool text = name == "bert" || name == "distilbert";
        ModelInput input{text ? std::vector<int64_t>{12} : std::vector<int64_t>{1, 32, 32}, 3};
        input.vocab_size = 50;
        input.max_length = 12;
        torch::manual_seed(3);
        auto m = createModel(c, input);
        m->to(torch::kFloat64);
        QVERIFY(m->cutsAtBlocks());
        const auto listed = m->blockParameters();
        QCOMPARE(static_cast<int>(listed.size()), blocks);
        // Stem, blocks and the rest (the head): every parameter in exactly one.
        std::set<const void*> seen;
        for (const auto& p : m->stemParameters()) QVERIFY(seen.insert(p.unsafeGetTensorImpl()).second);
        const size_t stem = seen.size();
        QCOMPARE(stem > 0, name == "resnet18" || text);
        for (const auto& block : listed)
            for (const auto& p : block) QVERIFY(seen.insert(p.unsafeGetTensorImpl()).second);
        size_t head = 0;
        for (const auto& p : m->parameters()) head += seen.count(p.unsafeGetTensorImpl()) ? 0 : 1;
        QVERIFY(head > 0);
        const PartFlops flops = m->partFlops();
        QCOMPARE(static_cast<int>(flops.blocks.size()), blocks);
        QVERIFY(flops.head.known());
        QCOMPARE(flops.total().forward(3, 12), m->forwardFlops().forward(3, 12));
        Batch batch;
        if (text) {
            batch.set("input_ids", torch::randint(1, 50, {5, 12}, torch::kInt64));
            auto mask = torch::ones({5, 12}, torch::kInt64);
            mask[1].narrow(0, 7, 5).zero_();   // a padded row: later stages must read its mask too
            batch.set("attention_mask", mask);
        } else {
            batch.set(Batch::kInput, torch::randn({5, 1, 32, 32}, torch::kFloat64));
        }
        const auto n = static_cast<size_t>(blocks);
        const std::vector<std::vector<size_t>> cuts{{0, n}, {0, 1, n}, {0, n - 1, n}, {0, 1, 2, n}};
        for (const bool training : {false, true}) {
            m->train(training);
            const auto whole = m->forwardBatch(batch);
            for (const auto& bounds : cuts) {
                torch::Tensor x;
                for (size_t s = 0; s + 1 < bounds.size(); ++s)
                    x = m->forwardStage(batch, x, bounds[s], bounds[s + 1], s + 2 == bounds.size());
                QCOMPARE(x.sizes(), whole.sizes());
                QVERIFY2(torch::allclose(x, whole, 0.0, 1e-12), qPrintable(QString("cut after %1 (%2)").arg(bounds[1]).arg(training ? "training" : "evaluation")));
            }
        }
    }

    // The cuts make the largest stage as small as the blocks allow: ResNet-18's residual blocks
    // (the later ones wider but on smaller images) and a stem or a head that weighs on one end.
    void pipelineCutsBalanceTheStages() {
        using B = std::vector<size_t>;
        QCOMPARE(balancedStageBounds({1, 1, 1, 1}, 0, 0, 2), (B{0, 2, 4}));
        QCOMPARE(balancedStageBounds({1, 1, 1, 1}, 0, 0, 4), (B{0, 1, 2, 3, 4}));
        QCOMPARE(balancedStageBounds({5, 1, 1, 1, 1, 1}, 0, 0, 2), (B{0, 1, 6}));
        QCOMPARE(balancedStageBounds({1, 1, 1, 1, 1, 1}, 0, 2.5, 2), (B{0, 4, 6}));    // a heavy head
        QCOMPARE(balancedStageBounds({1, 1, 1, 1, 1, 1}, 2.5, 0, 2), (B{0, 2, 6}));    // a heavy stem
        QCOMPARE(balancedStageBounds({1, 2, 3, 4, 5, 6, 7, 8, 9}, 0, 0, 3), (B{0, 5, 7, 9}));   // 15 | 13 | 17
        QCOMPARE(balancedStageBounds({7}, 0, 0, 1), (B{0, 1}));
        try {
            balancedStageBounds({1, 1}, 0, 0, 3);
            QFAIL("expected ConfigError");
        } catch (const ConfigError& e) {
            QCOMPARE(QString::fromStdString(e.key()), QString("trainer.pipeline.stages"));
        }
        // ResNet-18 at 224 x 224: its blocks' FLOPs are about equal, but the stem (1.18e8 of 1.8e9) weighs
        // on the first stage.
        ModelConfig c;
        c.name = "resnet18";
        const PartFlops f = createModel(c, ModelInput{{3, 224, 224}, 10})->partFlops();
        std::vector<double> costs;
        for (const auto& b : f.blocks) costs.push_back(b.forward(1));
        const auto two = balancedStageBounds(costs, f.stem.forward(1), f.head.forward(1), 2);
        double first = f.stem.forward(1), second = f.head.forward(1);
        for (size_t b = 0; b < costs.size(); ++b) (b < two[1] ? first : second) += costs[b];
        QVERIFY2(std::max(first, second) < 0.6 * (first + second), qPrintable(QString("%1 | %2").arg(first).arg(second)));
    }

    void inplaceActivationsRefusedForTransformers() {
        ModelConfig c;
        c.name = "distilbert";
        c.inplace_activations = true;
        ModelInput input{{16}, 2};
        input.vocab_size = 50;
        input.max_length = 16;
        try {
            createModel(c, input);
            QFAIL("expected ConfigError");
        } catch (const ConfigError& e) {
            QCOMPARE(QString::fromStdString(e.key()), QString("model.inplace_activations"));
        }
    }
};

QTEST_GUILESS_MAIN(TestModels)
#include "test_models.moc"
