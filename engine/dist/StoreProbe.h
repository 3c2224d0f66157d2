#pragma once
// Which TCPStore wire protocol a launcher's store speaks, asked on a socket of its own before c10d
// connects (no LibTorch here). LibTorch 1.13's store client and the store of PyTorch 2.x (the one
// torchrun 2.x hosts for its ranks) do not understand each other: 2.x numbers its requests from
// VALIDATE = 0 (SET = 1, ...) and wants a VALIDATE with a magic number first; 1.13 numbers them
// from SET = 0 and sends no VALIDATE. 2.x's libuv store silently drops the first request of a
// connection that is not a VALIDATE, so a 1.13 client waits for its answer until its timeout.

#include <chrono>
#include <string>

namespace hearth::dist {

enum class StoreProtocol {
    Unreachable,  // nothing accepted a connection (c10d's own connect reports it)
    LibTorch1,    // answered a LibTorch 1.x request (GETNUMKEYS = 6, no VALIDATE)
    LibTorch2,    // ignored that request and answered PyTorch 2.x's VALIDATE + PING
    Unknown,      // ignored or refused both
};

struct StoreProbeResult {
    StoreProtocol protocol = StoreProtocol::Unknown;
    // What the store did with the 1.x request, for messages: "did not answer within 5 s",
    // "closed the connection without answering", "answered"; for Unreachable the connect error.
    std::string detail;
};

// Connects to host:port (a name or an address) and sends one 1.x GETNUMKEYS, waiting up to `wait`
// for its 8-byte answer; a store that does not answer is asked again on a fresh connection with
// 2.x's VALIDATE and PING (up to 2 s, at most `wait`). Both requests leave the store's keys alone,
// and the PING's bytes read as a key length no 1.x store can allocate, so a 1.x store drops that
// connection at once instead of waiting for more. Never throws.
StoreProbeResult probeStoreProtocol(const std::string& host, int port, std::chrono::milliseconds wait);

}  // namespace hearth::dist
