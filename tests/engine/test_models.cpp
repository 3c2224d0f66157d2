// Model registry: forward shapes, input checks, parameter counts and per-layer summaries.
#include "engine/models/ModelRegistry.h"

#include <QTest>

using namespace hearth;

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
        QCOMPARE(modelNames(), (std::vector<std::string>{"bert", "cnn", "distilbert", "mlp"}));
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
};

QTEST_GUILESS_MAIN(TestModels)
#include "test_models.moc"
