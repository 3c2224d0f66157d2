// ExperimentConfig: JSON round trip, overrides, and validation messages that name the key.
#include "engine/config/ConfigSchema.h"
#include "engine/config/DeviceInfo.h"
#include "engine/config/ExperimentConfig.h"
#include "engine/config/Spelling.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <functional>
#include <thread>

using namespace hearth;

namespace {

DeviceCapabilities cpuOnly() { return DeviceCapabilities{}; }

DeviceCapabilities oneGpu() {
    DeviceCapabilities caps;
    caps.cuda_available = true;
    caps.cuda_device_count = 1;
    caps.cuda_bf16 = true;
    caps.cuda_device_names = {"Test GPU"};
    return caps;
}

bool hasIssue(const std::vector<ConfigIssue>& issues, const std::string& key, const std::string& fragment) {
    return std::any_of(issues.begin(), issues.end(), [&](const ConfigIssue& i) {
        return i.key == key && i.message.find(fragment) != std::string::npos;
    });
}

std::string issuesText(const std::vector<ConfigIssue>& issues) {
    std::string s;
    for (const auto& i : issues) s += i.key + ": " + i.message + "\n";
    return s;
}

}  // namespace

class TestExperimentConfig : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void defaultsAreTheFashionMnistExperiment() {
        const ExperimentConfig c;
        QCOMPARE(QString::fromStdString(c.data.path), QString("/usr/share/datasets/fashion-mnist"));
        QCOMPARE(QString::fromStdString(c.model.name), QString("cnn"));
        QCOMPARE(c.trainer.max_epochs, int64_t(3));
        QVERIFY2(validate(c, cpuOnly()).empty(), issuesText(validate(c, cpuOnly())).c_str());
    }

    void jsonRoundTripKeepsEveryField() {
        ExperimentConfig c;
        c.name = "round-trip";
        c.seed = 7;
        c.data.kind = "csv";
        c.data.path = "train.csv";
        c.data.val_path = "val.csv";
        c.data.limit = 123;
        c.model.name = "mlp";
        c.model.hidden = {64, 32, 16};
        c.optimizer.name = "sgd";
        c.optimizer.lr = 0.05;
        c.scheduler.name = "cosine";
        c.trainer.precision = "bf16-mixed";
        c.trainer.gradient_clip_val = 1.5;
        c.trainer.checkpoint.monitor = "val_loss";
        c.trainer.checkpoint.mode = "min";
        const ExperimentConfig back = configFromJson(configToJson(c));
        QCOMPARE(configToJson(back), configToJson(c));
        QCOMPARE(back.model.hidden, (std::vector<int64_t>{64, 32, 16}));
        QVERIFY(back.data.val_path.has_value());
        QCOMPARE(*back.trainer.gradient_clip_val, 1.5);
    }

    void missingKeysTakeDefaults() {
        const ExperimentConfig c = configFromJson(R"({"trainer": {"max_epochs": 9}})");
        QCOMPARE(c.trainer.max_epochs, int64_t(9));
        QCOMPARE(c.trainer.batch_size, int64_t(64));
        QCOMPARE(QString::fromStdString(c.optimizer.name), QString("adam"));
    }

    void unknownKeyIsNamed() {
        try {
            configFromJson(R"({"trainer": {"max_epoch": 3}})");
            QFAIL("unknown key accepted");
        } catch (const ConfigError& e) {
            QCOMPARE(QString::fromStdString(e.key()), QString("trainer.max_epoch"));
            QVERIFY(std::string(e.what()).find("max_epochs") != std::string::npos);   // lists what is allowed
        }
    }

    void unknownTopLevelKeyIsNamed() {
        try {
            configFromJson(R"({"nmae": "x"})");
            QFAIL("unknown key accepted");
        } catch (const ConfigError& e) {
            QCOMPARE(QString::fromStdString(e.key()), QString("nmae"));
        }
    }

    // The "did you mean" hints: a typo a letter or two off, a swap, a different case, a word
    // that is part of the meant one; ties in the list's order, at most three; nothing when far.
    void likelyMeantFindsTheCloseWords() {
        using V = std::vector<std::string>;
        const V keys{"max_epochs", "batch_size", "precision", "num_workers"};
        QCOMPARE(likelyMeant("max_epoch", keys), V{"max_epochs"});
        QCOMPARE(likelyMeant("batchsize", keys), V{"batch_size"});
        QCOMPARE(likelyMeant("percision", keys), V{"precision"});   // a swap counts once
        QCOMPARE(likelyMeant("Precision", keys), V{"precision"});
        QCOMPARE(likelyMeant("workers", keys), V{"num_workers"});   // part of it
        QCOMPARE(likelyMeant("max_epochs", keys), V{});             // not a typo
        QCOMPARE(likelyMeant("learning_rate", keys), V{});
        QCOMPARE(likelyMeant("", keys), V{});
        QCOMPARE(likelyMeant("x", V{}), V{});
        const V strategies{"auto", "ddp", "zero1", "zero2", "zero3", "pipeline"};
        QCOMPARE(likelyMeant("zero", strategies), (V{"zero1", "zero2", "zero3"}));
        QCOMPARE(didYouMean("zero", strategies), std::string(" (did you mean 'zero1', 'zero2' or 'zero3'?)"));
        QCOMPARE(didYouMean("dpp", strategies), std::string(" (did you mean 'ddp'?)"));
        QCOMPARE(didYouMean("--sett", {"--set", "--config"}, ""), std::string(" (did you mean --set?)"));
        QCOMPARE(didYouMean("fp8", {"32-true", "16-mixed", "bf16-mixed"}), std::string());
        // A list already chosen: more than three is no guess.
        QCOMPARE(didYouMean(V{"optimizer.lr"}), std::string(" (did you mean 'optimizer.lr'?)"));
        QCOMPARE(didYouMean(V{"name", "model.name", "optimizer.name", "scheduler.name"}), std::string());
        // A near typo beats a word that merely contains what was typed.
        QCOMPARE(likelyMeant("adam", V{"adamw", "adam_beta"}), V{"adamw"});
    }

    void misspelledKeysAndValuesSayWhatWasLikelyMeant() {
        const auto messageOf = [](const std::function<void()>& f) {
            try {
                f();
            } catch (const ConfigError& e) {
                return std::string(e.what());
            }
            return std::string("(accepted)");
        };
        ExperimentConfig c;
        QVERIFY(messageOf([&] { applyOverride(c, "optimzer.lr=0.1"); }).find("did you mean 'optimizer'?") != std::string::npos);
        QVERIFY(messageOf([&] { applyOverride(c, "trainer.batchsize=8"); }).find("did you mean 'batch_size'?") != std::string::npos);
        QVERIFY(messageOf([] { configFromJson(R"({"data": {"limt": 10}})"); }).find("did you mean 'limit'?") != std::string::npos);
        // A key put in the wrong group, or called by its form label, names the key where it is.
        const auto has = [](const std::string& message, const std::string& part) {
            return message.find(part) != std::string::npos;
        };
        std::string m = messageOf([&] { applyOverride(c, "trainer.lr=0.1"); });
        QVERIFY2(has(m, "trainer.lr: unknown key (did you mean 'optimizer.lr'?); allowed here: max_epochs"), m.c_str());
        m = messageOf([] { configFromJson(R"({"data": {"source": "x.csv"}})"); });   // the form's "Source"
        QVERIFY2(has(m, "data.source: unknown key (did you mean 'data.path'?)"), m.c_str());
        m = messageOf([&] { applyOverride(c, "learning_rate=0.1"); });                // "Learning rate"
        QVERIFY2(has(m, "(did you mean 'optimizer.lr'?)"), m.c_str());
        m = messageOf([&] { applyOverride(c, "data.workers=2"); });
        QVERIFY2(has(m, "(did you mean 'trainer.num_workers' or 'trainer.persistent_workers'?)"), m.c_str());
        // A close name here first, then the key the word names elsewhere (the form's "Optimizer").
        m = messageOf([&] { applyOverride(c, "trainer.optimizer=sgd"); });
        QVERIFY2(has(m, "(did you mean 'offload_optimizer' or 'optimizer.name'?)"), m.c_str());
        m = messageOf([&] { applyOverride(c, "trainer.epochs=2"); });   // "Epochs" is max_epochs: named once
        QVERIFY2(has(m, "(did you mean 'max_epochs'?)"), m.c_str());
        m = messageOf([&] { applyOverride(c, "trainer.name=x"); });   // four keys are called name: none offered
        QVERIFY2(!has(m, "did you mean"), m.c_str());
        applyOverride(c, "trainer.strategy=dpp");
        applyOverride(c, "optimizer.name=AdamW");
        const auto issues = validate(c, cpuOnly());
        QVERIFY(hasIssue(issues, "trainer.strategy", "is not one of: auto, ddp, zero1, zero2, zero3, pipeline (did you mean 'ddp'?)"));
        QVERIFY(hasIssue(issues, "optimizer.name", "(did you mean 'adamw'?)"));
    }

    void wrongTypeIsNamed() {
        try {
            configFromJson(R"({"trainer": {"batch_size": "big"}})");
            QFAIL("string accepted for an integer");
        } catch (const ConfigError& e) {
            QCOMPARE(QString::fromStdString(e.key()), QString("trainer.batch_size"));
            QVERIFY(e.message().find("expected an integer") != std::string::npos);
        }
        QVERIFY_THROWS_EXCEPTION(ConfigError, configFromJson(R"({"trainer": {"batch_size": 1.5}})"));
        QVERIFY_THROWS_EXCEPTION(ConfigError, configFromJson(R"({"trainer": {"pin_memory": 1}})"));
        QVERIFY_THROWS_EXCEPTION(ConfigError, configFromJson(R"({"data": []})"));
    }

    void invalidJsonSaysWhere() {
        try {
            configFromJson("{\n  \"name\": \"x\",\n  oops\n}");
            QFAIL("invalid JSON accepted");
        } catch (const ConfigError& e) {
            QVERIFY2(std::string(e.what()).find("line 3") != std::string::npos, e.what());
        }
        // A number no double holds is a ConfigError too (found by fuzz_config), not an escape.
        try {
            configFromJson(R"({"optimizer": {"lr": 5e605}})");
            QFAIL("an overflowing number was accepted");
        } catch (const ConfigError& e) {
            QVERIFY2(std::string(e.what()).find("not valid JSON: number overflow parsing '5e605'") != std::string::npos,
                     e.what());
        }
    }

    void overrideSetsNestedValues() {
        ExperimentConfig c;
        applyOverride(c, "trainer.precision=bf16-mixed");
        applyOverride(c, "trainer.max_epochs=5");
        applyOverride(c, "data.limit=3000");
        applyOverride(c, "trainer.gradient_clip_val=0.5");
        applyOverride(c, "name=123");
        applyOverride(c, "model.hidden=[10,20]");
        QCOMPARE(QString::fromStdString(c.trainer.precision), QString("bf16-mixed"));
        QCOMPARE(c.trainer.max_epochs, int64_t(5));
        QCOMPARE(*c.data.limit, int64_t(3000));
        QCOMPARE(*c.trainer.gradient_clip_val, 0.5);
        QCOMPARE(QString::fromStdString(c.name), QString("123"));
        QCOMPARE(c.model.hidden, (std::vector<int64_t>{10, 20}));
        applyOverride(c, "data.limit=null");
        QVERIFY(!c.data.limit.has_value());
        // Lists as the form writes them: comma-separated, one number, or nothing.
        applyOverride(c, "model.hidden=64, 32");
        QCOMPARE(c.model.hidden, (std::vector<int64_t>{64, 32}));
        applyOverride(c, "model.channels=8");
        QCOMPARE(c.model.channels, (std::vector<int64_t>{8}));
        applyOverride(c, "trainer.pipeline.stage_blocks=3,5");
        QCOMPARE(c.trainer.pipeline.stage_blocks, (std::vector<int64_t>{3, 5}));
        applyOverride(c, "trainer.pipeline.stage_blocks=");
        QVERIFY(c.trainer.pipeline.stage_blocks.empty());
        try {
            applyOverride(c, "model.hidden=64,wide");
            QFAIL("expected ConfigError");
        } catch (const ConfigError& e) {
            QCOMPARE(QString::fromStdString(e.key()), QString("model.hidden"));
            QVERIFY2(QString::fromStdString(e.what()).contains("'wide' is not an integer"), e.what());
        }
    }

    void overrideOfUnknownKeyIsNamed() {
        ExperimentConfig c;
        try {
            applyOverride(c, "trainer.epochs=5");
            QFAIL("unknown override accepted");
        } catch (const ConfigError& e) {
            QCOMPARE(QString::fromStdString(e.key()), QString("trainer.epochs"));
        }
        QVERIFY_THROWS_EXCEPTION(ConfigError, applyOverride(c, "trainer.max_epochs"));
        QVERIFY_THROWS_EXCEPTION(ConfigError, applyOverride(c, "trainer.max_epochs=many"));
        QVERIFY_THROWS_EXCEPTION(ConfigError, applyOverride(c, "trainer=3"));
        QVERIFY_THROWS_EXCEPTION(ConfigError, applyOverride(c, "optimizer.lr=1e999"));   // the key's type error
    }

    void outOfRangeValuesAreFlagged() {
        ExperimentConfig c;
        c.trainer.batch_size = 0;
        c.optimizer.lr = -1;
        c.data.val_fraction = 1.5;
        c.trainer.precision = "fp8";
        const auto issues = validate(c, cpuOnly());
        QVERIFY(hasIssue(issues, "trainer.batch_size", "in [1, 1048576], got 0"));
        QVERIFY(hasIssue(issues, "optimizer.lr", "greater than 0"));
        // Only the cause: scheduler.min_lr (0) is not "above" a learning rate that is itself wrong.
        QVERIFY(!hasIssue(issues, "scheduler.min_lr", ""));
        QVERIFY(hasIssue(issues, "data.val_fraction", "[0, 1)"));
        QVERIFY(hasIssue(issues, "trainer.precision", "32-true, 16-mixed, bf16-mixed"));
    }

    // Absurd settings are refused before the run with the allowed range, instead of failing
    // mid-run with an OS error (thousands of threads) or an allocation the machine cannot make.
    void absurdSettingsAreRefusedWithTheirRange() {
        ExperimentConfig c;
        c.trainer.num_workers = 5000;
        c.trainer.prefetch_factor = 1000;
        c.trainer.batch_size = int64_t{1} << 40;
        c.trainer.num_threads = 100000;
        c.trainer.max_epochs = 10000000;
        c.model.channels = {32, 1 << 20};
        const auto issues = validate(c, cpuOnly());
        QVERIFY(hasIssue(issues, "trainer.num_workers", "[0, 256], got 5000"));
        QVERIFY(hasIssue(issues, "trainer.prefetch_factor", "[1, 64]"));
        QVERIFY(hasIssue(issues, "trainer.batch_size", "[1, 1048576]"));
        QVERIFY(hasIssue(issues, "trainer.num_threads", "[0, 1024]"));
        QVERIFY(hasIssue(issues, "trainer.max_epochs", "[1, 100000]"));
        QVERIFY(hasIssue(issues, "model.channels", "[1, 8192], got 1048576"));
        // The largest allowed values pass.
        c = ExperimentConfig{};
        c.trainer.num_workers = 256;
        c.trainer.persistent_workers = true;
        QVERIFY(validate(c, cpuOnly()).empty());
        // Image augmentation: images only, and a padding within range.
        c.data.augment.random_crop_padding = 4;
        c.data.augment.horizontal_flip = true;
        QVERIFY(validate(c, cpuOnly()).empty());
        c.data.augment.random_crop_padding = 65;
        QVERIFY(hasIssue(validate(c, cpuOnly()), "data.augment.random_crop_padding", "[0, 64]"));
        c.data.augment.random_crop_padding = 4;
        c.data.kind = "csv";
        c.model.name = "mlp";
        QVERIFY(hasIssue(validate(c, cpuOnly()), "data.augment.horizontal_flip", "applies to images"));
    }

    void conflictingSettingsAreFlagged() {
        ExperimentConfig c;
        c.trainer.num_workers = 0;
        c.trainer.persistent_workers = true;
        c.trainer.deterministic = true;
        c.trainer.cudnn_benchmark = true;
        const auto issues = validate(c, cpuOnly());
        QVERIFY(hasIssue(issues, "trainer.persistent_workers", "num_workers > 0"));
        QVERIFY(hasIssue(issues, "trainer.cudnn_benchmark", "deterministic"));

        ExperimentConfig tabular;
        tabular.data.kind = "csv";
        tabular.data.path = "x.csv";
        QVERIFY(hasIssue(validate(tabular, cpuOnly()), "model.name", "image input"));
        tabular.model.name = "mlp";
        tabular.trainer.channels_last = true;
        QVERIFY(hasIssue(validate(tabular, cpuOnly()), "trainer.channels_last", "convolutional"));
    }

    void hardwareLimitsAreRefusedWithTheReason() {
        ExperimentConfig c;
        c.trainer.precision = "16-mixed";
        QVERIFY(hasIssue(validate(c, cpuOnly()), "trainer.precision", "needs a CUDA device"));
        QVERIFY(validate(c, oneGpu()).empty());   // auto picks the GPU

        c.trainer.accelerator = "cpu";
        QVERIFY(hasIssue(validate(c, oneGpu()), "trainer.precision", "bf16-mixed on CPU"));

        ExperimentConfig cuda;
        cuda.trainer.accelerator = "cuda";
        QVERIFY(hasIssue(validate(cuda, cpuOnly()), "trainer.accelerator", "no usable CUDA device"));

        ExperimentConfig many;
        many.trainer.devices = 4;
        QVERIFY(hasIssue(validate(many, oneGpu()), "trainer.devices", "has 1"));

        ExperimentConfig ddp;
        ddp.trainer.strategy = "ddp";
        QVERIFY(hasIssue(validate(ddp, oneGpu()), "trainer.strategy", "distributed engine (c10d)"));
        auto withC10d = cpuOnly();
        withC10d.distributed = true;
        QVERIFY2(validate(ddp, withC10d).empty(), issuesText(validate(ddp, withC10d)).c_str());
        ddp.trainer.ddp.backend = "nccl";
        QVERIFY(hasIssue(validate(ddp, withC10d), "trainer.ddp.backend", "needs CUDA"));
        ExperimentConfig zero;
        for (const char* sharded : {"zero1", "zero2", "zero3"}) {
            zero.trainer.strategy = sharded;
            QVERIFY2(validate(zero, withC10d).empty(), sharded);
            QVERIFY(hasIssue(validate(zero, oneGpu()), "trainer.strategy", "c10d"));
            // The loss scaler's inf check agrees across the shards: 16-mixed is allowed on GPUs.
            zero.trainer.precision = "16-mixed";
            auto gpuWithC10d = oneGpu();
            gpuWithC10d.distributed = true;
            QVERIFY2(validate(zero, gpuWithC10d).empty(), issuesText(validate(zero, gpuWithC10d)).c_str());
            zero.trainer.precision = "32-true";
        }
        // trainer.strategy=pipeline: a built-in model cut between its blocks, one stage per process, at
        // most one per block, micro-batches that fit in a batch; each refusal names its key.
        ExperimentConfig pipe;
        pipe.trainer.strategy = "pipeline";
        pipe.trainer.devices = 2;
        QVERIFY2(validate(pipe, withC10d).empty(), issuesText(validate(pipe, withC10d)).c_str());   // the CNN's 2 blocks
        pipe.trainer.pipeline.stages = 3;
        QVERIFY(hasIssue(validate(pipe, withC10d), "trainer.pipeline.stages", "one stage per process"));
        pipe.trainer.pipeline.stages.reset();
        pipe.trainer.devices = 3;
        QVERIFY(hasIssue(validate(pipe, withC10d), "trainer.pipeline.stages", "at most one stage per block"));
        pipe.trainer.devices = 2;
        pipe.trainer.pipeline.micro_batches = 65;
        QVERIFY(hasIssue(validate(pipe, withC10d), "trainer.pipeline.micro_batches", "trainer.batch_size"));
        pipe.trainer.pipeline.micro_batches = 4;
        // trainer.pipeline.stage_blocks: a count per stage, summing to the model's blocks.
        pipe.trainer.pipeline.stage_blocks = {1, 1};
        QVERIFY2(validate(pipe, withC10d).empty(), issuesText(validate(pipe, withC10d)).c_str());
        pipe.trainer.pipeline.stage_blocks = {2};
        QVERIFY(hasIssue(validate(pipe, withC10d), "trainer.pipeline.stage_blocks", "one count per stage"));
        pipe.trainer.pipeline.stage_blocks = {2, 1};
        QVERIFY(hasIssue(validate(pipe, withC10d), "trainer.pipeline.stage_blocks", "sums to 3 block(s)"));
        pipe.trainer.pipeline.stage_blocks.clear();
        // A TorchScript module's blocks are known once it is read: validation leaves it to the run.
        pipe.model.name = "torchscript";
        pipe.model.path = "model.pt";
        QVERIFY(!hasIssue(validate(pipe, withC10d), "trainer.pipeline.stages", ""));
        pipe.model.path.reset();
        // An image folder resized below a resnet's 32 pixels is refused before any file is read.
        {
            ExperimentConfig small;
            small.model.name = "resnet18";
            small.data.kind = "image_folder";
            small.data.path = "images";
            small.data.image_size = 16;
            QVERIFY(hasIssue(validate(small, withC10d), "data.image_size", "at least 32 pixels, got 16"));
            small.data.image_size = 32;
            QVERIFY(!hasIssue(validate(small, withC10d), "data.image_size", ""));
        }
        // A resnet18's 8 residual blocks take up to 8 stages; a new transformer's layers as many.
        pipe.model.name = "resnet18";
        pipe.trainer.devices = 8;
        QVERIFY(!hasIssue(validate(pipe, withC10d), "trainer.pipeline.stages", "block"));
        pipe.trainer.devices = 9;
        QVERIFY(hasIssue(validate(pipe, withC10d), "trainer.pipeline.stages", "8 block(s)"));
        pipe.model.name = "distilbert";
        pipe.model.num_layers = 2;
        pipe.trainer.devices = 3;
        QVERIFY(hasIssue(validate(pipe, withC10d), "trainer.pipeline.stages", "model.num_layers"));
        pipe.trainer.devices = 2;
        pipe.model = ModelConfig{};
        pipe.trainer.offload_optimizer = true;
        QVERIFY(hasIssue(validate(pipe, withC10d), "trainer.offload_optimizer", "its own part already"));
        QVERIFY(hasIssue(validate(pipe, oneGpu()), "trainer.strategy", "c10d"));
        // trainer.offload_optimizer: a sharded optimizer only, refused naming the key otherwise; on
        // the CPU it warns that nothing moves off a device, on a GPU it applies.
        ExperimentConfig offload;
        offload.trainer.offload_optimizer = true;
        QVERIFY(hasIssue(validate(offload, withC10d), "trainer.offload_optimizer", "one device has none"));
        offload.trainer.strategy = "ddp";
        QVERIFY(hasIssue(validate(offload, withC10d), "trainer.offload_optimizer", "use trainer.strategy zero1, zero2 or zero3"));
        offload.trainer.strategy = "zero2";
        std::vector<ConfigIssue> warnings;
        QVERIFY2(validate(offload, withC10d, &warnings).empty(), issuesText(validate(offload, withC10d)).c_str());
        QVERIFY2(hasIssue(warnings, "trainer.offload_optimizer", "host memory already"), issuesText(warnings).c_str());
        auto gpuWithC10d = oneGpu();
        gpuWithC10d.distributed = true;
        warnings.clear();
        QVERIFY2(validate(offload, gpuWithC10d, &warnings).empty(), issuesText(validate(offload, gpuWithC10d)).c_str());
        QVERIFY2(!hasIssue(warnings, "trainer.offload_optimizer", ""), issuesText(warnings).c_str());
        ExperimentConfig twoCpu;
        twoCpu.trainer.devices = 2;
        // strategy auto with several devices is ddp (as in Lightning): where c10d is built in.
        QVERIFY(hasIssue(validate(twoCpu, cpuOnly()), "trainer.devices", "distributed engine (c10d)"));
        QVERIFY2(validate(twoCpu, withC10d).empty(), issuesText(validate(twoCpu, withC10d)).c_str());
        QCOMPARE(resolveTrainer(twoCpu.trainer, withC10d).strategy, std::string("ddp"));
        twoCpu.trainer.strategy = "ddp";   // two Gloo processes on the CPU
        QVERIFY2(validate(twoCpu, withC10d).empty(), issuesText(validate(twoCpu, withC10d)).c_str());
    }

    void devicesAutoAndNodesResolveAsLightningDoes() {
        // "auto" reads and writes as the word, also through --set, and back to a count.
        ExperimentConfig c = configFromJson(R"({"trainer": {"devices": "auto", "num_nodes": 2}})");
        QVERIFY(!c.trainer.devices.has_value());
        QCOMPARE(c.trainer.num_nodes, int64_t(2));
        QVERIFY(configToJson(c).find("\"devices\": \"auto\"") != std::string::npos);
        applyOverride(c, "trainer.devices=3");
        QCOMPARE(c.trainer.devices.value_or(0), int64_t(3));
        applyOverride(c, "trainer.devices=auto");
        QVERIFY(!c.trainer.devices.has_value());
        try {
            applyOverride(c, "trainer.devices=all");
            QFAIL("a word other than auto was accepted");
        } catch (const ConfigError& e) {
            QCOMPARE(e.key(), std::string("trainer.devices"));
            QVERIFY2(std::string(e.what()).find("integer or \"auto\"") != std::string::npos, e.what());
        }
        // auto: every GPU on CUDA (and ddp over them), one process on a CPU.
        auto fourGpus = oneGpu();
        fourGpus.cuda_device_count = 4;
        fourGpus.distributed = true;
        TrainerConfig t;
        t.devices.reset();
        QCOMPARE(resolveTrainer(t, fourGpus).devices.value_or(0), int64_t(4));
        QCOMPARE(resolveTrainer(t, fourGpus).strategy, std::string("ddp"));
        QCOMPARE(resolveTrainer(t, cpuOnly()).devices.value_or(0), int64_t(1));
        QCOMPARE(resolveTrainer(t, cpuOnly()).strategy, std::string("auto"));
        t.num_nodes = 2;  // one device on each of two nodes is still two processes
        QCOMPARE(resolveTrainer(t, cpuOnly()).strategy, std::string("ddp"));
        // Two ranks on one GPU: refused for NCCL, allowed over Gloo (debugging).
        ExperimentConfig two;
        two.trainer.devices = 2;
        two.trainer.strategy = "ddp";
        auto gpu = oneGpu();
        gpu.distributed = true;
        QVERIFY(hasIssue(validate(two, gpu), "trainer.devices", "NCCL cannot put two ranks on one GPU"));
        two.trainer.ddp.backend = "gloo";
        QVERIFY2(validate(two, gpu).empty(), issuesText(validate(two, gpu)).c_str());
    }

    void bf16OnCpuIsAllowed() {
        ExperimentConfig c;
        c.trainer.precision = "bf16-mixed";
        QVERIFY(validate(c, cpuOnly()).empty());
    }

    void fileRoundTripAndMissingFile() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("exp.json").toStdString();
        ExperimentConfig c;
        c.name = "from-file";
        saveConfigFile(c, path);
        QCOMPARE(QString::fromStdString(loadConfigFile(path).name), QString("from-file"));
        try {
            loadConfigFile(dir.filePath("missing.json").toStdString());
            QFAIL("missing file accepted");
        } catch (const ConfigError& e) {
            QVERIFY(std::string(e.what()).find("missing.json") != std::string::npos);
        }
    }

    // A YAML file says that experiment files are JSON; a broken .json file does not.
    void aYamlFileIsToldExperimentFilesAreJson() {
        QTemporaryDir dir;
        const auto messageFor = [&](const QString& name, const QByteArray& text) {
            QFile f(dir.filePath(name));
            f.open(QIODevice::WriteOnly);
            f.write(text);
            f.close();
            try {
                loadConfigFile(f.fileName().toStdString());
            } catch (const ConfigError& e) {
                return std::string(e.what());
            }
            return std::string("(accepted)");
        };
        const std::string yaml = messageFor("exp.YAML", "trainer:\n  max_epochs: 2\n");
        QVERIFY2(yaml.find("not valid JSON") != std::string::npos &&
                     yaml.find("experiment files are JSON") != std::string::npos,
                 yaml.c_str());
        const std::string json = messageFor("exp.json", "{\"trainer\": {\"max_epochs\": 2,}}");
        QVERIFY2(json.find("not valid JSON") != std::string::npos &&
                     json.find("experiment files are JSON") == std::string::npos,
                 json.c_str());
        // A valid file with a wrong key is about the key, whatever its name.
        const std::string key = messageFor("exp.yml", "{\"trainer\": {\"max_epoch\": 2}}");
        QVERIFY2(key.find("max_epochs") != std::string::npos && key.find("experiment files are JSON") == std::string::npos,
                 key.c_str());
        // An empty file (a save that failed, a `>` that went wrong) says so, not "unexpected end of input".
        const std::string empty = messageFor("empty.json", " \n");
        QVERIFY2(empty.find("empty.json' is empty: an experiment file is a JSON object") != std::string::npos &&
                     empty.find("unexpected end") == std::string::npos,
                 empty.c_str());
    }

    void everyKeyIsDescribedOnceAndNamesItsOwnField() {
        ExperimentConfig c;
        std::vector<const void*> fields;
        for (const auto& key : configSchema()) {
            QVERIFY2(!key.label.empty() && !key.help.empty() && !key.group.empty(), key.key.c_str());
            QVERIFY(findConfigKey(key.key) == &key);
            fields.push_back(std::visit([](auto* p) { return static_cast<const void*>(p); }, key.field(c)));
        }
        // No two keys read or write the same member (a copy-pasted accessor would).
        auto sorted = fields;
        std::sort(sorted.begin(), sorted.end());
        QVERIFY(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
        // The JSON file has exactly the described keys, in the table's order.
        QCOMPARE(configKeys().size(), configSchema().size());
        QCOMPARE(configKeys().front(), std::string("name"));
        QVERIFY(findConfigKey("trainer.checkpoint") == nullptr);
    }

    void perKeyChecksComeFromTheDescription() {
        // Each numeric lower bound of the table is enforced by validate() for its key.
        for (const auto& key : configSchema()) {
            if (!key.min || key.type == ConfigType::IntList) continue;
            ExperimentConfig c;
            const double below = key.min_exclusive ? *key.min : *key.min - 1;
            std::visit(
                [below](auto* p) {
                    using V = std::remove_pointer_t<decltype(p)>;
                    if constexpr (std::is_same_v<V, int64_t> || std::is_same_v<V, double>) *p = static_cast<V>(below);
                    if constexpr (std::is_same_v<V, std::optional<int64_t>> || std::is_same_v<V, std::optional<double>>)
                        *p = static_cast<typename V::value_type>(below);
                },
                key.field(c));
            QVERIFY2(hasIssue(validate(c, cpuOnly()), key.key, "must be"), key.key.c_str());
        }
        ExperimentConfig lists;
        lists.model.hidden = {8, 0};
        QVERIFY(hasIssue(validate(lists, cpuOnly()), "model.hidden", "in [1, 65536], got 0"));
        QCOMPARE(configValueText(*findConfigKey("data.limit"), ExperimentConfig{}), std::string("all samples"));
        QCOMPARE(configValueText(*findConfigKey("model.hidden"), ExperimentConfig{}), std::string("256, 128"));
        QCOMPARE(configValueText(*findConfigKey("trainer.num_threads"), ExperimentConfig{}), std::string("default"));
    }

    void theFormIsOfferedOnlyWhatCanRun() {
        const auto& precision = *findConfigKey("trainer.precision");
        const auto& accelerator = *findConfigKey("trainer.accelerator");
        const auto& strategy = *findConfigKey("trainer.strategy");
        using L = std::vector<std::string>;
        QCOMPARE(offeredChoices(precision, cpuOnly()), (L{"32-true", "bf16-mixed"}));
        QCOMPARE(offeredChoices(precision, oneGpu()), (L{"32-true", "16-mixed", "bf16-mixed"}));
        QCOMPARE(offeredChoices(accelerator, cpuOnly()), (L{"auto", "cpu"}));
        QCOMPARE(offeredChoices(accelerator, oneGpu()), (L{"auto", "cpu", "cuda"}));
        // The distributed strategies only where c10d is built in.
        QCOMPARE(offeredChoices(strategy, oneGpu()), (L{"auto"}));
        auto withC10d = oneGpu();
        withC10d.distributed = true;
        QCOMPARE(offeredChoices(strategy, withC10d), (L{"auto", "ddp", "zero1", "zero2", "zero3", "pipeline"}));
        QCOMPARE(*offeredMax(*findConfigKey("trainer.devices"), oneGpu()), 1.0);
        for (const auto& s : strategy.choices) {
            ExperimentConfig c;
            c.trainer.strategy = s;
            const bool offered = s == "auto";
            QCOMPARE(validate(c, oneGpu()).empty(), offered);
        }
        const std::string listing = describeConfigKeys("trainer.batch");
        QVERIFY2(listing.find("trainer.batch_size  (integer)  default 64  in [1, 1048576]") == 0, listing.c_str());
        QVERIFY(describeConfigKeys("nope").empty());
    }

    // Under zero2 the reducer's keys do nothing (ZeRO-2 reduces its own gradient slices): a value
    // set away from its default is warned about, with the same reason the form disables the key by.
    // The bucket size applies (zero2 reduces in buckets of that size).
    void zero2WarnsThatTheReducerKeysHaveNoEffect() {
        auto withC10d = cpuOnly();
        withC10d.distributed = true;
        ExperimentConfig zero2;
        zero2.trainer.strategy = "zero2";
        zero2.trainer.devices = 2;
        std::vector<ConfigIssue> warnings;
        QVERIFY(validate(zero2, withC10d, &warnings).empty());
        QVERIFY2(warnings.empty(), issuesText(warnings).c_str());   // defaults are never warned about
        zero2.trainer.ddp.bucket_cap_mb = 50.0;
        zero2.trainer.ddp.find_unused_parameters = true;
        zero2.trainer.ddp.gradient_as_bucket_view = false;   // the default is on
        zero2.trainer.ddp.timeout_s = 60;   // the process group's: it applies
        QVERIFY(validate(zero2, withC10d, &warnings).empty());
        const std::string reason = "ZeRO-2 shards gradients itself; DDP's buckets are not used";
        for (const char* key : {"trainer.ddp.find_unused_parameters", "trainer.ddp.gradient_as_bucket_view"}) {
            QVERIFY2(hasIssue(warnings, key, "has no effect: " + reason), issuesText(warnings).c_str());
            QCOMPARE(noEffectReason(*findConfigKey(key), zero2, withC10d), reason);
        }
        QCOMPARE(warnings.size(), size_t(2));
        QCOMPARE(noEffectReason(*findConfigKey("trainer.ddp.bucket_cap_mb"), zero2, withC10d), std::string());
        // Under zero3 it does nothing either.
        ExperimentConfig zero3 = zero2;
        zero3.trainer.strategy = "zero3";
        QCOMPARE(noEffectReason(*findConfigKey("trainer.ddp.bucket_cap_mb"), zero3, withC10d),
                 std::string("ZeRO-3 shards gradients itself; DDP's buckets are not used"));
        // The same settings under ddp and zero1 (DDP's reducer) are used: nothing to warn about.
        for (const char* reduced : {"ddp", "zero1"}) {
            ExperimentConfig c = zero2;
            c.trainer.strategy = reduced;
            warnings.clear();
            QVERIFY(validate(c, withC10d, &warnings).empty());
            QVERIFY2(warnings.empty(), issuesText(warnings).c_str());
        }
        // One process: no strategy synchronises anything.
        ExperimentConfig single = zero2;
        single.trainer.strategy = "auto";
        single.trainer.devices = 1;
        warnings.clear();
        QVERIFY(validate(single, withC10d, &warnings).empty());
        QVERIFY(hasIssue(warnings, "trainer.ddp.bucket_cap_mb", "one process"));
        QVERIFY(hasIssue(warnings, "trainer.ddp.timeout_s", "one process"));
    }

    // The runtime notes that came before the key table's rules, as validation warnings now; a
    // key validation refuses gets its error, not a second message.
    void noEffectWarningsFollowTheKeyTable() {
        std::vector<ConfigIssue> warnings;
        ExperimentConfig cpuToggles;
        cpuToggles.trainer.cudnn_benchmark = true;
        cpuToggles.trainer.tf32 = true;
        QVERIFY(validate(cpuToggles, cpuOnly(), &warnings).empty());
        QVERIFY(hasIssue(warnings, "trainer.cudnn_benchmark", "CUDA only"));
        QVERIFY(hasIssue(warnings, "trainer.tf32", "CUDA only"));
        warnings.clear();
        QVERIFY(validate(cpuToggles, oneGpu(), &warnings).empty());
        QVERIFY2(warnings.empty(), issuesText(warnings).c_str());

        ExperimentConfig images;
        images.data.bucket_by_length = true;
        images.optimizer.momentum = 0.5;   // adam
        warnings.clear();
        QVERIFY(validate(images, cpuOnly(), &warnings).empty());
        QVERIFY(hasIssue(warnings, "data.bucket_by_length", "applies to text data (data.kind is idx)"));
        QVERIFY(hasIssue(warnings, "optimizer.momentum", "only sgd uses momentum (optimizer.name is adam)"));
        QCOMPARE(warnings.size(), size_t(2));

        ExperimentConfig refused;
        refused.trainer.persistent_workers = true;
        refused.trainer.num_workers = 0;
        warnings.clear();
        QVERIFY(hasIssue(validate(refused, cpuOnly(), &warnings), "trainer.persistent_workers", "needs trainer.num_workers"));
        QVERIFY2(warnings.empty(), issuesText(warnings).c_str());

        // data.on_device holds fixed-size samples: images and tables yes, text refused.
        ExperimentConfig onDevice;
        onDevice.data.on_device = true;
        warnings.clear();
        QVERIFY(validate(onDevice, oneGpu(), &warnings).empty());
        QVERIFY2(warnings.empty(), issuesText(warnings).c_str());
        onDevice.data.kind = "wordnet";
        onDevice.model.name = "distilbert";
        warnings.clear();
        QVERIFY(hasIssue(validate(onDevice, oneGpu(), &warnings), "data.on_device",
                         "wordnet batches are padded per batch on the host"));
        QVERIFY(!hasIssue(warnings, "data.on_device", ""));
    }

    // trainer.cuda_graph=step: refused, naming the key and the reason, where it cannot capture (no
    // CUDA build or device, a distributed strategy, an optimizer without a fused kernel, per-batch
    // padding); accepted on a CUDA build with one GPU.
    void cudaGraphNeedsOneGpuAFusedOptimizerAndFixedShapes() {
        DeviceCapabilities graphs = oneGpu();
        graphs.fused_optimizers = true;
        graphs.cuda_graphs = true;
        graphs.distributed = true;
        ExperimentConfig c;
        c.trainer.cuda_graph = "step";
        QVERIFY2(validate(c, graphs).empty(), issuesText(validate(c, graphs)).c_str());
        QVERIFY(hasIssue(validate(c, cpuOnly()), "trainer.cuda_graph", "needs a CUDA build of Hearth"));
        QVERIFY(hasIssue(validate(c, oneGpu()), "trainer.cuda_graph", "needs a CUDA build of Hearth"));
        ExperimentConfig cpu = c;
        cpu.trainer.accelerator = "cpu";
        QVERIFY(hasIssue(validate(cpu, graphs), "trainer.cuda_graph", "this run trains on the CPU"));
        ExperimentConfig ddp = c;
        ddp.trainer.strategy = "ddp";
        QVERIFY(hasIssue(validate(ddp, graphs), "trainer.cuda_graph", "ddp reduces gradients from autograd hooks"));
        ExperimentConfig adagrad = c;
        adagrad.optimizer.name = "adagrad";
        QVERIFY(hasIssue(validate(adagrad, graphs), "optimizer.name", "adagrad has no fused kernel"));
        ExperimentConfig foreach = c;
        foreach.optimizer.implementation = "foreach";
        QVERIFY(hasIssue(validate(foreach, graphs), "optimizer.implementation", "use auto or fused"));
        ExperimentConfig text = c;
        text.data.kind = "wordnet";
        text.model.name = "distilbert";
        text.data.padding = "longest";
        QVERIFY(hasIssue(validate(text, graphs), "data.padding", "use max_length"));
        text.data.padding = "max_length";
        QVERIFY(!hasIssue(validate(text, graphs), "data.padding", ""));
        QVERIFY(!hasIssue(validate(text, graphs), "trainer.cuda_graph", ""));
        // On the CPU the key does nothing, and off is never refused.
        std::vector<ConfigIssue> warnings;
        c.trainer.cuda_graph = "off";
        QVERIFY(validate(c, cpuOnly(), &warnings).empty());
    }

    void configKeysListsEveryLeaf() {
        const auto keys = configKeys();
        QVERIFY(std::find(keys.begin(), keys.end(), "trainer.checkpoint.monitor") != keys.end());
        QVERIFY(std::find(keys.begin(), keys.end(), "data.limit") != keys.end());
        QVERIFY(std::find(keys.begin(), keys.end(), "trainer") == keys.end());
    }

    // trainer.num_threads=0 means one thread per physical core: two hyperthreads of a core count
    // once, cores of two packages with the same core id count twice, an unreadable topology is 0.
    void physicalCoresCountEachCoreOnce() {
        QTemporaryDir dir;
        const auto cpu = [&dir](int n, int package, int core) {
            const QString topology = dir.filePath(QString("cpu%1/topology").arg(n));
            QVERIFY(QDir().mkpath(topology));
            QFile p(topology + "/physical_package_id"), c(topology + "/core_id");
            QVERIFY(p.open(QIODevice::WriteOnly) && c.open(QIODevice::WriteOnly));
            p.write(QByteArray::number(package) + "\n");
            c.write(QByteArray::number(core) + "\n");
        };
        // Package 0: cores 0 and 1, each with two hyperthreads (cpus 0/2 and 1/3); package 1: core 0.
        cpu(0, 0, 0);
        cpu(1, 0, 1);
        cpu(2, 0, 0);
        cpu(3, 0, 1);
        cpu(4, 1, 0);
        const std::string root = dir.path().toStdString();
        QCOMPARE(hearth::physicalCores({0, 1, 2, 3, 4}, root), int64_t(3));
        QCOMPARE(hearth::physicalCores({0, 2}, root), int64_t(1));   // an affinity mask of one core's threads
        QCOMPARE(hearth::physicalCores({0, 1}, root), int64_t(2));   // one thread per core (many VMs)
        QCOMPARE(hearth::physicalCores({0, 7}, root), int64_t(0));   // cpu7 has no topology here
        // This machine: at least one core, at most one per logical CPU.
        const int64_t here = hearth::physicalCoresAvailable();
        QVERIFY(here >= 1 && here <= std::max<int64_t>(1, std::thread::hardware_concurrency()));
    }
};

QTEST_GUILESS_MAIN(TestExperimentConfig)
#include "test_experiment_config.moc"
