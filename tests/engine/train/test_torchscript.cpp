// model.name=torchscript: a model defined in PyTorch and saved with torch.jit.save trains in Hearth
// as PyTorch trains it. Fixtures from tests/fixtures/make_torchscript_fixtures.py, written by
// Debian's PyTorch 1.13 so that both builds read them: a scripted CNN with BatchNorm and a scripted
// small transformer, each trained K steps by torch.optim (SGD with momentum, Adam) on fixed
// batches; Hearth's training step (strategy, precision, task, optimizer) on the same batches ends
// with the same parameters and BatchNorm statistics (float32, 1e-5). Every bad file is refused
// before training, naming model.path and the problem; the export holds the trained weights.
#include "TrainTestSupport.h"

#include "engine/config/ExperimentConfig.h"
#include "engine/models/TorchScriptModel.h"
#include "engine/run/ModelExport.h"
#include "engine/run/RunController.h"
#include "engine/strategy/CheckpointFile.h"
#include "engine/strategy/Strategy.h"
#include "engine/train/MetricsLogger.h"
#include "engine/train/Task.h"
#include "engine/train/TrainerParts.h"

#include <torch/script.h>

#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <map>
#include <set>

using namespace hearth;
using namespace hearth::testing;

namespace {

const std::string kDir = std::string(HEARTH_FIXTURES_DIR) + "/torchscript";
constexpr int kSteps = 4;

std::map<std::string, torch::Tensor> buffersOf(const std::string& path) {
    std::map<std::string, torch::Tensor> out;
    for (const auto& b : torch::jit::load(path).named_buffers()) out[b.name] = b.value;
    return out;
}

ModelConfig scripted(const std::string& file) {
    ModelConfig m;
    m.name = "torchscript";
    m.path = kDir + "/" + file;
    return m;
}

ModelInput images() { return ModelInput{{1, 28, 28}, 10}; }
ModelInput texts() {
    ModelInput in{{20}, 3};
    in.vocab_size = 1000;
    in.max_length = 20;
    return in;
}

// The fixture's batch k, as the loader would hand it over.
Batch batchOf(const std::map<std::string, torch::Tensor>& expected, int k, bool text) {
    const std::string p = "batch" + std::to_string(k) + "_";
    Batch b;
    if (text) {
        b.set("input_ids", expected.at(p + "input_ids"));
        b.set("attention_mask", expected.at(p + "attention_mask"));
    } else {
        b.set(Batch::kInput, expected.at(p + "input"));
    }
    b.set(Batch::kLabel, expected.at(p + "label"));
    b.indices = torch::arange(b.size());
    return b;
}

std::string errorOf(const ModelConfig& m, const ModelInput& in) {
    try {
        createModel(m, in);
    } catch (const ConfigError& e) {
        return e.key() + ": " + e.message();
    }
    return "";
}

}  // namespace

class TestTorchScript final : public QObject {
    Q_OBJECT

private:
    // K steps of Hearth's training step with `optimizer` against torch.optim's K steps.
    void trainsAsPyTorch(const std::string& file, const std::string& expected_file, const ModelInput& input,
                         bool text) {
        const auto expected = buffersOf(kDir + "/" + expected_file);
        for (const std::string opt : {"sgd", "adam"}) {
            auto model = createModel(scripted(file), input);
            TrainerConfig t;
            t.accelerator = "cpu";
            auto strategy = createStrategy(t, torch::kCPU);
            strategy->setupModel(*model, false);
            OptimizerConfig o;
            o.name = opt;
            o.lr = opt == "sgd" ? 0.05 : 1e-3;
            o.momentum = 0.9;
            auto optimizer = strategy->setupOptimizer(o, *model);
            const ClassificationTask task;
            TrainingStep step(*strategy, *model, task);
            MetricsLogger metrics;
            model->train();
            for (int k = 0; k < kSteps; ++k) {
                step.microBatch(batchOf(expected, k, text), 1, true, metrics);
                step.optimizerStep(*optimizer, std::nullopt);
            }
            int compared = 0;
            double worst = 0.0;
            const auto check = [&](const std::string& name, const torch::Tensor& mine) {
                const auto it = expected.find("after_" + opt + "__" + name);
                QVERIFY2(it != expected.end(), qPrintable(QString::fromStdString(opt + " has no " + name)));
                const torch::Tensor theirs = it->second;
                QCOMPARE(mine.sizes(), theirs.sizes());
                const double d = (mine.to(torch::kFloat64) - theirs.to(torch::kFloat64)).abs().max().item<double>();
                worst = std::max(worst, d);
                QVERIFY2(d <= 1e-5, qPrintable(QString("%1 %2 %3: max difference %4")
                                                   .arg(file.c_str(), opt.c_str(), name.c_str()).arg(d)));
                ++compared;
            };
            for (const auto& p : model->named_parameters()) check(p.key(), p.value().detach());
            for (const auto& b : model->named_buffers()) check(b.key(), b.value());
            // Every parameter and buffer was compared, and training moved them.
            QCOMPARE(compared, static_cast<int>(model->named_parameters().size() + model->named_buffers().size()));
            auto fresh = createModel(scripted(file), input);
            double moved = 0.0;
            for (const auto& p : fresh->named_parameters())
                moved = std::max(moved, (p.value() - model->named_parameters()[p.key()]).abs().max().item<double>());
            QVERIFY2(moved > 1e-3, qPrintable(QString::number(moved)));
        }
    }

private Q_SLOTS:
    void scriptedCnnWithBatchNormTrainsAsPyTorch() {
        trainsAsPyTorch("cnn.pt", "cnn_expected.pt", images(), false);
    }

    void scriptedTransformerTrainsAsPyTorch() { trainsAsPyTorch("text.pt", "text_expected.pt", texts(), true); }

    // What the file declares, summarised for the run: the forward, the parameter count.
    void theModelIsSummarisedFromItsSchema() {
        const auto model = createModel(scripted("text.pt"), texts());
        const auto* scripted_model = dynamic_cast<TorchScriptClassifierImpl*>(model.get());
        QVERIFY(scripted_model);
        QCOMPARE(scripted_model->forwardArity(), size_t{2});
        const QString signature = QString::fromStdString(scripted_model->forwardSignature());
        QVERIFY2(signature.contains("input_ids") && signature.contains("attention_mask") && !signature.contains("self"),
                 qPrintable(signature));
        QCOMPARE(model->notes().size(), size_t{1});
        QVERIFY2(QString::fromStdString(model->notes()[0]).contains(QString::number(parameterCount(*model)) +
                                                                    " trainable parameters"),
                 model->notes()[0].c_str());
        // A traced module: forward(Tensor input), one input.
        const auto traced = createModel(scripted("traced_mlp.pt"), ModelInput{{8}, 3});
        QCOMPARE(dynamic_cast<TorchScriptClassifierImpl*>(traced.get())->forwardArity(), size_t{1});
    }

    // Each bad file, refused before training, naming model.path and what is wrong.
    // A scripted nn.Sequential has blocks (each child with parameters closes one; the Flatten and
    // the ReLUs run in the block of the Linear after them): its stages chained give its forward,
    // and under block hooks (ZeRO-3) the children run between them. A module of its own class has
    // none: the pipeline cannot cut it.
    void aScriptedSequentialIsCutBetweenItsChildren() {
        auto m = createModel(scripted("sequential_mlp.pt"), ModelInput{{8}, 3});
        QVERIFY(m->cutsAtBlocks());
        const auto blocks = m->blockParameters();
        QCOMPARE(blocks.size(), size_t(3));
        QCOMPARE(blocks[0].size(), size_t(2));   // Linear 8 -> 16
        QCOMPARE(blocks[0][0].sizes(), (torch::IntArrayRef{16, 8}));
        QCOMPARE(blocks[2][0].sizes(), (torch::IntArrayRef{3, 8}));
        std::set<const void*> registered;
        for (const auto& p : m->parameters()) registered.insert(p.unsafeGetTensorImpl());
        for (const auto& block : blocks)
            for (const auto& p : block) QVERIFY(registered.count(p.unsafeGetTensorImpl()));   // the same tensors
        Batch batch;
        batch.set(Batch::kInput, torch::randn({4, 8}));
        const auto whole = m->forward(batch.input());
        for (const size_t cut : {size_t(1), size_t(2)}) {
            const auto first = m->forwardStage(batch, {}, 0, cut, false);
            const auto out = m->forwardStage(batch, first, cut, 3, true);
            QVERIFY(torch::equal(out, whole));
        }
        struct Count final : BlockHooks {
            int before = 0, after = 0;
            void beforeBlock(size_t) override { ++before; }
            torch::Tensor afterBlock(size_t, torch::Tensor out) override { ++after; return out; }
        } hooks;
        m->setBlockHooks(&hooks);
        QVERIFY(torch::equal(m->forward(batch.input()), whole));
        QCOMPARE(hooks.before, 3);
        QCOMPARE(hooks.after, 3);
        m->setBlockHooks(nullptr);
        QVERIFY(!createModel(scripted("cnn.pt"), images())->cutsAtBlocks());
        QVERIFY(!createModel(scripted("traced_mlp.pt"), ModelInput{{8}, 3})->cutsAtBlocks());
    }

    void badFilesAreRefusedNamingTheProblem() {
        QTemporaryDir dir;
        const std::string csv = dir.filePath("data.csv").toStdString();
        std::ofstream(csv) << "a,b\n1,2\n";
        const auto refused = [&](const ModelConfig& m, const ModelInput& in, const char* fragment) {
            const std::string e = errorOf(m, in);
            QVERIFY2(e.rfind("model.path: ", 0) == 0 && e.find(fragment) != std::string::npos, e.c_str());
        };
        refused(scripted("state_dict.pt"), images(), "torch.save file (a state_dict or a pickled module)");
        refused(scripted("state_dict.pt"), images(), "torch.jit.save(torch.jit.script(model)");
        refused(scripted("no_params.pt"), images(), "has no trainable parameters");
        refused(scripted("wrong_classes.pt"), images(), "returns [2, 7] for a batch of 2, but the data has 10 classes");
        refused(scripted("text.pt"), images(), "this data gives one tensor (images");
        refused(scripted("cnn.pt"), texts(), "text data gives two tensors");
        refused(scripted("traced_mlp.pt"), images(), "its forward failed on a batch of this data");
        ModelConfig foreign = scripted("x");
        foreign.path = csv;
        refused(foreign, images(), "is not a PyTorch file");
        ModelConfig missing = scripted("missing.pt");
        refused(missing, images(), "is not a file");
        // Validation names the missing path and refuses the built-in models' toggles.
        ExperimentConfig c;
        c.model.name = "torchscript";
        const auto issues = validate(c, DeviceCapabilities{});
        QVERIFY(std::any_of(issues.begin(), issues.end(), [](const ConfigIssue& i) { return i.key == "model.path"; }));
        c.model.path = kDir + "/cnn.pt";
        c.model.gradient_checkpointing = true;
        const auto more = validate(c, DeviceCapabilities{});
        QCOMPARE(more.size(), size_t{1});
        QCOMPARE(QString::fromStdString(more[0].key), QString("model.gradient_checkpointing"));
    }

    // A whole run of the scripted CNN on Fashion-MNIST: it learns; its best checkpoint exported as
    // TorchScript loads with torch::jit::load and gives the trained model's logits.
    void aRunTrainsAndExportsTheTrainedModule() {
        QTemporaryDir dir;
        ExperimentConfig c;
        c.model = scripted("cnn.pt");
        c.data.limit = 4000;
        c.trainer.max_epochs = 3;
        c.trainer.num_workers = 0;
        c.trainer.accelerator = "cpu";
        c.optimizer.lr = 1e-2;
        RecordingSink sink;
        std::atomic<bool> stop{false};
        RunOptions options;
        options.artifacts_dir = dir.filePath("artifacts").toStdString();
        const auto outcome = runExperiment(c, options, sink, stop);
        QVERIFY2(outcome.status == RunStatus::Completed, outcome.message.c_str());
        const auto finished = sink.all<RunFinished>().at(0);
        QVERIFY2(finished.test_accuracy > 0.5, qPrintable(QString::number(finished.test_accuracy)));
        const std::string best = options.artifacts_dir + "/best.pt";
        QVERIFY(std::filesystem::exists(best));
        const std::string out = dir.filePath("trained.pt").toStdString();
        exportTorchScript(c, best, out);
        torch::jit::Module exported = torch::jit::load(out);
        exported.eval();
        auto model = createModel(c.model, images());
        loadCheckpointFile(best, *model);
        model->eval();
        torch::NoGradGuard no_grad;
        const auto x = torch::rand({5, 1, 28, 28});
        const auto theirs = exported.forward({x}).toTensor();
        const auto mine = model->forward(x);
        QVERIFY2(torch::allclose(theirs, mine, 1e-5, 1e-6), "the exported module gives other logits");
        // Not the untrained module's.
        auto untrained = torch::jit::load(kDir + "/cnn.pt");
        untrained.eval();
        QVERIFY(!torch::allclose(untrained.forward({x}).toTensor(), mine, 1e-3, 1e-3));
        // A run of another model cannot be exported as TorchScript.
        ExperimentConfig builtin;
        QVERIFY_THROWS_EXCEPTION(ConfigError, exportTorchScript(builtin, best, out));
    }
};

QTEST_GUILESS_MAIN(TestTorchScript)
#include "test_torchscript.moc"
