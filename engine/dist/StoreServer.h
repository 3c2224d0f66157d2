#pragma once
// No LibTorch types here: the launcher (app/cli) hosts the store through this header; the
// implementation is in C10d.cpp, the one unit that includes c10d (built with HEARTH_WITH_C10D).

#include <chrono>
#include <memory>

namespace hearth::dist {

// A TCPStore server on 127.0.0.1, as torchrun's agent hosts one: ranks started with
// TORCHELASTIC_USE_AGENT_STORE=True connect to it as clients (under /worker/attempt_<n>). Port 0
// lets the kernel pick a free port, so parallel launches never race for one.
class StoreServer {
public:
    explicit StoreServer(std::chrono::milliseconds timeout, int port = 0);
    ~StoreServer();
    StoreServer(const StoreServer&) = delete;
    StoreServer& operator=(const StoreServer&) = delete;
    int port() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::dist
