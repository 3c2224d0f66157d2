// model.name=resnet18/34/50: torchvision's architecture with its parameter names. Parity: the
// state_dicts torchvision saves (random weights and BatchNorm statistics, written by
// tests/fixtures/make_resnet_fixtures.py with the project's PyTorch 2.11 + torchvision 0.26) load
// as they are, and the logits equal torchvision's in eval and in train mode (< 1e-5) in both
// builds; an ImageNet head is replaced for the data's classes and RGB filters summed for grey
// images, as reported; wrong files are refused naming the problem; FLOPs as torchvision counts
// them; activation checkpointing and in-place ReLUs change no gradient.
#include "engine/config/ExperimentConfig.h"
#include "engine/data/DataError.h"
#include "engine/models/ResNet.h"
#include "engine/weights/SafeTensors.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QtTest>

#include <fstream>

using namespace hearth;

namespace {

const QString kSource = QStringLiteral(HEARTH_SOURCE_DIR);
const QString kFixtures = QStringLiteral(HEARTH_RESNET_FIXTURES);

std::string fixture(const char* name) { return (kFixtures + "/" + name).toStdString(); }

ModelConfig resnet(const char* name, std::optional<std::string> pretrained = std::nullopt) {
    ModelConfig m;
    m.name = name;
    m.pretrained = std::move(pretrained);
    return m;
}

std::shared_ptr<ResNetImpl> build(const ModelConfig& m, std::vector<int64_t> shape = {3, 64, 64}, int64_t classes = 10) {
    return std::dynamic_pointer_cast<ResNetImpl>(makeResNet(m, ModelInput{std::move(shape), classes}));
}

// The largest difference relative to the reference's scale (logits of up to ~1.5 here; float32
// sums over thousands of products differ in their last bits between kernels).
double maxDiff(const torch::Tensor& a, const torch::Tensor& b) {
    return (a - b).abs().max().item<double>() / std::max(1.0, b.abs().max().item<double>());
}

}  // namespace

class TestResNet : public QObject {
    Q_OBJECT
    std::map<std::string, torch::Tensor> expected_;

private slots:
    void initTestCase() {
        const QString python = kSource + "/.deps/python/bin/python";
        if (!QFileInfo::exists(kFixtures + "/expected.safetensors") ||
            QFileInfo(kFixtures + "/expected.safetensors").lastModified() <
                QFileInfo(kSource + "/tests/fixtures/make_resnet_fixtures.py").lastModified()) {
            if (!QFileInfo::exists(python)) QSKIP("no .deps/python with torchvision (scripts/install-deps makes it)");
            QProcess p;
            p.start(python, {kSource + "/tests/fixtures/make_resnet_fixtures.py", kFixtures});
            QVERIFY(p.waitForFinished(180000));
            QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        }
        expected_ = readSafeTensors(fixture("expected.safetensors"));
    }

    void logitsEqualTorchvisionsResNet18() {
        auto model = build(resnet("resnet18", fixture("resnet18.pth")));
        torch::NoGradGuard no_grad;
        model->eval();
        const double eval = maxDiff(model->forward(expected_["x"]), expected_["resnet18_eval"]);
        QVERIFY2(eval < 1e-5, qPrintable(QString::number(eval)));
        model->train();
        const double train = maxDiff(model->forward(expected_["x"]), expected_["resnet18_train"]);
        QVERIFY2(train < 1e-5, qPrintable(QString::number(train)));
        QVERIFY(model->notes().back().find("weights from") != std::string::npos);
    }

    void logitsEqualTorchvisionsResNet50FromSafetensors() {
        auto model = build(resnet("resnet50", fixture("resnet50.safetensors")));
        torch::NoGradGuard no_grad;
        model->eval();
        const double eval = maxDiff(model->forward(expected_["x"]), expected_["resnet50_eval"]);
        QVERIFY2(eval < 1e-5, qPrintable(QString::number(eval)));
        model->train();
        const double train = maxDiff(model->forward(expected_["x"]), expected_["resnet50_train"]);
        QVERIFY2(train < 1e-5, qPrintable(QString::number(train)));
    }

    void imageNetHeadIsReplacedAndGreyImagesSumTheFilters() {
        auto model = build(resnet("resnet18", fixture("resnet18-imagenet.pth")), {1, 64, 64}, 7);
        model->eval();   // a forward pass in train mode would move the BatchNorm statistics
        QCOMPARE(model->forward(torch::zeros({1, 1, 64, 64})).size(1), int64_t{7});
        std::string notes;
        for (const auto& n : model->notes()) notes += n + "\n";
        QVERIFY2(notes.find("fc: new for the data's 7 classes (the checkpoint's has 1000)") != std::string::npos,
                 notes.c_str());
        QVERIFY(notes.find("RGB filters summed") != std::string::npos);
        torch::NoGradGuard no_grad;
        const double d = maxDiff(model->features(expected_["x_gray"]), expected_["resnet18_imagenet_gray_features"]);
        QVERIFY2(d < 1e-5, qPrintable(QString::number(d)));
    }

    void wrongWeightsAreRefusedNamingTheProblem() {
        auto message = [](const ModelConfig& m) {
            try {
                build(m);
            } catch (const DataError& e) {
                return QString::fromStdString(e.what());
            }
            return QString();
        };
        const QString other = message(resnet("resnet18", fixture("resnet50.safetensors")));
        QVERIFY2(other.contains("not torchvision weights for this ResNet") && other.contains("layer1.0.conv3.weight"),
                 qPrintable(other));
        QVERIFY(message(resnet("resnet34", fixture("nothing.pth"))).contains("no such file"));
        const std::string text = (kFixtures + "/text.pth").toStdString();
        std::ofstream(text) << "not a checkpoint";
        QVERIFY(message(resnet("resnet18", text)).contains("cannot read this file as a state_dict"));
    }

    void newModelsHaveTorchvisionsShapesAndFlops() {
        // torchvision: resnet18 11,689,512 / resnet34 21,797,672 / resnet50 25,557,032 parameters
        // with 1000 classes; 1.814 / 3.664 / 4.089 GMACs at 224x224.
        const struct { const char* name; int64_t params; double gmacs; } cases[] = {
            {"resnet18", 11689512, 1.814}, {"resnet34", 21797672, 3.664}, {"resnet50", 25557032, 4.089}};
        for (const auto& c : cases) {
            auto model = build(resnet(c.name), {3, 224, 224}, 1000);
            int64_t params = 0;
            for (const auto& p : model->parameters()) params += p.numel();
            QCOMPARE(params, c.params);
            const double gmacs = model->forwardFlops().forward(1) / 2e9;
            QVERIFY2(std::abs(gmacs - c.gmacs) / c.gmacs < 0.01, qPrintable(QString::number(gmacs)));
        }
        auto grey = build(resnet("resnet18"), {1, 32, 32}, 2);
        QCOMPARE(grey->forward(torch::zeros({3, 1, 32, 32})).sizes(), (c10::IntArrayRef{3, 2}));
        bool refused = false;
        try {
            build(resnet("resnet18"), {3, 16, 16}, 2);
        } catch (const ConfigError& e) {
            refused = std::string(e.what()).find("at least 32x32") != std::string::npos && e.key() == "model.name";
        }
        QVERIFY(refused);
    }

    void checkpointingAndInplaceReluChangeNoGradient() {
        auto gradients = [](bool checkpoint, bool inplace) {
            torch::manual_seed(3);
            ModelConfig m = resnet("resnet18");
            m.inplace_activations = inplace;
            auto model = build(m, {3, 32, 32}, 4);
            model->setGradientCheckpointing(checkpoint);
            model->train();
            torch::manual_seed(4);
            const auto x = torch::randn({2, 3, 32, 32});
            model->forward(x).square().sum().backward();
            std::vector<torch::Tensor> g;
            for (const auto& p : model->parameters()) g.push_back(p.grad().clone());
            for (const auto& b : model->buffers()) g.push_back(b.clone());   // BatchNorm updated once
            return g;
        };
        const auto plain = gradients(false, false);
        for (const auto& [checkpoint, inplace] : {std::pair{true, false}, std::pair{false, true}, std::pair{true, true}}) {
            const auto other = gradients(checkpoint, inplace);
            QCOMPARE(other.size(), plain.size());
            for (size_t i = 0; i < plain.size(); ++i)
                QVERIFY2(torch::allclose(other[i].to(torch::kFloat64), plain[i].to(torch::kFloat64), 1e-4, 1e-5),
                         qPrintable(QString("tensor %1, checkpoint %2, inplace %3").arg(i).arg(checkpoint).arg(inplace)));
        }
    }
};

QTEST_MAIN(TestResNet)
#include "test_resnet.moc"
