#include "storage/tensorboard/EventFile.h"

#include <array>
#include <cstring>

namespace hearth::tensorboard {
namespace {

constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

constexpr std::array<uint32_t, 256> crcTable() {
    std::array<uint32_t, 256> table{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;   // reflected Castagnoli
        table[i] = c;
    }
    return table;
}
constexpr auto kCrcTable = crcTable();

void appendLittleEndian(std::string& out, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFu));
}

// tensorboard.Summary.Value fields, SummaryMetadata, TensorProto.
constexpr int kValueTag = 1, kValueSimple = 2, kValueTensor = 8, kValueMetadata = 9;
constexpr int kMetadataPluginData = 1, kPluginName = 1, kPluginContent = 2;
constexpr int kTensorDtype = 1, kTensorShape = 2, kTensorStringVal = 8;
constexpr int kDtString = 7;
// tensorboard.Event fields.
constexpr int kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventSummary = 5;
constexpr int kSummaryValue = 1;

}  // namespace

void ProtoWriter::rawVarint(uint64_t value) {
    while (value >= 0x80u) {
        m_data.push_back(static_cast<char>((value & 0x7Fu) | 0x80u));
        value >>= 7;
    }
    m_data.push_back(static_cast<char>(value));
}

void ProtoWriter::key(int field, int wire_type) {
    rawVarint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

ProtoWriter& ProtoWriter::varint(int field, uint64_t value) {
    key(field, kVarint);
    rawVarint(value);
    return *this;
}

ProtoWriter& ProtoWriter::float64(int field, double value) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    key(field, kFixed64);
    appendLittleEndian(m_data, bits, 8);
    return *this;
}

ProtoWriter& ProtoWriter::float32(int field, float value) {
    uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    key(field, kFixed32);
    appendLittleEndian(m_data, bits, 4);
    return *this;
}

ProtoWriter& ProtoWriter::bytes(int field, std::string_view value) {
    key(field, kLengthDelimited);
    rawVarint(value.size());
    m_data.append(value);
    return *this;
}

uint32_t crc32c(std::string_view data) {
    uint32_t crc = 0xFFFFFFFFu;
    for (const char ch : data) crc = kCrcTable[(crc ^ static_cast<unsigned char>(ch)) & 0xFFu] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

uint32_t maskedCrc32c(std::string_view data) {
    const uint32_t crc = crc32c(data);
    return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

std::string tfRecord(std::string_view payload) {
    std::string length;
    appendLittleEndian(length, payload.size(), 8);
    std::string out = length;
    appendLittleEndian(out, maskedCrc32c(length), 4);
    out.append(payload);
    appendLittleEndian(out, maskedCrc32c(payload), 4);
    return out;
}

std::string scalarValue(std::string_view tag, double value) {
    ProtoWriter v;
    v.bytes(kValueTag, tag).float32(kValueSimple, static_cast<float>(value));
    return v.data();
}

std::string textValue(std::string_view tag, std::string_view markdown) {
    ProtoWriter shape;   // a scalar: a TensorShapeProto without dimensions
    ProtoWriter tensor;
    tensor.varint(kTensorDtype, kDtString).message(kTensorShape, shape).bytes(kTensorStringVal, markdown);
    // The text plugin's content is TextPluginData{version: 0}: empty in proto3.
    return pluginValue(tag, "text", "", tensor.data());
}

std::string pluginValue(std::string_view tag, std::string_view plugin, std::string_view content,
                        const std::string& tensor) {
    ProtoWriter plugin_data;
    plugin_data.bytes(kPluginName, plugin);
    if (!content.empty()) plugin_data.bytes(kPluginContent, content);
    ProtoWriter metadata;
    metadata.message(kMetadataPluginData, plugin_data);
    ProtoWriter v;
    v.bytes(kValueTag, tag).message(kValueMetadata, metadata);
    if (!tensor.empty()) v.bytes(kValueTensor, tensor);
    return v.data();
}

std::string event(double wall_time, int64_t step, const std::vector<std::string>& values) {
    ProtoWriter summary;
    for (const auto& v : values) summary.bytes(kSummaryValue, v);
    ProtoWriter e;
    e.float64(kEventWallTime, wall_time);
    if (step != 0) e.int64(kEventStep, step);
    e.message(kEventSummary, summary);
    return e.data();
}

std::string fileVersionEvent(double wall_time) {
    ProtoWriter e;
    e.float64(kEventWallTime, wall_time).bytes(kEventFileVersion, "brain.Event:2");
    return e.data();
}

}  // namespace hearth::tensorboard
