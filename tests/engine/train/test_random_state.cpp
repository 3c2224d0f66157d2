// RandomState: the one place that reads and sets LibTorch's default generators. A saved state
// replays the same numbers, a non-CUDA device has no device state (and setting one changes
// nothing), and RandomStateGuard puts the generators and the thread count back. The thread count
// reaches the BLAS under LibTorch (compat::setIntraOpThreads).

#include "engine/TorchCompat.h"
#include "engine/train/RandomState.h"

#include <dlfcn.h>

#include <QtTest>

using namespace hearth;

class TestRandomState final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cpuStateReplaysTheSameNumbers() {
        torch::manual_seed(11);
        const torch::Tensor state = cpuRngState();
        QCOMPARE(state.device().type(), torch::kCPU);
        QCOMPARE(state.scalar_type(), torch::kUInt8);
        QVERIFY(torch::equal(generatorState(torch::kCPU), state));
        const auto first = torch::rand({16});
        setCpuRngState(state);
        QVERIFY(torch::equal(torch::rand({16}), first));
        setGeneratorState(torch::kCPU, state);
        QVERIFY(torch::equal(torch::rand({16}), first));
    }

    void nonCudaDeviceHasNoDeviceState() {
        QVERIFY(!deviceRngState(torch::kCPU).defined());
        torch::manual_seed(5);
        const torch::Tensor before = cpuRngState();
        torch::manual_seed(6);
        setDeviceRngState(torch::kCPU, before);  // not a CUDA device: the CPU generator is left alone
        QVERIFY(!torch::equal(cpuRngState(), before));
        setDeviceRngState(torch::kCPU, torch::Tensor());
    }

    void guardPutsBackGeneratorsAndThreads() {
        torch::manual_seed(21);
        const int threads = torch::get_num_threads();
        const torch::Tensor state = cpuRngState();
        const auto expected = torch::rand({8});
        setCpuRngState(state);
        {
            RandomStateGuard guard;
            torch::manual_seed(99);
            (void)torch::rand({100});
            torch::set_num_threads(threads > 1 ? 1 : 2);
        }
        QCOMPARE(torch::get_num_threads(), threads);
        QVERIFY(torch::equal(torch::rand({8}), expected));
    }

    // Debian's LibTorch multiplies matrices in OpenBLAS, whose own thread pool set_num_threads
    // does not size: trainer.num_threads must reach it (the wheel's MKL follows LibTorch itself).
    void intraOpThreadsReachTheBlas() {
        using GetBlasThreads = int (*)();
        const auto blas_threads = reinterpret_cast<GetBlasThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
        if (!blas_threads) QSKIP("this LibTorch does not compute in OpenBLAS");
        const int threads = torch::get_num_threads();
        compat::setIntraOpThreads(threads);
        const int blas = blas_threads();   // LibTorch's count, within what OpenBLAS started with
        {
            RandomStateGuard guard;
            compat::setIntraOpThreads(1);
            QCOMPARE(torch::get_num_threads(), 1);
            QCOMPARE(blas_threads(), 1);
        }
        QCOMPARE(torch::get_num_threads(), threads);   // the guard puts both counts back
        QCOMPARE(blas_threads(), blas);
    }

    void cudaStateReplaysTheSameNumbers() {
        if (!torch::cuda::is_available()) QSKIP("needs a CUDA device");
        const torch::Device device(torch::kCUDA, 0);
        torch::manual_seed(7);
        const torch::Tensor state = deviceRngState(device);
        QVERIFY(state.defined());
        QCOMPARE(state.device().type(), torch::kCPU);
        const auto first = torch::rand({16}, torch::TensorOptions().device(device));
        setDeviceRngState(device, state);
        QVERIFY(torch::equal(torch::rand({16}, torch::TensorOptions().device(device)), first));
    }
};

QTEST_GUILESS_MAIN(TestRandomState)
#include "test_random_state.moc"
