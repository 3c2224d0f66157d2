// planLaunch, the one decision of how a job runs: one process for one device, the local launcher
// for several devices on this machine, a rank when a launcher (torchrun, srun) set the world, and a
// message naming the setting when the job cannot launch. The local ranks' variables are torchrun's.
#include "engine/run/LaunchPlan.h"

#include <QTest>

#include <map>

using namespace hearth;

namespace {

dist::EnvReader envOf(std::map<std::string, std::string> vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
        const auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

ExperimentConfig withDevices(int64_t devices, const std::string& strategy, int64_t nodes = 1) {
    ExperimentConfig c;
    c.trainer.accelerator = "cpu";
    c.trainer.devices = devices;
    c.trainer.strategy = strategy;
    c.trainer.num_nodes = nodes;
    return c;
}

DeviceCapabilities cpuMachine() {
    DeviceCapabilities caps;
    caps.distributed = true;
    caps.cpu_threads = 2;
    return caps;
}

const std::map<std::string, std::string> kTorchrunRank1{{"RANK", "1"},        {"LOCAL_RANK", "1"},
                                                        {"WORLD_SIZE", "4"},  {"LOCAL_WORLD_SIZE", "2"},
                                                        {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}};

}  // namespace

class TestLaunchPlan : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void oneDeviceRunsInThisProcessWhateverTheEnvironment() {
        // Inside an allocation whose variables name a world, a one-device job still is one process.
        const LaunchPlan plan = planLaunch(withDevices(1, "auto"), cpuMachine(), envOf(kTorchrunRank1));
        QVERIFY(plan.ok());
        QVERIFY(plan.mode == LaunchMode::ThisProcess);
        QVERIFY(plan.records());
        QCOMPARE(plan.world_size, int64_t{1});
        QCOMPARE(plan.describe(), std::string("this process"));
    }

    void severalDevicesWithoutALauncherLaunchOneProcessEach() {
        for (const char* strategy : {"ddp", "zero1", "zero2", "auto"}) {
            const LaunchPlan plan = planLaunch(withDevices(3, strategy), cpuMachine(), envOf({}));
            QVERIFY2(plan.ok(), plan.problem.c_str());
            QVERIFY2(plan.mode == LaunchMode::LocalLauncher, strategy);   // auto resolves to ddp
            QCOMPARE(plan.local_processes, int64_t{3});
            QCOMPARE(plan.world_size, int64_t{3});
            QVERIFY(!plan.records());   // the launcher trains nothing, its rank 0 records
        }
        // ddp on one device: one process, world of one.
        const LaunchPlan one = planLaunch(withDevices(1, "ddp"), cpuMachine(), envOf({}));
        QVERIFY(one.mode == LaunchMode::ThisProcess);
    }

    void aLauncherEnvironmentMakesThisProcessARank() {
        const LaunchPlan plan = planLaunch(withDevices(2, "ddp", 2), cpuMachine(), envOf(kTorchrunRank1));
        QVERIFY2(plan.ok(), plan.problem.c_str());
        QVERIFY(plan.mode == LaunchMode::LaunchedRank);
        QCOMPARE(plan.rank(), int64_t{1});
        QCOMPARE(plan.world_size, int64_t{4});
        QCOMPARE(plan.local_processes, int64_t{2});
        QVERIFY(!plan.records());
        QCOMPARE(plan.env->master_addr, std::string("10.0.0.1"));
        auto rank0 = kTorchrunRank1;
        rank0["RANK"] = "0";
        rank0["LOCAL_RANK"] = "0";
        QVERIFY(planLaunch(withDevices(2, "ddp", 2), cpuMachine(), envOf(rank0)).records());
    }

    void severalNodesWithoutALauncherNameTheSettingAndTheCommand() {
        const LaunchPlan plan = planLaunch(withDevices(2, "ddp", 3), cpuMachine(), envOf({}), "tune");
        QVERIFY(!plan.ok());
        QVERIFY(!plan.records());
        QVERIFY2(plan.problem.find("trainer.num_nodes") != std::string::npos, plan.problem.c_str());
        QVERIFY2(plan.problem.find("--nnodes=3") != std::string::npos, plan.problem.c_str());
        QVERIFY2(plan.problem.find("hearth-cli tune") != std::string::npos, plan.problem.c_str());
    }

    void aMalformedLauncherVariableIsAProblemNamingIt() {
        auto broken = kTorchrunRank1;
        broken["WORLD_SIZE"] = "four";
        const LaunchPlan plan = planLaunch(withDevices(2, "ddp"), cpuMachine(), envOf(broken));
        QVERIFY(!plan.ok());
        QVERIFY2(plan.problem.find("WORLD_SIZE") != std::string::npos, plan.problem.c_str());
    }

    void localRanksGetTorchrunsVariables() {
        const LaunchPlan plan = planLaunch(withDevices(2, "ddp"), cpuMachine(), envOf({}));
        const auto vars = localRankVariables(plan, 1, 41234, "/tmp/logs", /*agent_store=*/true);
        const std::map<std::string, std::string> got(vars.begin(), vars.end());
        QCOMPARE(got.at("RANK"), std::string("1"));
        QCOMPARE(got.at("LOCAL_RANK"), std::string("1"));
        QCOMPARE(got.at("WORLD_SIZE"), std::string("2"));
        QCOMPARE(got.at("LOCAL_WORLD_SIZE"), std::string("2"));
        QCOMPARE(got.at("MASTER_ADDR"), std::string("127.0.0.1"));
        QCOMPARE(got.at("MASTER_PORT"), std::string("41234"));
        QCOMPARE(got.at("HEARTH_RANK_LOG_DIR"), std::string("/tmp/logs"));
        QCOMPARE(got.at("TORCHELASTIC_USE_AGENT_STORE"), std::string("True"));
        // What a launched rank reads back is the plan it was launched under.
        const LaunchPlan back = planLaunch(withDevices(2, "ddp"), cpuMachine(), envOf(got));
        QVERIFY(back.mode == LaunchMode::LaunchedRank);
        QCOMPARE(back.rank(), int64_t{1});
        QCOMPARE(back.world_size, int64_t{2});
        QVERIFY(back.env->agent_store);
        // Every variable set is one a child's environment drops before setting it anew.
        for (const auto& [name, value] : vars)
            QVERIFY2(std::find(launchVariableNames().begin(), launchVariableNames().end(), name) !=
                         launchVariableNames().end(),
                     name.c_str());
        const auto plain = localRankVariables(plan, 0, 1, "", false);
        QCOMPARE(plain.size(), size_t{6});
    }
};

QTEST_APPLESS_MAIN(TestLaunchPlan)
#include "test_launch_plan.moc"
