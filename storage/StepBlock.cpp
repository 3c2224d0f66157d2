#include "storage/StepBlock.h"

#include <cstdint>
#include <cstring>

namespace hearth::stepblock {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "step blocks are stored little-endian; add byte swapping for big-endian hosts");

template <typename T>
void put(char*& p, T value) {
    static_assert(sizeof(T) == 8, "every field is 8 bytes");
    std::memcpy(p, &value, 8);
    p += 8;
}

template <typename T>
T get(const char* base, size_t field, size_t field_count) {
    T value{};
    if (field < field_count) std::memcpy(&value, base + field * 8, 8);
    return value;
}

}  // namespace

std::string pack(const StepMetrics* steps, size_t count) {
    std::string out(count * kFields * 8, '\0');
    char* p = out.data();
    for (size_t i = 0; i < count; ++i) {
        const StepMetrics& s = steps[i];
        put(p, s.epoch);
        put(p, s.batch);
        put(p, s.batches_per_epoch);
        put(p, s.global_step);
        put(p, s.loss);
        put(p, s.accuracy);
        put(p, s.lr);
        put(p, s.loss_scale);
        put(p, s.samples_per_sec);
        put(p, s.step_time_ms);
        put(p, s.data_wait_ms);
        put(p, s.elapsed_s);
        put(p, s.eta_s);
    }
    return out;
}

void unpackAppend(const void* data, size_t bytes, size_t field_count, std::vector<StepMetrics>& out) {
    if (field_count == 0 || data == nullptr) return;
    const size_t row_bytes = field_count * 8;
    const size_t rows = bytes / row_bytes;
    const char* base = static_cast<const char*>(data);
    for (size_t i = 0; i < rows; ++i, base += row_bytes) {
        StepMetrics& s = out.emplace_back();
        s.epoch = get<int64_t>(base, 0, field_count);
        s.batch = get<int64_t>(base, 1, field_count);
        s.batches_per_epoch = get<int64_t>(base, 2, field_count);
        s.global_step = get<int64_t>(base, 3, field_count);
        s.loss = get<double>(base, 4, field_count);
        s.accuracy = get<double>(base, 5, field_count);
        s.lr = get<double>(base, 6, field_count);
        s.loss_scale = get<double>(base, 7, field_count);
        s.samples_per_sec = get<double>(base, 8, field_count);
        s.step_time_ms = get<double>(base, 9, field_count);
        s.data_wait_ms = get<double>(base, 10, field_count);
        s.elapsed_s = get<double>(base, 11, field_count);
        s.eta_s = get<double>(base, 12, field_count);
    }
}

}  // namespace hearth::stepblock
