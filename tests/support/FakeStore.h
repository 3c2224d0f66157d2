#pragma once
// A stand-in for a launcher's TCPStore on 127.0.0.1 (the kernel picks the port), speaking as
// told, for the store-protocol probe: LibTorch 1.x's store answers GETNUMKEYS (6) with an int64;
// PyTorch 2.x's libuv store ignores a connection whose first request is not VALIDATE (0) with
// the magic number, and after one answers PING (13) by echoing its nonce. No LibTorch here.

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace hearth::testing {

class FakeStore {
public:
    enum class Speaks {
        LibTorch1,  // answers GETNUMKEYS (1.x numbering), closes on anything else
        LibTorch2,  // PyTorch 2.x's libuv store: VALIDATE first, or nothing is ever answered
        Nothing,    // accepts and reads, never answers
        Hangup,     // accepts and closes at once
    };

    explicit FakeStore(Speaks speaks) : speaks_(speaks) {
        listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        socklen_t len = sizeof addr;
        if (listen_ < 0 || ::bind(listen_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::listen(listen_, 8) != 0 || ::getsockname(listen_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
            ::pipe2(stop_, O_CLOEXEC) != 0) {
            throw std::runtime_error("FakeStore: cannot listen on 127.0.0.1");
        }
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~FakeStore() {
        [[maybe_unused]] const auto n = ::write(stop_[1], "x", 1);
        thread_.join();
        ::close(listen_);
        ::close(stop_[0]);
        ::close(stop_[1]);
    }
    FakeStore(const FakeStore&) = delete;
    FakeStore& operator=(const FakeStore&) = delete;

    int port() const { return port_; }
    int connections() const { return connections_.load(); }

private:
    static constexpr std::uint32_t kMagic = 0x3C85F7CE;

    // Waits for fd (or the stop pipe): false once stopped.
    bool ready(int fd) const {
        for (;;) {
            pollfd fds[2] = {{fd, POLLIN, 0}, {stop_[0], POLLIN, 0}};
            if (::poll(fds, 2, -1) < 0) continue;
            if (fds[1].revents != 0) return false;
            if (fds[0].revents != 0) return true;
        }
    }
    // Exactly `size` bytes from the client; false when it closed or the store stops.
    bool read(int fd, void* data, size_t size) const {
        auto* out = static_cast<std::uint8_t*>(data);
        while (size > 0) {
            if (!ready(fd)) return false;
            const ssize_t n = ::recv(fd, out, size, 0);
            if (n <= 0) return false;
            out += n;
            size -= static_cast<size_t>(n);
        }
        return true;
    }
    void drain(int fd) const {
        std::uint8_t byte = 0;
        while (read(fd, &byte, 1)) {
        }
    }
    void converse(int fd) const {
        switch (speaks_) {
        case Speaks::Hangup: return;
        case Speaks::Nothing: drain(fd); return;
        case Speaks::LibTorch1: {
            std::uint8_t command = 0;
            while (read(fd, &command, 1) && command == 6) {
                const std::int64_t keys = 3;
                (void)::send(fd, &keys, sizeof keys, MSG_NOSIGNAL);
            }
            return;
        }
        case Speaks::LibTorch2: {
            std::uint8_t command = 0;
            std::uint32_t magic = 0;
            if (!read(fd, &command, 1)) return;
            if (command != 0 || !read(fd, &magic, 4) || magic != kMagic) {
                drain(fd);   // an unvalidated client: nothing it sends is ever answered
                return;
            }
            while (read(fd, &command, 1)) {
                std::uint32_t nonce = 0;
                if (command != 13 || !read(fd, &nonce, 4)) break;
                (void)::send(fd, &nonce, sizeof nonce, MSG_NOSIGNAL);
            }
            drain(fd);
            return;
        }
        }
    }
    void serve() {
        while (ready(listen_)) {
            const int fd = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) continue;
            ++connections_;
            converse(fd);
            ::close(fd);
        }
    }

    Speaks speaks_;
    int listen_ = -1;
    int stop_[2] = {-1, -1};
    int port_ = 0;
    std::atomic<int> connections_{0};
    std::thread thread_;
};

}  // namespace hearth::testing
