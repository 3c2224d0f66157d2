// The technique ladder: each step adds one technique to the previous one, on what the device does well.
#include "engine/run/TechniqueLadder.h"

#include <QTest>

using namespace hearth;

class TestTechniqueLadder : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void cpuLadderUsesBf16AndAddsWorkers() {
        ExperimentConfig base;
        base.trainer.precision = "bf16-mixed";   // the baseline resets it
        base.trainer.num_workers = 4;
        const auto steps = buildTechniqueLadder(base, DeviceCapabilities{});
        QCOMPARE(steps.size(), size_t(3));
        QCOMPARE(QString::fromStdString(steps[0].config.trainer.precision), QString("32-true"));
        QCOMPARE(steps[0].config.trainer.num_workers, int64_t(0));
        QCOMPARE(QString::fromStdString(steps[1].config.trainer.precision), QString("bf16-mixed"));
        QCOMPARE(steps[1].config.trainer.num_workers, int64_t(0));
        QCOMPARE(QString::fromStdString(steps[2].config.trainer.precision), QString("bf16-mixed"));
        QCOMPARE(steps[2].config.trainer.num_workers, int64_t(2));
        QVERIFY(steps[2].config.trainer.persistent_workers);
        for (const auto& s : steps) QVERIFY2(validate(s.config, DeviceCapabilities{}).empty(), s.label.c_str());
    }

    void gpuWithoutBf16UsesFp16() {
        DeviceCapabilities caps;
        caps.cuda_available = true;
        caps.cuda_device_count = 1;
        caps.cuda_bf16 = false;
        const auto steps = buildTechniqueLadder(ExperimentConfig{}, caps);
        QCOMPARE(QString::fromStdString(steps[1].config.trainer.precision), QString("16-mixed"));
        QVERIFY(QString::fromStdString(steps[2].change).contains("pinned"));
    }

    void targetBatchAddsAccumulationStep() {
        ExperimentConfig base;
        base.trainer.batch_size = 32;
        LadderOptions options;
        options.target_batch = 128;
        const auto steps = buildTechniqueLadder(base, DeviceCapabilities{}, options);
        QCOMPARE(steps.size(), size_t(4));
        QCOMPARE(steps[3].config.trainer.accumulate_grad_batches, int64_t(4));
        QCOMPARE(steps[3].config.trainer.batch_size, int64_t(32));

        options.target_batch = 100;
        QVERIFY_THROWS_EXCEPTION(ConfigError, buildTechniqueLadder(base, DeviceCapabilities{}, options));
    }

    void stepNamesAreDistinct() {
        const auto steps = buildTechniqueLadder(ExperimentConfig{}, DeviceCapabilities{});
        QVERIFY(steps[0].config.name != steps[1].config.name);
        QVERIFY(steps[1].config.name != steps[2].config.name);
    }
};

QTEST_GUILESS_MAIN(TestTechniqueLadder)
#include "test_technique_ladder.moc"
