// c10d worlds beyond two equal ranks: a world of one trains like one device for every strategy
// (ddp and zero1 there without a reducer), watches the loss and agrees to stop alone, and its
// collectives return its own values; a rank that dies makes the other fail with a message within
// the timeout; torchrun's agent store, a store of another PyTorch refused fast, and the launchers'
// environment (torchrun, Slurm) read.
#include "DdpWorld.h"
#include "FakeStore.h"

#include "engine/TorchCompat.h"
#include "engine/dist/Rendezvous.h"
#include "engine/dist/StoreProbe.h"
#include "engine/strategy/DdpStrategy.h"

#include <QElapsedTimer>
#include <QTest>

#include <map>
#include <optional>
#include <string>

using namespace hearth;
using namespace hearth::testing;

class TestDdpWorld : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }

    void aWorldOfOneTrainsLikeOneDevice_data() {
        QTest::addColumn<QString>("strategy");
        QTest::newRow("ddp") << "ddp";
        QTest::newRow("zero1") << "zero1";
        QTest::newRow("zero2") << "zero2";
        QTest::newRow("zero3") << "zero3";
        QTest::newRow("pipeline (one stage)") << "pipeline";
    }

    void aWorldOfOneTrainsLikeOneDevice() {
        QFETCH(QString, strategy);
        const World w = runWorld(1, {{"DDP_STRATEGY", strategy}, {"DDP_OPTIMIZER", "adam"}, {"DDP_BATCH", "32"}});
        QVERIFY2(w.exit_codes[0] == 0, qPrintable(w.output[0]));
        DdpSettings single;
        single.optimizer = "adam";
        single.batch = 32;
        QVERIFY(maxDiff(w.weights[0], trainBlobs(single).weights) < 1e-6);
    }

    // ddp and zero1 in a world of one build no reducer: nothing to average, and its hooks and
    // bucket copies made the step slower than one device's. The weights are one device's bit for
    // bit, and the memory breakdown holds no second copy of the gradients (with copied buckets it
    // held two).
    void aWorldOfOneBuildsNoReducer_data() {
        QTest::addColumn<QString>("strategy");
        QTest::newRow("ddp") << "ddp";
        QTest::newRow("zero1") << "zero1";
    }

    void aWorldOfOneBuildsNoReducer() {
        QFETCH(QString, strategy);
        DdpStrategy ddp(joinWorldOfOne(), torch::kCPU, "32-true", dist::ReducerOptions{}, strategy == "zero1");
        ExperimentConfig c;
        c.model.name = "mlp";
        c.model.hidden = {16};
        auto model = createModel(c.model, ModelInput{{8}, 3});
        ddp.setupModel(*model, /*channels_last=*/false);
        QVERIFY(ddp.gradientBuffers().empty());
        QVERIFY2(ddp.describe().find("one process: no gradient reduction") != std::string::npos, ddp.describe().c_str());

        const World w = runWorld(1, {{"DDP_STRATEGY", strategy}, {"DDP_OPTIMIZER", "adam"}, {"DDP_BATCH", "32"},
                                     {"DDP_BUCKET_VIEW", "0"}});
        QVERIFY2(w.exit_codes[0] == 0, qPrintable(w.output[0]));
        DdpSettings single;
        single.optimizer = "adam";
        single.batch = 32;
        const BlobsRun alone = trainBlobs(single);
        QCOMPARE(maxDiff(w.weights[0], alone.weights), 0.0);
        QCOMPARE(w.shares[0][10].item<int64_t>(), int64_t{0});
        QCOMPARE(w.shares[0][9].item<int64_t>(), alone.share[9].item<int64_t>());
    }

    // A world of one watches the loss as one device does (on the host a non-finite loss fails its
    // step at once, naming it) and agrees to a stop alone: no tensor, no collective per step.
    void aWorldOfOneWatchesAndStopsAsOneDevice() {
        DdpStrategy ddp(joinWorldOfOne(), torch::kCPU, "32-true", dist::ReducerOptions{});
        ExperimentConfig c;
        c.model.name = "mlp";
        c.model.hidden = {4};
        auto model = createModel(c.model, ModelInput{{8}, 3});
        ddp.setupModel(*model, /*channels_last=*/false);
        QVERIFY(!ddp.agreeToStop(false));
        QVERIFY(ddp.agreeToStop(true));
        QVERIFY(!ddp.watchLoss(torch::tensor(0.5), 6));
        QCOMPARE(ddp.firstNonFiniteStep(), int64_t{0});
        QVERIFY(ddp.watchLoss(torch::tensor(std::numeric_limits<double>::quiet_NaN()), 7));   // at once
        QVERIFY(ddp.watchLoss(torch::tensor(std::numeric_limits<double>::infinity()), 8));
        QCOMPARE(ddp.firstNonFiniteStep(), int64_t{7});
    }

    // A world of one (one process, e.g. one GPU of a job) launches no collective for the blocking
    // calls: each returns what the collective would, the gather a copy that the caller may change.
    void aWorldOfOnesCollectivesAreItsOwnValues() {
        const auto group = joinWorldOfOne();
        QCOMPARE(group->worldSize(), int64_t{1});
        std::vector<torch::Tensor> values{torch::tensor({1.5, -2.0}, torch::kFloat64)};
        group->allreduceSum(values);
        QVERIFY(torch::equal(values[0], torch::tensor({1.5, -2.0}, torch::kFloat64)));
        group->broadcast(values, 0);
        QVERIFY(torch::equal(values[0], torch::tensor({1.5, -2.0}, torch::kFloat64)));
        const auto gathered = group->allgather(values[0]);
        QCOMPARE(gathered.size(), size_t{1});
        gathered[0].add_(1.0);
        QVERIFY(torch::equal(values[0], torch::tensor({1.5, -2.0}, torch::kFloat64)));
        group->barrier();
    }

    void aRankThatDiesFailsTheOtherWithAMessage_data() {
        QTest::addColumn<QString>("strategy");
        QTest::newRow("ddp") << "ddp";
        QTest::newRow("zero3") << "zero3";
        QTest::newRow("pipeline") << "pipeline";
    }

    void aRankThatDiesFailsTheOtherWithAMessage() {
        QFETCH(QString, strategy);
        const World w = runWorld(2, {{"DDP_STRATEGY", strategy}, {"DDP_OPTIMIZER", "sgd"}, {"DDP_BATCH", "16"}},
                                 {{1, "DDP_DIE_AT_STEP=3"}});
        QCOMPARE(w.exit_codes[1], 9);
        QCOMPARE(w.exit_codes[0], 4);
        QVERIFY2(w.output[0].contains("failed") && w.output[0].contains("2 processes"), qPrintable(w.output[0]));
        QVERIFY2(w.seconds < 30.0 + 20.0, qPrintable(QString::number(w.seconds)));  // the 30 s timeout
    }

    // torchrun's way: the agent (here the test) hosts the store, every rank joins as a client
    // under /worker/attempt_<restart count>.
    void torchrunAgentStoreRendezvous() {
        const dist::StoreServer agent(std::chrono::seconds(60));
        QVERIFY(agent.port() > 0);
        const World w = runWorld(2, {{"DDP_OPTIMIZER", "adam"}, {"DDP_BATCH", "16"},
                                     {"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "3"}},
                                 {}, agent.port());
        for (int r = 0; r < 2; ++r) QVERIFY2(w.exit_codes[r] == 0, qPrintable(w.output[r]));
        DdpSettings single;
        single.optimizer = "adam";
        single.batch = 32;
        QVERIFY(maxDiff(w.weights[0], trainBlobs(single).weights) < 1e-5);
    }

    // A launcher's store must speak this LibTorch's store protocol. This build's own store (what
    // Hearth's launcher hosts) does. A 1.x build asked to join torchrun 2.x's store (a stand-in
    // here) fails within seconds with a launch error that names the store and what to launch
    // instead, where c10d would wait for answers that never come until its timeout.
    void aStoreOfAnotherPyTorchFailsTheJoinFast() {
        const dist::StoreServer own(std::chrono::seconds(60));
        const auto probe = dist::probeStoreProtocol("127.0.0.1", own.port(), std::chrono::seconds(5));
#if HEARTH_TORCH_VERSION < 200
        QCOMPARE(probe.protocol, dist::StoreProtocol::LibTorch1);
        const testing::FakeStore torchrun2(testing::FakeStore::Speaks::LibTorch2);
        dist::DistEnv env;
        env.rank = 1;
        env.local_rank = 1;
        env.world_size = 2;
        env.local_world_size = 2;
        env.master_port = torchrun2.port();
        env.agent_store = true;
        dist::GroupOptions options;
        options.timeout = std::chrono::seconds(60);
        QElapsedTimer timer;
        timer.start();
        QString message;
        try {
            dist::ProcessGroup::join(env, options);
        } catch (const dist::LaunchError& e) {
            message = e.what();
        }
        QVERIFY2(timer.elapsed() < 15000, qPrintable(QString::number(timer.elapsed())));
        const QString where = "127.0.0.1:" + QString::number(torchrun2.port());
        QVERIFY2(message.contains("cannot talk to its launcher's rendezvous store at " + where), qPrintable(message));
        QVERIFY2(message.contains("protocol of PyTorch 2.x"), qPrintable(message));
        QVERIFY2(message.contains("torchrun from PyTorch 1.13") && message.contains("own launcher") &&
                     message.contains("PyTorch 2.11's torchrun"),
                 qPrintable(message));
#else
        // 2.x's store does not answer 1.x's request and is recognised by its VALIDATE + PING.
        QCOMPARE(probe.protocol, dist::StoreProtocol::LibTorch2);
#endif
    }

    void launchersEnvironmentIsRead() {
        using Env = std::map<std::string, std::string>;
        auto reader = [](const Env& env) {
            return [env](const std::string& k) -> std::optional<std::string> {
                auto it = env.find(k);
                return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
            };
        };
        QVERIFY(!dist::readDistEnv(reader({})).has_value());
        const auto torchrun = dist::readDistEnv(reader({{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"},
                                                       {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "node0"},
                                                       {"MASTER_PORT", "29400"},
                                                       {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                                                       {"TORCHELASTIC_RESTART_COUNT", "2"}}));
        QVERIFY(torchrun.has_value());
        QCOMPARE(torchrun->rank, int64_t(3));
        QCOMPARE(torchrun->local_rank, int64_t(1));
        QVERIFY(torchrun->agent_store);
        QCOMPARE(torchrun->restart_count, int64_t(2));
        const auto slurm = dist::readDistEnv(reader({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"},
                                                    {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS_PER_NODE", "4"},
                                                    {"MASTER_ADDR", "gpu01"}}));
        QCOMPARE(slurm->rank, int64_t(5));
        QCOMPARE(slurm->local_rank, int64_t(1));
        QCOMPARE(slurm->world_size, int64_t(8));
        QCOMPARE(slurm->master_port, int64_t(29500));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 dist::readDistEnv(reader({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}})));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 dist::readDistEnv(reader({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}})));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 dist::readDistEnv(reader({{"RANK", "0"}, {"WORLD_SIZE", "two"}})));
    }
};

QTEST_GUILESS_MAIN(TestDdpWorld)
#include "test_ddp_world.moc"
