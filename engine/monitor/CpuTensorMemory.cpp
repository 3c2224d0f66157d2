#include "engine/monitor/CpuTensorMemory.h"

#include "engine/TorchCompat.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace hearth {
namespace {

std::atomic<int64_t> g_current{0};
std::atomic<int64_t> g_peak{0};
std::atomic<bool> g_counting{false};

void raisePeak(int64_t now) {
    int64_t peak = g_peak.load(std::memory_order_relaxed);
    while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
}

// Each block starts with a header (one alignment unit, so the data keeps the allocator's
// 64-byte alignment) holding the size and the inner allocation's context and deleter. The data
// pointer is its own context, as raw_allocate() and is_simple_data_ptr() require.
constexpr size_t kHeader = 64;

struct Header {
    int64_t bytes;
    void* inner_context;
    c10::DeleterFnPtr inner_deleter;
};
static_assert(sizeof(Header) <= kHeader);

void freeCounted(void* data) {
    if (data == nullptr) return;   // an empty DataPtr given this deleter
    auto* header = reinterpret_cast<Header*>(static_cast<char*>(data) - kHeader);
    g_current.fetch_sub(header->bytes, std::memory_order_relaxed);
    void* context = header->inner_context;
    const c10::DeleterFnPtr deleter = header->inner_deleter;
    if (deleter) deleter(context);
}

class CountingAllocator final : public c10::Allocator {
public:
    explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}

    c10::DataPtr allocate(size_t n) HEARTH_ALLOCATOR_ALLOCATE_CONST override {
        c10::DataPtr inner = inner_->allocate(n + kHeader);
        auto* block = static_cast<char*>(inner.get());
        const c10::Device device = inner.device();
        auto* header = reinterpret_cast<Header*>(block);
        header->bytes = static_cast<int64_t>(n);
        header->inner_deleter = inner.get_deleter();
        header->inner_context = inner.release_context();
        raisePeak(g_current.fetch_add(header->bytes, std::memory_order_relaxed) + header->bytes);
        void* data = block + kHeader;
        return {data, data, &freeCounted, device};
    }

    c10::DeleterFnPtr raw_deleter() const override { return &freeCounted; }

#if HEARTH_ALLOCATOR_HAS_COPY_DATA
    void copy_data(void* dest, const void* src, std::size_t count) const override {
        std::memcpy(dest, src, count);
    }
#endif

private:
    c10::Allocator* inner_;
};

}  // namespace

bool installCpuTensorCounting() {
    static std::once_flag once;
    std::call_once(once, [] {
        c10::Allocator* inner = c10::GetAllocator(c10::DeviceType::CPU);
        // Never destroyed: storages keep a pointer to their allocator until the process ends.
        static auto* counting = new CountingAllocator(inner);
        c10::SetAllocator(c10::DeviceType::CPU, counting, /*priority=*/1);
        g_counting = c10::GetAllocator(c10::DeviceType::CPU) == counting;
    });
    return g_counting;
}

CpuTensorMemoryStats cpuTensorMemory() {
    CpuTensorMemoryStats s;
    s.counting = g_counting;
    s.current_bytes = g_current.load(std::memory_order_relaxed);
    s.peak_bytes = g_peak.load(std::memory_order_relaxed);
    return s;
}

void resetCpuTensorPeak() {
    g_peak.store(g_current.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

}  // namespace hearth
