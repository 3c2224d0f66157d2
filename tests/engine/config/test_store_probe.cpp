// probeStoreProtocol, the question a LibTorch 1.x build asks a launcher's store before c10d joins
// it: against stand-in stores on 127.0.0.1 that speak 1.x, speak 2.x (torchrun 2.x's libuv store,
// which never answers an unvalidated request), say nothing, hang up, or are not there. Each answer
// comes within the wait it was given, never later.
#include "FakeStore.h"

#include "engine/dist/StoreProbe.h"

#include <QElapsedTimer>
#include <QTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace hearth;
using hearth::testing::FakeStore;

namespace {

constexpr std::chrono::milliseconds kWait{1000};

struct Timed {
    dist::StoreProbeResult result;
    double seconds = 0.0;
};

Timed probe(int port, std::chrono::milliseconds wait = kWait) {
    QElapsedTimer timer;
    timer.start();
    Timed t;
    t.result = dist::probeStoreProtocol("127.0.0.1", port, wait);
    t.seconds = static_cast<double>(timer.elapsed()) / 1000.0;
    return t;
}

// A loopback port nothing listens on: bound (so nobody else takes it) but never listening.
class ClosedPort {
public:
    ClosedPort() {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        (void)::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        (void)::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
        port_ = ntohs(addr.sin_port);
    }
    ~ClosedPort() { ::close(fd_); }
    ClosedPort(const ClosedPort&) = delete;
    ClosedPort& operator=(const ClosedPort&) = delete;
    int port() const { return port_; }

private:
    int fd_ = -1;
    int port_ = 0;
};

}  // namespace

class TestStoreProbe : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aStoreOfLibTorch1AnswersAtOnce() {
        const FakeStore store(FakeStore::Speaks::LibTorch1);
        const Timed t = probe(store.port());
        QCOMPARE(t.result.protocol, dist::StoreProtocol::LibTorch1);
        QCOMPARE(QString::fromStdString(t.result.detail), QString("answered"));
        QVERIFY2(t.seconds < 0.9, qPrintable(QString::number(t.seconds)));
        QCOMPARE(store.connections(), 1);   // no second question for a store that answered
    }

    // torchrun 2.x's store: the 1.x request is dropped unanswered; VALIDATE + PING is answered.
    void aStoreOfPyTorch2IsRecognisedAfterTheWait() {
        const FakeStore store(FakeStore::Speaks::LibTorch2);
        const Timed t = probe(store.port());
        QCOMPARE(t.result.protocol, dist::StoreProtocol::LibTorch2);
        QCOMPARE(QString::fromStdString(t.result.detail), QString("did not answer within 1 s"));
        QVERIFY2(t.seconds >= 0.9 && t.seconds < 2.5, qPrintable(QString::number(t.seconds)));
        QCOMPARE(store.connections(), 2);
    }

    void aSilentStoreIsUnknownWithinTwoWaits() {
        const FakeStore store(FakeStore::Speaks::Nothing);
        const Timed t = probe(store.port());
        QCOMPARE(t.result.protocol, dist::StoreProtocol::Unknown);
        QCOMPARE(QString::fromStdString(t.result.detail), QString("did not answer within 1 s"));
        QVERIFY2(t.seconds >= 1.8 && t.seconds < 3.5, qPrintable(QString::number(t.seconds)));
    }

    void aStoreThatHangsUpIsUnknownAtOnce() {
        const FakeStore store(FakeStore::Speaks::Hangup);
        const Timed t = probe(store.port());
        QCOMPARE(t.result.protocol, dist::StoreProtocol::Unknown);
        QCOMPARE(QString::fromStdString(t.result.detail), QString("closed the connection without answering"));
        QVERIFY2(t.seconds < 0.9, qPrintable(QString::number(t.seconds)));
    }

    // Nothing listening: left to c10d's own connect, which retries and reports as before.
    void noStoreIsUnreachable() {
        const ClosedPort nothing;
        const Timed t = probe(nothing.port());
        QCOMPARE(t.result.protocol, dist::StoreProtocol::Unreachable);
        QVERIFY(!t.result.detail.empty());
        QVERIFY2(t.seconds < 0.9, qPrintable(QString::number(t.seconds)));
    }
};

QTEST_GUILESS_MAIN(TestStoreProbe)
#include "test_store_probe.moc"
