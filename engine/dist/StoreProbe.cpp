#include "engine/dist/StoreProbe.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>

namespace hearth::dist {
namespace {

using Clock = std::chrono::steady_clock;

// The wire facts, read in c10d's sources of both versions (native byte order, as both send).
constexpr std::uint8_t kV1GetNumKeys = 6;        // 1.x: SET=0 COMPARE_SET GET ADD CHECK WAIT GETNUMKEYS
constexpr std::uint8_t kV2Validate = 0;          // 2.x: VALIDATE=0 SET=1 ... PING=13
constexpr std::uint8_t kV2Ping = 13;
constexpr std::uint32_t kV2ValidationMagic = 0x3C85F7CE;
// Sent after the PING: to a 1.x store the VALIDATE byte reads as SET and the next eight bytes
// (magic, PING, nonce's low three) as the key's length; this nonce's third byte makes that length
// above 2^63, which a 1.x store cannot allocate, so it drops the connection at once.
constexpr std::uint32_t kPingNonce = 0x48E8A3D1;

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

int remainingMs(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::max<long long>(left, 0));
}

// Waits for `events` on fd until the deadline: 1 ready, 0 timed out, -1 error.
int waitFor(int fd, short events, Clock::time_point deadline) {
    for (;;) {
        pollfd p{fd, events, 0};
        const int ready = ::poll(&p, 1, remainingMs(deadline));
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) return -1;
        return ready > 0 ? 1 : 0;
    }
}

// A non-blocking socket connected to host:port before the deadline, or -1 with `error` set.
int connectTo(const std::string& host, int port, Clock::time_point deadline, std::string& error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (rc != 0) {
        error = std::string("cannot resolve ") + host + ": " + ::gai_strerror(rc);
        return -1;
    }
    error = "no address";
    int connected = -1;
    for (addrinfo* a = found; a != nullptr && connected < 0; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            error = std::system_category().message(errno);
            continue;
        }
        int result = ::connect(fd, a->ai_addr, a->ai_addrlen);
        if (result != 0 && errno == EINPROGRESS) {
            const int ready = waitFor(fd, POLLOUT, deadline);
            int so_error = 0;
            socklen_t len = sizeof so_error;
            if (ready == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) == 0 && so_error == 0) {
                result = 0;
            } else {
                errno = ready == 0 ? ETIMEDOUT : (so_error != 0 ? so_error : errno);
            }
        }
        if (result == 0) {
            connected = fd;
        } else {
            error = std::system_category().message(errno);
            ::close(fd);
        }
    }
    ::freeaddrinfo(found);
    return connected;
}

bool sendAll(int fd, const std::uint8_t* data, size_t size, Clock::time_point deadline) {
    while (size > 0) {
        const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
        if (n > 0) {
            data += n;
            size -= static_cast<size_t>(n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (waitFor(fd, POLLOUT, deadline) != 1) return false;
        } else {
            return false;
        }
    }
    return true;
}

enum class Reply { Complete, Silent, Closed };

// Reads exactly `size` bytes before the deadline.
Reply receive(int fd, std::uint8_t* data, size_t size, Clock::time_point deadline) {
    while (size > 0) {
        const int ready = waitFor(fd, POLLIN, deadline);
        if (ready == 0) return Reply::Silent;
        if (ready < 0) return Reply::Closed;
        const ssize_t n = ::recv(fd, data, size, MSG_DONTWAIT);
        if (n > 0) {
            data += n;
            size -= static_cast<size_t>(n);
        } else if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
            continue;
        } else {
            return Reply::Closed;   // end of stream or a reset
        }
    }
    return Reply::Complete;
}

std::string seconds(std::chrono::milliseconds wait) {
    const auto ms = wait.count();
    if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
    return std::to_string(ms) + " ms";
}

}  // namespace

StoreProbeResult probeStoreProtocol(const std::string& host, int port, std::chrono::milliseconds wait) {
    StoreProbeResult result;
    // 1.x: GETNUMKEYS, one byte; the store answers its key count as an int64.
    {
        const auto deadline = Clock::now() + wait;
        std::string error;
        const Fd fd(connectTo(host, port, deadline, error));
        if (fd.get() < 0) {
            result.protocol = StoreProtocol::Unreachable;
            result.detail = error;
            return result;
        }
        const std::uint8_t request = kV1GetNumKeys;
        std::array<std::uint8_t, 8> count{};
        const Reply reply = sendAll(fd.get(), &request, 1, deadline)
                                ? receive(fd.get(), count.data(), count.size(), deadline)
                                : Reply::Closed;
        if (reply == Reply::Complete) {
            result.protocol = StoreProtocol::LibTorch1;
            result.detail = "answered";
            return result;
        }
        result.detail = reply == Reply::Silent ? "did not answer within " + seconds(wait)
                                               : std::string("closed the connection without answering");
    }
    // 2.x: VALIDATE with its magic number, then PING; the store echoes the nonce.
    {
        const auto deadline = Clock::now() + std::min<std::chrono::milliseconds>(wait, std::chrono::seconds(2));
        std::string error;
        const Fd fd(connectTo(host, port, deadline, error));
        if (fd.get() < 0) return result;
        std::array<std::uint8_t, 10> request{};
        request[0] = kV2Validate;
        std::memcpy(&request[1], &kV2ValidationMagic, 4);
        request[5] = kV2Ping;
        std::memcpy(&request[6], &kPingNonce, 4);
        std::uint32_t echoed = 0;
        std::array<std::uint8_t, 4> answer{};
        if (sendAll(fd.get(), request.data(), request.size(), deadline) &&
            receive(fd.get(), answer.data(), answer.size(), deadline) == Reply::Complete) {
            std::memcpy(&echoed, answer.data(), answer.size());
            if (echoed == kPingNonce) result.protocol = StoreProtocol::LibTorch2;
        }
    }
    return result;
}

}  // namespace hearth::dist
