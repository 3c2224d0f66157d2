// Device statistics through NVML, against the fake libnvidia-ml built with the tests: loading,
// reading every value, a library that is missing, one that fails to initialise, a missing symbol
// and a failing call (each a one-line note, the value unknown, never an error), CPU utilisation,
// and DeviceMonitor emitting the GPUs' samples on a CPU run. (The store and the gauges: the CLI
// and UI tests run whole runs against the same fake library.)

#include "TrainTestSupport.h"

#include "engine/monitor/CpuTensorMemory.h"
#include "engine/monitor/DeviceMonitor.h"
#include "engine/monitor/DeviceStatsSampler.h"
#include "engine/monitor/Nvml.h"

#include <QTest>

#include <cstdlib>
#include <thread>

using namespace hearth;
using namespace hearth::testing;

namespace {

// Sets an environment variable for a scope.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old, had_ = true;
        setenv(name, value, 1);
    }
    ~ScopedEnv() {
        if (had_) setenv(name_, old_.c_str(), 1);
        else unsetenv(name_);
    }

private:
    const char* name_;
    std::string old_;
    bool had_ = false;
};

bool anyNoteContains(const std::vector<std::string>& notes, const std::string& text) {
    for (const auto& n : notes)
        if (n.find(text) != std::string::npos) return true;
    return false;
}

}  // namespace

class TestDeviceStats final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void readsEveryValueOfEveryDevice() {
        ScopedEnv devices("FAKE_NVML_DEVICES", "3");
        auto nvml = Nvml::load(FAKE_NVML_PATH);
        QVERIFY2(nvml->available(), nvml->unavailableReason().c_str());
        QCOMPARE(nvml->deviceCount(), 3);
        QCOMPARE(nvml->driverVersion(), std::string("999.99-fake"));
        const NvmlReading r = nvml->read(2);
        QCOMPARE(r.name, std::string("Fake GPU 2"));
        QCOMPARE(r.utilization, 0.6);
        QCOMPARE(r.used_bytes, int64_t{4} << 30);
        QCOMPARE(r.total_bytes, int64_t{80} << 30);
        QCOMPARE(r.temperature_c, 57.0);
        QCOMPARE(r.power_w, 152.0);
        QCOMPARE(r.power_limit_w, 700.0);
        QCOMPARE(r.sm_clock_mhz, 1980.0);
        QVERIFY(nvml->takeNotes().empty());
        // CUDA's device at a PCI bus id is NVML's device there.
        QCOMPARE(nvml->indexForPciBusId("00000000:01:00.0"), 1);
        QCOMPARE(nvml->indexForPciBusId("00000000:3B:00.0"), -1);
    }

    void aMissingLibraryIsANoteNotAnError() {
        auto nvml = Nvml::load("/nonexistent/libnvidia-ml.so.1");
        QVERIFY(!nvml->available());
        QVERIFY(nvml->unavailableReason().find("NVML not found") != std::string::npos);
        QCOMPARE(nvml->deviceCount(), 0);
        QCOMPARE(nvml->read(0).utilization, -1.0);
        ScopedEnv fail("FAKE_NVML_INIT_FAIL", "1");
        auto broken = Nvml::load(FAKE_NVML_PATH);
        QVERIFY(!broken->available());
        QVERIFY2(broken->unavailableReason().find("Driver Not Loaded") != std::string::npos,
                 broken->unavailableReason().c_str());
    }

    void aMissingSymbolLeavesThatValueUnknownWithOneNote() {
        auto nvml = Nvml::load(FAKE_NVML_NOPOWER_PATH);
        QVERIFY(nvml->available());
        const NvmlReading r = nvml->read(0);
        QCOMPARE(r.power_w, -1.0);
        QCOMPARE(r.power_limit_w, 700.0);  // the rest is read
        QCOMPARE(r.temperature_c, 55.0);
        const auto notes = nvml->takeNotes();
        QCOMPARE(notes.size(), size_t{1});
        QVERIFY2(anyNoteContains(notes, "nvmlDeviceGetPowerUsage is missing"), notes[0].c_str());
        nvml->read(1);
        QVERIFY(nvml->takeNotes().empty());  // once per function
    }

    void aFailingCallLeavesThatValueUnknownWithOneNote() {
        ScopedEnv fail("FAKE_NVML_FAIL", "nvmlDeviceGetTemperature");
        auto nvml = Nvml::load(FAKE_NVML_PATH);
        const NvmlReading r = nvml->read(0);
        QCOMPARE(r.temperature_c, -1.0);
        QCOMPARE(r.utilization, 0.4);
        const auto notes = nvml->takeNotes();
        QCOMPARE(notes.size(), size_t{1});
        QVERIFY2(anyNoteContains(notes, "nvmlDeviceGetTemperature failed (Not Supported)"), notes[0].c_str());
    }

    void samplerReadsOffTheCallingThreadAndMeasuresCpu() {
        DeviceStatsSampler sampler(Nvml::load(FAKE_NVML_PATH), {1}, std::chrono::milliseconds(50));
        QCOMPARE(sampler.latest().gpus.size(), size_t{1});  // read once before returning
        QCOMPARE(sampler.latest().gpus[0].temperature_c, 56.0);
        // Busy for a while: the process's CPU share becomes known and positive.
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
        volatile double x = 0.0;
        while (std::chrono::steady_clock::now() < until) x = x + 1.0;
        QTRY_VERIFY_WITH_TIMEOUT(sampler.samplesTaken() >= 3, 5000);
        const double cpu = sampler.latest().cpu_utilization;
        QVERIFY2(cpu > 0.0 && cpu <= 1.0, qPrintable(QString::number(cpu)));
    }

    void monitorOnACpuRunEmitsEveryGpuAndTheHost() {
        ScopedEnv lib("HEARTH_NVML_LIBRARY", FAKE_NVML_PATH);
        ScopedEnv fail("FAKE_NVML_FAIL", "nvmlDeviceGetClockInfo");
        RecordingSink sink;
        DeviceMonitor monitor(torch::kCPU, std::chrono::milliseconds(10));
        monitor.poll(sink, /*force=*/true);
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
        monitor.poll(sink, /*force=*/true);
        const auto samples = sink.all<DeviceSample>();
        QCOMPARE(samples.size(), size_t{6});  // host, GPU 0, GPU 1, twice
        const DeviceSample& host = samples[3];
        QCOMPARE(host.device, int64_t{-1});
        QVERIFY(host.allocated_bytes > 0);
        QVERIFY(host.utilization >= 0.0);  // CPU share, known by the second poll
        const DeviceSample& gpu1 = samples[5];
        QCOMPARE(gpu1.device, int64_t{1});
        QCOMPARE(gpu1.name, std::string("Fake GPU 1"));
        QCOMPARE(gpu1.utilization, 0.5);
        QCOMPARE(gpu1.driver_used_bytes, int64_t{3} << 30);
        QCOMPARE(gpu1.total_bytes, int64_t{80} << 30);
        QCOMPARE(gpu1.power_w, 151.0);
        QCOMPARE(gpu1.sm_clock_mhz, -1.0);  // the failing call
        int notes = 0;
        for (const auto& line : sink.all<LogLine>()) notes += line.text.find("nvmlDeviceGetClockInfo") != std::string::npos;
        QCOMPARE(notes, 1);
    }

    void monitorWithoutNvmlSaysSoOnce() {
        ScopedEnv lib("HEARTH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
        RecordingSink sink;
        DeviceMonitor monitor(torch::kCPU);
        monitor.poll(sink, true);
        monitor.poll(sink, true);
        QCOMPARE(sink.count<DeviceSample>(), 2);  // the host only
        const auto lines = sink.all<LogLine>();
        QCOMPARE(lines.size(), size_t{1});
        QVERIFY(lines[0].text.find("NVML not found") != std::string::npos);
        QVERIFY(lines[0].text.find("CPU utilisation and process memory") != std::string::npos);
        QVERIFY(lines[0].level == LogLine::Level::Info);
    }

    // The counting CPU allocator sees every CPU tensor's bytes exactly, through both of
    // LibTorch's paths (DataPtr and raw_allocate), and the monitor reads it on a CPU run.
    void cpuTensorBytesAreCountedExactly() {
        DeviceMonitor monitor(torch::kCPU);   // installs the counting allocator
        QVERIFY(cpuTensorMemory().counting);
        monitor.resetPeak();
        const int64_t before = monitor.tensorBytes();
        QVERIFY(before >= 0);
        {
            auto t = torch::empty({1 << 18}, torch::kFloat32);   // 1 MiB
            QCOMPARE(monitor.tensorBytes() - before, int64_t{1} << 20);
            QCOMPARE(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, uintptr_t{0});   // alignment kept
            t.fill_(1.0f);
            QCOMPARE(t.sum().item<double>(), double(1 << 18));
        }
        QCOMPARE(monitor.tensorBytes(), before);
        QVERIFY(monitor.tensorPeakBytes() >= before + (int64_t{1} << 20));
        monitor.resetPeak();
        QCOMPARE(monitor.tensorPeakBytes(), monitor.tensorBytes());

        c10::Allocator* allocator = c10::GetAllocator(c10::DeviceType::CPU);
        void* raw = allocator->raw_allocate(4096);
        QCOMPARE(cpuTensorMemory().current_bytes - before, int64_t{4096});
        allocator->raw_deallocate(raw);
        QCOMPARE(cpuTensorMemory().current_bytes, before);
        // Growing a tensor goes through the same allocator.
        auto grown = torch::zeros({10});
        grown.resize_({1000});
        QCOMPARE(cpuTensorMemory().current_bytes - before, int64_t{4000});
    }
};

QTEST_GUILESS_MAIN(TestDeviceStats)
#include "test_device_stats.moc"
