#pragma once
// TensorBoard's on-disk format, written without TensorFlow or protobuf: a TFRecord file of
// serialized `tensorboard.Event` messages. Only what Hearth writes is encoded: scalars
// (Summary.Value.simple_value), text (a DT_STRING tensor for the text plugin) and plugin data
// (the hparams plugin). Field numbers are those of tensorboard/compat/proto/{event,summary,
// tensor}.proto and tensorboard/plugins/hparams/{api,plugin_data}.proto.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::tensorboard {

// Protocol-buffer wire encoding of one message, field by field (proto3: callers skip defaults).
class ProtoWriter {
public:
    ProtoWriter& varint(int field, uint64_t value);
    ProtoWriter& int64(int field, int64_t value) { return varint(field, static_cast<uint64_t>(value)); }
    ProtoWriter& float64(int field, double value);     // wire type 1 (fixed64)
    ProtoWriter& float32(int field, float value);      // wire type 5 (fixed32)
    ProtoWriter& bytes(int field, std::string_view value);
    ProtoWriter& message(int field, const ProtoWriter& nested) { return bytes(field, nested.data()); }
    const std::string& data() const { return m_data; }

private:
    void key(int field, int wire_type);
    void rawVarint(uint64_t value);
    std::string m_data;
};

// CRC-32C (Castagnoli), as TFRecord uses it, and TFRecord's masked form of it.
uint32_t crc32c(std::string_view data);
uint32_t maskedCrc32c(std::string_view data);

// One TFRecord: length (u64 LE), masked CRC of the length, the payload, masked CRC of the payload.
std::string tfRecord(std::string_view payload);

// Summary.Value messages, and the Event holding a Summary of them.
std::string scalarValue(std::string_view tag, double value);
std::string textValue(std::string_view tag, std::string_view markdown);
std::string pluginValue(std::string_view tag, std::string_view plugin, std::string_view content,
                        const std::string& tensor);   // tensor: a serialized TensorProto (may be empty)
std::string event(double wall_time, int64_t step, const std::vector<std::string>& values);
std::string fileVersionEvent(double wall_time);       // the first event of every file ("brain.Event:2")

}  // namespace hearth::tensorboard
