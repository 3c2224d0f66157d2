// DDP, ZeRO-1, ZeRO-2, ZeRO-3 and the pipeline on c10d over Gloo with two real processes
// (ddp_rank_child): after K SGD or Adam steps the weights equal one process training on the
// global batch, also with accumulation (no_sync), find_unused_parameters, gradient_as_bucket_view
// and global-norm clipping; zero1, zero2 and zero3 ranks hold about half the optimizer state each,
// zero2 and zero3 ranks half the gradients, zero3's model none of its own parameters between
// steps; the memory breakdown counts the reducer's buckets as gradients; a sharded checkpoint
// holds every rank's optimizer share and the whole model. Worlds of one, dying ranks and the
// launchers' rendezvous: test_ddp_world.
#include "DdpWorld.h"

#include "engine/strategy/CheckpointFile.h"
#include "engine/strategy/DdpStrategy.h"

#include <QTemporaryDir>
#include <QTest>

#include <limits>

using namespace hearth;
using namespace hearth::testing;

class TestDdp : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }

    void equalsOneProcessOnTheGlobalBatch_data() {
        QTest::addColumn<QString>("strategy");
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<int>("accumulate");
        QTest::addColumn<bool>("findUnused");
        QTest::addColumn<bool>("bucketView");
        QTest::addColumn<double>("clip");
        QTest::addColumn<bool>("float64");
        QTest::addColumn<bool>("offload");
        QTest::addColumn<int>("blocksPerUnit");   // trainer.fsdp.blocks_per_unit (zero3)
        QTest::addColumn<bool>("prefetch");       // trainer.fsdp.prefetch (zero3; on by default)
        QTest::addColumn<int>("microBatches");    // trainer.pipeline.micro_batches (pipeline)
        QTest::newRow("ddp, sgd") << "ddp" << "sgd" << 1 << false << false << 0.0 << false << false << 1 << true << 4;
        QTest::newRow("ddp, adam") << "ddp" << "adam" << 1 << false << false << 0.0 << false << false << 1 << true << 4;
        QTest::newRow("ddp, adam, accumulation (no_sync)") << "ddp" << "adam" << 2 << false << false << 0.0 << false << false << 1 << true << 4;
        QTest::newRow("ddp, sgd, find_unused_parameters") << "ddp" << "sgd" << 1 << true << false << 0.0 << false << false << 1 << true << 4;
        QTest::newRow("ddp, sgd, gradient_as_bucket_view, accumulation") << "ddp" << "sgd" << 2 << false << true << 0.0 << false << false << 1 << true << 4;
        QTest::newRow("zero1, adam") << "zero1" << "adam" << 1 << false << false << 0.0 << false << false << 1 << true << 4;
        QTest::newRow("zero1, sgd, accumulation") << "zero1" << "sgd" << 2 << false << false << 0.0 << false << false << 1 << true << 4;
        QTest::newRow("zero2, adam") << "zero2" << "adam" << 1 << false << false << 0.0 << false << false << 1 << true << 4;
        QTest::newRow("zero2, sgd, accumulation") << "zero2" << "sgd" << 2 << false << false << 0.0 << false << false << 1 << true << 4;
        // A small clip_val clips every step: the norm must be the global one, not a shard's.
        QTest::newRow("ddp, sgd, clipped") << "ddp" << "sgd" << 1 << false << false << 0.05 << false << false << 1 << true << 4;
        QTest::newRow("zero1, adam, clipped") << "zero1" << "adam" << 1 << false << false << 0.05 << false << false << 1 << true << 4;
        QTest::newRow("zero2, sgd, clipped") << "zero2" << "sgd" << 1 << false << false << 0.05 << false << false << 1 << true << 4;
        // In float64 the sums of two halves and of the whole batch agree to rounding: 1e-12.
        QTest::newRow("ddp, sgd, float64") << "ddp" << "sgd" << 1 << false << false << 0.0 << true << false << 1 << true << 4;
        QTest::newRow("ddp, adam, float64, accumulation") << "ddp" << "adam" << 2 << false << false << 0.0 << true << false << 1 << true << 4;
        QTest::newRow("ddp, sgd, float64, find_unused, bucket view") << "ddp" << "sgd" << 1 << true << true << 0.0 << true << false << 1 << true << 4;
        QTest::newRow("zero1, adam, float64") << "zero1" << "adam" << 1 << false << false << 0.0 << true << false << 1 << true << 4;
        QTest::newRow("zero2, adam, float64, accumulation") << "zero2" << "adam" << 2 << false << false << 0.0 << true << false << 1 << true << 4;
        QTest::newRow("zero3, adam") << "zero3" << "adam" << 1 << false << false << 0.0 << false << false << 1 << true << 4;
        QTest::newRow("zero3, sgd, accumulation") << "zero3" << "sgd" << 2 << false << false << 0.0 << false << false << 1 << true << 4;
        QTest::newRow("zero3, adam, clipped") << "zero3" << "adam" << 1 << false << false << 0.05 << false << false << 1 << true << 4;
        QTest::newRow("zero3, sgd, float64") << "zero3" << "sgd" << 1 << false << false << 0.0 << true << false << 1 << true << 4;
        QTest::newRow("zero3, adam, float64, accumulation, clipped") << "zero3" << "adam" << 2 << false << false << 0.05 << true << false << 1 << true << 4;
        // trainer.offload_optimizer: each sharded optimizer stepping on its own host copies.
        QTest::newRow("zero1, adam, offload") << "zero1" << "adam" << 1 << false << false << 0.0 << false << true << 1 << true << 4;
        QTest::newRow("zero2, sgd, offload, accumulation, clipped") << "zero2" << "sgd" << 2 << false << false << 0.05 << false << true << 1 << true << 4;
        QTest::newRow("zero2, adam, float64, offload") << "zero2" << "adam" << 1 << false << false << 0.0 << true << true << 1 << true << 4;
        QTest::newRow("zero3, adam, float64, offload, accumulation, clipped") << "zero3" << "adam" << 2 << false << false << 0.05 << true << true << 1 << true << 4;
        // Both hidden layers in one unit: gathered together, reduced together.
        QTest::newRow("zero3, adam, float64, 2 blocks per unit, accumulation") << "zero3" << "adam" << 2 << false << false << 0.0 << true << false << 2 << true << 4;
        QTest::newRow("zero3, sgd, float64, no prefetch") << "zero3" << "sgd" << 1 << false << false << 0.0 << true << false << 1 << false << 4;
        // The pipeline: the MLP's two hidden layers on two processes (the head with the second), the
        // batch of 32 cut into micro-batches; every process reads the whole batch.
        QTest::newRow("pipeline, sgd") << "pipeline" << "sgd" << 1 << false << false << 0.0 << false << false << 1 << true << 4;
        QTest::newRow("pipeline, adam, accumulation, clipped") << "pipeline" << "adam" << 2 << false << false << 0.05 << false << false << 1 << true << 4;
        QTest::newRow("pipeline, sgd, float64, 1 micro-batch") << "pipeline" << "sgd" << 1 << false << false << 0.0 << true << false << 1 << true << 1;
        QTest::newRow("pipeline, adam, float64, accumulation, clipped, 3 micro-batches") << "pipeline" << "adam" << 2 << false << false << 0.05 << true << false << 1 << true << 3;
    }

    void equalsOneProcessOnTheGlobalBatch() {
        QFETCH(QString, strategy);
        QFETCH(QString, optimizer);
        QFETCH(int, accumulate);
        QFETCH(bool, findUnused);
        QFETCH(bool, bucketView);
        QFETCH(double, clip);
        QFETCH(bool, float64);
        QFETCH(bool, offload);
        QFETCH(int, blocksPerUnit);
        QFETCH(bool, prefetch);
        QFETCH(int, microBatches);
        const bool pipeline = strategy == "pipeline";
        const World w = runWorld(2, {{"DDP_STRATEGY", strategy},
                                     {"DDP_MICRO_BATCHES", QString::number(microBatches)},
                                     {"DDP_PREFETCH", prefetch ? "1" : "0"},
                                     {"DDP_BLOCKS_PER_UNIT", QString::number(blocksPerUnit)},
                                     {"DDP_OFFLOAD", offload ? "1" : "0"},
                                     {"DDP_OPTIMIZER", optimizer},
                                     {"DDP_BATCH", pipeline ? "32" : "16"},   // the pipeline's is the global batch
                                     {"DDP_ACCUMULATE", QString::number(accumulate)},
                                     {"DDP_FIND_UNUSED", findUnused ? "1" : "0"},
                                     {"DDP_BUCKET_VIEW", bucketView ? "1" : "0"},
                                     {"DDP_CLIP", QString::number(clip)},
                                     {"DDP_FLOAT64", float64 ? "1" : "0"}});
        for (int r = 0; r < 2; ++r) QVERIFY2(w.exit_codes[r] == 0, qPrintable(w.output[r]));
        // Both ranks hold the same weights ...
        QCOMPARE(maxDiff(w.weights[0], w.weights[1]), 0.0);
        // ... which one process reaches on the global batch (2 x 16) after the same steps.
        const DdpSettings single = globalBatch(optimizer, accumulate, clip, float64);
        const auto reference_run = trainBlobs(single);
        const auto& reference = reference_run.weights;
        const double diff = maxDiff(w.weights[0], reference);
        QVERIFY2(diff < (float64 ? 1e-12 : 1e-5), qPrintable(QString("max weight difference %1").arg(diff)));
        if (clip > 0.0) {  // not vacuous: clipping changed the training
            DdpSettings unclipped = single;
            unclipped.clip = 0.0;
            QVERIFY(maxDiff(trainBlobs(unclipped).weights, reference) > 1e-3);
        }
        // Not vacuous: the weights moved from their start.
        torch::manual_seed(5);
        ExperimentConfig c;
        c.model.name = "mlp";
        c.model.hidden = {16, 8};
        auto fresh = createModel(c.model, ModelInput{{8}, 3});
        std::vector<torch::Tensor> flat;
        for (const auto& p : fresh->parameters()) flat.push_back(p.detach().flatten());
        QVERIFY(maxDiff(torch::cat(flat), reference) > 1e-2);
        // Sharded evaluation: the gathered test predictions are the single process's, each of the
        // 33 samples once and in order (rank 1's shard was padded), and so are the losses.
        QCOMPARE(w.predictions[0].size(0), int64_t(33));
        QCOMPARE(maxDiff(w.predictions[0].select(1, 0), reference_run.predictions.select(1, 0)), 0.0);
        QCOMPARE(maxDiff(w.predictions[0], w.predictions[1]), 0.0);
        QCOMPARE(w.losses[0].size(0), int64_t(3));  // two validations and the test
        QVERIFY2(maxDiff(w.losses[0], reference_run.losses) < (float64 ? 1e-12 : 1e-5), qPrintable(QString::number(maxDiff(w.losses[0], reference_run.losses))));
        QVERIFY(maxDiff(w.predictions[0], reference_run.predictions) == 0.0);
        // Optimizer state: each ddp rank holds all of it; zero1 and zero2 ranks split it between
        // them (zero2 pads the flat vector to equal slices). Gradients: zero2 keeps only its slice.
        const int64_t total = w.shares[0][1].item<int64_t>();
        const int64_t held0 = w.shares[0][0].item<int64_t>(), held1 = w.shares[1][0].item<int64_t>();
        const int64_t grads0 = w.shares[0][2].item<int64_t>(), grads1 = w.shares[1][2].item<int64_t>();
        const QString shares = QString("optimizer %1 + %2, gradients %3 + %4, of %5")
                                   .arg(held0).arg(held1).arg(grads0).arg(grads1).arg(total);
        // Padding: zero2 pads its one flat vector, zero3 each of its 3 units (root and 2 blocks).
        const int64_t padding = strategy == "zero3" ? 3 : 1;
        if (pipeline) {
            // Stage 1: the first hidden layer (8 x 16 + 16); stage 2: the second (16 x 8 + 8) and the
            // head (8 x 3 + 3). Each holds only its own parameters, gradients and optimizer state.
            QVERIFY2(held0 == 144 && held1 == 163 && held0 + held1 == total, qPrintable(shares));
            QVERIFY2(grads0 <= held0 && grads1 <= held1, qPrintable(shares));
            const int64_t stored0 = w.shares[0][3].item<int64_t>(), stored1 = w.shares[1][3].item<int64_t>();
            QVERIFY2(stored0 == held0 && stored1 == held1, qPrintable(shares + QString(", model storage %1 + %2").arg(stored0).arg(stored1)));
            QCOMPARE(w.shares[0][6].item<int64_t>(), held0);   // the memory breakdown's parameters
            return;
        }
        if (strategy == "ddp") {
            QVERIFY2(held0 == total && held1 == total, qPrintable(shares));
        } else {
            QVERIFY2(held0 + held1 >= total && held0 + held1 <= total + padding, qPrintable(shares));
            QVERIFY2(held0 < total * 0.75 && held1 < total * 0.75, qPrintable(shares));
        }
        if (strategy == "zero2") {
            QVERIFY2(grads0 == (total + 1) / 2 && grads1 == (total + 1) / 2, qPrintable(shares));
        } else if (strategy == "zero3") {
            // Never more than the shards' gradients (the model's own are freed after each backward;
            // between groups the shards' are set to none).
            QVERIFY2(grads0 <= held0 && grads1 <= held1, qPrintable(shares));
            if (accumulate > 1) QVERIFY2(grads0 == held0 && grads1 == held1, qPrintable(shares));
        } else {
            // ddp and zero1 drop the gradients' views of the reducer's buckets after each step
            // (trainer.set_grads_to_none, the default; the buckets keep their memory); they are
            // held between the micro-batches of an accumulation group.
            const int64_t expected = accumulate > 1 ? total : 0;
            QVERIFY2(grads0 == expected && grads1 == expected, qPrintable(shares));
        }
        // Parameters between steps: zero3's model holds none of its own (its shard is held0 of them,
        // about half), every other strategy the whole model on every rank.
        const int64_t stored0 = w.shares[0][3].item<int64_t>(), stored1 = w.shares[1][3].item<int64_t>();
        // Inside a step, after forward: zero3 holds the root unit only (the head, 8 x 3 + 3), each
        // block having been gathered for its forward and freed after it.
        const int64_t live0 = w.shares[0][4].item<int64_t>(), live1 = w.shares[1][4].item<int64_t>();
        // Offload: the optimizer stepped host copies of its tensors (not the tensors themselves) and
        // holds its state beside them; without it, no such copies.
        const int64_t host0 = w.shares[0][5].item<int64_t>(), host1 = w.shares[1][5].item<int64_t>();
        if (offload) QVERIFY2(host0 == held0 && host1 == held1, qPrintable(shares + QString(", host copies %1 + %2").arg(host0).arg(host1)));
        else QVERIFY2(host0 == 0 && host1 == 0, qPrintable(QString("host copies %1 + %2").arg(host0).arg(host1)));
        // The memory breakdown counts zero3's shards as its parameters (not as optimizer state).
        const int64_t counted0 = w.shares[0][6].item<int64_t>();
        QCOMPARE(counted0, strategy == "zero3" ? held0 : total);
        if (strategy == "zero3") {
            QVERIFY2(stored0 == 0 && stored1 == 0, qPrintable(shares + QString(", model storage %1 + %2").arg(stored0).arg(stored1)));
            QVERIFY2(live0 == 27 && live1 == 27, qPrintable(QString("after forward %1 + %2").arg(live0).arg(live1)));
        } else {
            QVERIFY2(stored0 == total && stored1 == total, qPrintable(shares));
            QCOMPARE(live0, total);
        }
    }

    // On a GPU machine (scripts/gpu-check): NCCL in a world of one, two Gloo ranks sharing one GPU,
    // and NCCL across two GPUs where there are two, each equal to one process on the GPU with the
    // global batch (float64).
    void onGpusEqualsOneProcess_data() {
        QTest::addColumn<QString>("strategy");
        QTest::addColumn<QString>("backend");
        QTest::addColumn<int>("world");
        QTest::newRow("ddp, nccl, world 1") << "ddp" << "nccl" << 1;
        QTest::newRow("zero2, nccl, world 1") << "zero2" << "nccl" << 1;
        QTest::newRow("ddp, gloo, 2 ranks on one GPU") << "ddp" << "gloo" << 2;
        QTest::newRow("zero2, gloo, 2 ranks on one GPU") << "zero2" << "gloo" << 2;
        QTest::newRow("ddp, nccl, 2 GPUs") << "ddp" << "nccl" << 2;
        QTest::newRow("zero1, nccl, 2 GPUs") << "zero1" << "nccl" << 2;
        QTest::newRow("zero2, nccl, 2 GPUs") << "zero2" << "nccl" << 2;
        // zero3 and the offloaded optimizer (STRATEGY+offload: pinned host copies, stepped on the CPU).
        QTest::newRow("zero3, nccl, world 1") << "zero3" << "nccl" << 1;
        QTest::newRow("zero3, gloo, 2 ranks on one GPU") << "zero3" << "gloo" << 2;
        QTest::newRow("zero3, nccl, 2 GPUs") << "zero3" << "nccl" << 2;
        QTest::newRow("zero2 offloaded, nccl, world 1") << "zero2+offload" << "nccl" << 1;
        QTest::newRow("zero3 offloaded, gloo, 2 ranks on one GPU") << "zero3+offload" << "gloo" << 2;
        // The pipeline's two stages (every process reads the whole batch of 32).
        QTest::newRow("pipeline, gloo, 2 stages on one GPU") << "pipeline" << "gloo" << 2;
        QTest::newRow("pipeline, nccl, 2 GPUs") << "pipeline" << "nccl" << 2;
    }

    void onGpusEqualsOneProcess() {
        QFETCH(QString, strategy);
        QFETCH(QString, backend);
        QFETCH(int, world);
        if (!torch::cuda::is_available()) QSKIP("needs CUDA (a GPU machine: scripts/gpu-check)");
        if (backend == "nccl" && world > static_cast<int>(torch::cuda::device_count()))
            QSKIP("NCCL puts one rank per GPU: this machine has too few GPUs for this row");
        const World w = runWorld(world, {{"DDP_STRATEGY", strategy.section('+', 0, 0)},
                                         {"DDP_OFFLOAD", strategy.endsWith("+offload") ? "1" : "0"},
                                         {"DDP_OPTIMIZER", "adam"},
                                         {"DDP_BATCH", QString::number(strategy == "pipeline" ? 32 : 32 / world)},
                                         {"DDP_FLOAT64", "1"},
                                         {"DDP_DEVICE", "cuda"}, {"DDP_BACKEND", backend}});
        for (int r = 0; r < world; ++r) QVERIFY2(w.exit_codes[r] == 0, qPrintable(w.output[r]));
        DdpSettings single;
        single.optimizer = "adam";
        single.batch = 32;
        single.float64 = true;
        single.device = "cuda";
        const auto reference = trainBlobs(single);
        const double diff = maxDiff(w.weights[0], reference.weights);
        QVERIFY2(diff < 1e-10, qPrintable(QString("max weight difference %1").arg(diff)));
        QCOMPARE(w.predictions[0].size(0), int64_t(33));
    }

    // A sharded optimizer's checkpoint holds every rank's share, each loadable into an optimizer
    // over the parameters that rank covers; ddp's holds the one optimizer state as before.
    void checkpointHoldsEveryRanksOptimizerShare_data() {
        QTest::addColumn<QString>("strategy");
        QTest::newRow("zero1") << "zero1";
        QTest::newRow("zero2") << "zero2";
        QTest::newRow("zero3") << "zero3";
        QTest::newRow("pipeline") << "pipeline";
        QTest::newRow("ddp") << "ddp";
    }

    void checkpointHoldsEveryRanksOptimizerShare() {
        QFETCH(QString, strategy);
        QTemporaryDir dir;
        const World w = runWorld(2, {{"DDP_STRATEGY", strategy}, {"DDP_OPTIMIZER", "adam"},
                                     {"DDP_CHECKPOINT", dir.path()}});
        for (int r = 0; r < 2; ++r) QVERIFY2(w.exit_codes[r] == 0, qPrintable(w.output[r]));
        const std::string file = dir.filePath("best.pt").toStdString();
        QVERIFY(QFile::exists(dir.filePath("best.pt")));
        if (strategy == "ddp") {
            QVERIFY_THROWS_EXCEPTION(std::runtime_error, readOptimizerShards(file));
            return;
        }
        const auto shards = readOptimizerShards(file);
        QCOMPARE(shards.strategy, strategy.toStdString());
        QCOMPARE(shards.states.size(), size_t{2});
        for (int r = 0; r < 2; ++r) {
            // What this rank's optimizer covered, as its own count says.
            QCOMPARE(shards.numels[r].sum().item<int64_t>(), w.shares[r][0].item<int64_t>());
            std::vector<torch::Tensor> params;
            for (int64_t i = 0; i < shards.numels[r].numel(); ++i)
                params.push_back(torch::zeros({shards.numels[r][i].item<int64_t>()}, torch::kFloat32));
            torch::optim::Adam adam(params);
            loadOptimizerBytes(shards.states[r], adam);
            QCOMPARE(adam.state().size(), params.size());   // every parameter it covers has Adam state
            int64_t state_elements = 0;
            for (const auto& entry : adam.state()) {
                const auto& state = static_cast<const torch::optim::AdamParamState&>(*entry.second);
                QVERIFY(state.step() > 0);
                QVERIFY(state.exp_avg_sq().abs().sum().item<double>() > 0.0);
                state_elements += state.exp_avg().numel();
            }
            QCOMPARE(state_elements, shards.numels[r].sum().item<int64_t>());
        }
        // The two shares together cover the model (zero2: its padded flat vector; zero3: its 3 units).
        const int64_t covered = shards.numels[0].sum().item<int64_t>() + shards.numels[1].sum().item<int64_t>();
        QVERIFY(covered >= w.shares[0][1].item<int64_t>() &&
                covered <= w.shares[0][1].item<int64_t>() + (strategy == "zero3" ? 3 : 1));
        // best.pt holds the whole model (zero3 gathers it to write it), loadable into a fresh one.
        ExperimentConfig c;
        c.model.name = "mlp";
        c.model.hidden = {16, 8};
        auto fresh = createModel(c.model, ModelInput{{8}, 3});
        loadCheckpointFile(file, *fresh);
        std::vector<torch::Tensor> flat;
        for (const auto& p : fresh->parameters()) flat.push_back(p.detach().flatten());
        QCOMPARE(maxDiff(torch::cat(flat), w.weights[0]), 0.0);   // the test ran on the best weights
    }

    // zero2 reduces the gradients a bucket at a time onto their owners. Buckets of 419 bytes cut
    // the MLP's 307 elements into [0,128) [128,144) [144,272) [272,308) (float64: 52 elements; a
    // parameter larger than that is a bucket of its own), the third across the two slices'
    // boundary at 154, so one bucket is summed onto both ranks.
    void zero2InSmallBucketsEqualsOneProcess_data() {
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<int>("accumulate");
        QTest::addColumn<bool>("float64");
        QTest::newRow("sgd, float64, accumulation") << "sgd" << 2 << true;
        QTest::newRow("adam, float64") << "adam" << 1 << true;
        QTest::newRow("adam, float32") << "adam" << 1 << false;
    }

    void zero2InSmallBucketsEqualsOneProcess() {
        QFETCH(QString, optimizer);
        QFETCH(int, accumulate);
        QFETCH(bool, float64);
        const World w = runWorld(2, {{"DDP_STRATEGY", "zero2"}, {"DDP_OPTIMIZER", optimizer}, {"DDP_BATCH", "16"},
                                     {"DDP_ACCUMULATE", QString::number(accumulate)},
                                     {"DDP_FLOAT64", float64 ? "1" : "0"}, {"DDP_BUCKET_MB", "0.0004"}});
        for (int r = 0; r < 2; ++r) QVERIFY2(w.exit_codes[r] == 0, qPrintable(w.output[r]));
        QCOMPARE(maxDiff(w.weights[0], w.weights[1]), 0.0);
        const double diff = maxDiff(w.weights[0], trainBlobs(globalBatch(optimizer, accumulate, 0.0, float64)).weights);
        QVERIFY2(diff < (float64 ? 1e-12 : 1e-5), qPrintable(QString("max weight difference %1").arg(diff)));
        // Each rank kept only its slice of the gradients (154 of the padded 308).
        for (int r = 0; r < 2; ++r)
            QVERIFY2(w.shares[r][2].item<int64_t>() <= 154, qPrintable(QString::number(w.shares[r][2].item<int64_t>())));
        // The buckets went during backward: when the first layer's weight gradient (128 elements)
        // arrived, the other 179 gradient elements had been reduced and freed already (at most the
        // first layer's bias, in a bucket of its own, could still be there).
        for (int r = 0; r < 2; ++r)
            QVERIFY2(w.shares[r][7].item<int64_t>() <= 16, qPrintable(QString::number(w.shares[r][7].item<int64_t>())));
        // One process (no zero2) holds all the others then (and, accumulating, the first layer's
        // weight gradient of the micro-batch before).
        QCOMPARE(trainBlobs(globalBatch(optimizer, accumulate, 0.0, float64)).share[7].item<int64_t>(),
                 int64_t(accumulate > 1 ? 307 : 307 - 128));
    }

    // The pipeline cuts a transformer between its encoder layers (the embeddings on the first
    // stage, the head on the last; every stage reads its micro-batch's attention mask, the rows
    // padded differently): equal to one process on the global batch.
    void pipelineCutsATransformerLikeOneProcess_data() {
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<int>("accumulate");
        QTest::addColumn<double>("clip");
        QTest::addColumn<bool>("float64");
        QTest::newRow("adam, float64, accumulation, clipped, 3 micro-batches") << "adam" << 2 << 0.05 << true;
        QTest::newRow("sgd, float32") << "sgd" << 1 << 0.0 << false;
    }
    void pipelineCutsATransformerLikeOneProcess() {
        QFETCH(QString, optimizer);
        QFETCH(int, accumulate);
        QFETCH(double, clip);
        QFETCH(bool, float64);
        const World w = runWorld(2, {{"DDP_STRATEGY", "pipeline"}, {"DDP_MODEL", "distilbert"},
                                     {"DDP_OPTIMIZER", optimizer}, {"DDP_BATCH", "32"}, {"DDP_MICRO_BATCHES", "3"},
                                     {"DDP_ACCUMULATE", QString::number(accumulate)}, {"DDP_CLIP", QString::number(clip)},
                                     {"DDP_FLOAT64", float64 ? "1" : "0"}});
        for (int r = 0; r < 2; ++r) QVERIFY2(w.exit_codes[r] == 0, qPrintable(w.output[r]));
        QCOMPARE(maxDiff(w.weights[0], w.weights[1]), 0.0);
        DdpSettings single = globalBatch(optimizer, accumulate, clip, float64);
        single.model = "distilbert";
        const BlobsRun reference = trainBlobs(single);
        const double diff = maxDiff(w.weights[0], reference.weights);
        QVERIFY2(diff < (float64 ? 1e-12 : 1e-5), qPrintable(QString("max weight difference %1").arg(diff)));
        QCOMPARE(w.predictions[0].size(0), int64_t(33));
        QCOMPARE(maxDiff(w.predictions[0], reference.predictions), 0.0);
        QVERIFY2(maxDiff(w.losses[0], reference.losses) < (float64 ? 1e-12 : 1e-5), qPrintable(QString::number(maxDiff(w.losses[0], reference.losses))));
        // Not vacuous: the model learned the bands (chance is a third).
        const auto correct = (reference.predictions.select(1, 1) == reference.predictions.select(1, 2)).sum().item<int64_t>();
        QVERIFY2(correct > 16, qPrintable(QString("%1 of 33 right").arg(correct)));
        // The three equal layers cut 2 | 1 (FLOPs: the embeddings count none, the head little):
        // stage 1 holds the embeddings and two layers, stage 2 one layer and the head; each only
        // its own parameters and optimizer state.
        const int64_t total = w.shares[0][1].item<int64_t>();
        const int64_t held0 = w.shares[0][0].item<int64_t>(), held1 = w.shares[1][0].item<int64_t>();
        const QString shares = QString("optimizer %1 + %2 of %3").arg(held0).arg(held1).arg(total);
        QVERIFY2(held0 + held1 == total, qPrintable(shares));
        QVERIFY2(held1 < held0, qPrintable(shares));   // two layers and the embeddings against one layer and the head
        QCOMPARE(w.shares[0][3].item<int64_t>(), held0);   // the model's storage: its own stage only
        QCOMPARE(w.shares[1][3].item<int64_t>(), held1);
    }

    // A TorchScript module that is a scripted nn.Sequential: the pipeline cuts it between its
    // children (by parameter count: it has no FLOP count), and ZeRO-3 gathers it child block by
    // child block; both equal one process.
    void aScriptedSequentialIsCutAndShardedLikeOneProcess_data() {
        QTest::addColumn<QString>("strategy");
        QTest::addColumn<QString>("stageBlocks");   // trainer.pipeline.stage_blocks ("": balanced)
        QTest::newRow("pipeline") << "pipeline" << "";
        QTest::newRow("pipeline, stage_blocks 2, 1") << "pipeline" << "2,1";
        QTest::newRow("zero3") << "zero3" << "";
    }
    void aScriptedSequentialIsCutAndShardedLikeOneProcess() {
        QFETCH(QString, strategy);
        QFETCH(QString, stageBlocks);
        const bool pipeline = strategy == "pipeline";
        const World w = runWorld(2, {{"DDP_STRATEGY", strategy}, {"DDP_MODEL", "torchscript"}, {"DDP_OPTIMIZER", "adam"},
                                     {"DDP_BATCH", pipeline ? "32" : "16"}, {"DDP_ACCUMULATE", "2"},
                                     {"DDP_STAGE_BLOCKS", stageBlocks}});
        for (int r = 0; r < 2; ++r) QVERIFY2(w.exit_codes[r] == 0, qPrintable(w.output[r]));
        QCOMPARE(maxDiff(w.weights[0], w.weights[1]), 0.0);
        DdpSettings single = globalBatch("adam", 2, 0.0, false);
        single.model = "torchscript";
        const BlobsRun reference = trainBlobs(single);
        const double diff = maxDiff(w.weights[0], reference.weights);
        QVERIFY2(diff < 1e-5, qPrintable(QString("max weight difference %1").arg(diff)));
        QCOMPARE(maxDiff(w.predictions[0], reference.predictions), 0.0);
        const int64_t held0 = w.shares[0][0].item<int64_t>(), held1 = w.shares[1][0].item<int64_t>();
        const int64_t total = w.shares[0][1].item<int64_t>();   // 144 + 136 + 27 = 307
        const QString shares = QString("optimizer %1 + %2 of %3").arg(held0).arg(held1).arg(total);
        if (!pipeline) {
            QVERIFY2(held0 < total * 0.75 && held1 < total * 0.75, qPrintable(shares));
            QCOMPARE(w.shares[0][3].item<int64_t>(), int64_t(0));   // zero3: no parameters held between steps
            return;
        }
        // Balanced by parameters: 144 | 136 + 27; as given, 2 | 1: 144 + 136 | 27.
        if (stageBlocks.isEmpty()) QVERIFY2(held0 == 144 && held1 == 163, qPrintable(shares));
        else QVERIFY2(held0 == 280 && held1 == 27, qPrintable(shares));
    }

    // DdpStrategy::gradientBuffers (the reducer's buckets, one per parameter byte) are counted by
    // the memory breakdown as gradients (once: with gradient_as_bucket_view the gradients are their
    // views; without, a second copy) and left out of what the process held before its first step.
    // Left in, the breakdown's activations under ddp were one device's less the buckets: 0.2 MiB
    // instead of the optimizer step's 22.4 MiB on an MLP 2x2048.
    void ddpMemoryBreakdownCountsTheBucketsAsGradients_data() {
        QTest::addColumn<bool>("bucketView");
        QTest::newRow("gradient_as_bucket_view") << true;
        QTest::newRow("gradients copied into the buckets") << false;
    }

    void ddpMemoryBreakdownCountsTheBucketsAsGradients() {
        QFETCH(bool, bucketView);
        // An MLP with Adam: on 1.13 its step's temporaries (1 MB) are the peak; 2.x's fused kernel
        // makes none. Two ranks of 4 against one device on 4.
        const World w = runWorld(2, {{"DDP_STRATEGY", "ddp"}, {"DDP_OPTIMIZER", "adam"}, {"DDP_BATCH", "4"},
                                     {"DDP_HIDDEN", "512,512"}, {"DDP_BUCKET_VIEW", bucketView ? "1" : "0"}});
        DdpSettings single;
        single.optimizer = "adam";
        single.batch = 4;
        single.hidden = {512, 512};
        const torch::Tensor alone = trainBlobs(single).share;
        const int64_t param_bytes = alone[1].item<int64_t>() * 4;   // float32
        QCOMPARE(alone[9].item<int64_t>(), param_bytes);
        QCOMPARE(alone[10].item<int64_t>(), int64_t{0});   // one device: no buffers
        for (int r = 0; r < 2; ++r) {
            QVERIFY2(w.exit_codes[r] == 0, qPrintable(w.output[r]));
            const torch::Tensor& share = w.shares[r];
            QCOMPARE(share[10].item<int64_t>(), param_bytes);   // the buckets
            QCOMPARE(share[9].item<int64_t>(), bucketView ? param_bytes : 2 * param_bytes);
            // ddp holds at its peak what one device holds and its own (LibTorch 2.x keeps a second
            // set of buckets when it rebuilds them), never less: the buckets are not counted twice.
            const int64_t ddp = share[8].item<int64_t>(), one = alone[8].item<int64_t>();
            QVERIFY2(ddp >= one && ddp <= one + param_bytes + param_bytes / 10,
                     qPrintable(QString("rank %1 activations: ddp %2, one device %3 bytes (parameters %4)")
                                    .arg(r).arg(ddp).arg(one).arg(param_bytes)));
        }

        // The baseline: the buffers out of both readings (each storage once), never below zero.
        const std::vector<torch::Tensor> buffers{torch::zeros({25}), torch::zeros({25})};   // 2 x 100 bytes
        const MemoryBaseline b = memoryBaseline(1000, 600, {buffers[0], buffers[1], buffers[0].narrow(0, 0, 5)});
        QCOMPARE(b.bytes, int64_t{800});
        QCOMPARE(b.tensor_bytes, int64_t{400});
        QCOMPARE(memoryBaseline(1000, -1, buffers).tensor_bytes, int64_t{-1});   // tensors not counted
        QCOMPARE(memoryBaseline(100, 50, {torch::zeros({100})}).bytes, int64_t{0});
        // A resumed fit's loaded optimizer state is held, not baseline (counted as optimizer state).
        const MemoryBaseline resumed = memoryBaseline(1000, 600, buffers, 150);
        QCOMPARE(resumed.bytes, int64_t{650});
        QCOMPARE(resumed.tensor_bytes, int64_t{250});
        QVERIFY(createStrategy(TrainerConfig{}, torch::kCPU)->gradientBuffers().empty());   // one device
    }

    // The host's memory breakdown takes the training loop's peak, not what the checkpoint after
    // validation holds: zero1's rank 0 gathers every rank's serialised Adam state to write best.pt
    // (rank 1's share here is the 512x512 layer), which its breakdown called activations (1.09 MB,
    // checked). Its step needs little beyond the held tensors: rank 0 steps a small share, and
    // rank 1's broadcast parameters arrive where the dropped gradients were (24.8 KB).
    void aShardedCheckpointIsNotTakenForActivations() {
        QTemporaryDir dir;
        const World w = runWorld(2, {{"DDP_STRATEGY", "zero1"}, {"DDP_OPTIMIZER", "adam"}, {"DDP_BATCH", "4"},
                                     {"DDP_HIDDEN", "512,512"}, {"DDP_CHECKPOINT", dir.path()}});
        for (int r = 0; r < 2; ++r) QVERIFY2(w.exit_codes[r] == 0, qPrintable(w.output[r]));
        QVERIFY(QFile::exists(dir.filePath("best.pt")));
        const int64_t param_bytes = w.shares[0][1].item<int64_t>() * 4;
        const int64_t activations = w.shares[0][8].item<int64_t>();
        QVERIFY2(activations > 0 && activations < param_bytes / 2,
                 qPrintable(QString("rank 0 activations %1 bytes (parameters %2)").arg(activations).arg(param_bytes)));
    }

    // trainer.set_grads_to_none=false under ddp and zero1: the buckets zeroed in place and backward
    // adding into them reach the weights that dropping the gradients (the default) reaches, which
    // one process reaches on the global batch; the gradients stay held between steps.
    void gradientsZeroedInPlaceEqualOneProcess_data() {
        QTest::addColumn<QString>("strategy");
        QTest::addColumn<bool>("bucketView");
        QTest::newRow("ddp, bucket view") << "ddp" << true;
        QTest::newRow("ddp") << "ddp" << false;
        QTest::newRow("zero1, bucket view") << "zero1" << true;
    }

    void gradientsZeroedInPlaceEqualOneProcess() {
        QFETCH(QString, strategy);
        QFETCH(bool, bucketView);
        const World w = runWorld(2, {{"DDP_STRATEGY", strategy}, {"DDP_OPTIMIZER", "adam"}, {"DDP_ACCUMULATE", "2"},
                                     {"DDP_FLOAT64", "1"}, {"DDP_BUCKET_VIEW", bucketView ? "1" : "0"},
                                     {"DDP_GRADS_TO_NONE", "0"}});
        for (int r = 0; r < 2; ++r) QVERIFY2(w.exit_codes[r] == 0, qPrintable(w.output[r]));
        const double diff = maxDiff(w.weights[0], trainBlobs(globalBatch("adam", 2, 0.0, true)).weights);
        QVERIFY2(diff < 1e-12, qPrintable(QString("max weight difference %1").arg(diff)));
        const int64_t total = w.shares[0][1].item<int64_t>();
        QCOMPARE(w.shares[0][2].item<int64_t>(), total);
        QCOMPARE(w.shares[1][2].item<int64_t>(), total);
    }

};

QTEST_GUILESS_MAIN(TestDdp)
#include "test_ddp.moc"
