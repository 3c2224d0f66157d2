#include "storage/report/PngImage.h"

#include <zlib.h>

#include <array>
#include <stdexcept>

namespace hearth::report {
namespace {

void appendBigEndian(std::string& out, uint32_t value) {
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((value >> shift) & 0xffu);
}

// length, type, data, CRC-32 of type and data (PNG specification, 5.3).
void appendChunk(std::string& out, const char* type, const std::string& data) {
    appendBigEndian(out, static_cast<uint32_t>(data.size()));
    const std::string body = std::string(type, 4) + data;
    out += body;
    const auto crc = crc32(0L, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()));
    appendBigEndian(out, static_cast<uint32_t>(crc));
}

}  // namespace

std::string encodePng(const GrayImage& image) {
    if (image.width <= 0 || image.height <= 0 ||
        image.pixels.size() != static_cast<size_t>(image.width) * static_cast<size_t>(image.height))
        throw std::invalid_argument("encodePng: " + std::to_string(image.pixels.size()) + " pixels for a " +
                                    std::to_string(image.width) + "x" + std::to_string(image.height) + " image");
    // Each row starts with its filter type (0: none).
    const auto width = static_cast<size_t>(image.width);
    std::string raw;
    raw.reserve((width + 1) * static_cast<size_t>(image.height));
    for (size_t y = 0; y < static_cast<size_t>(image.height); ++y) {
        raw += '\0';
        raw.append(reinterpret_cast<const char*>(image.pixels.data() + y * width), width);
    }
    uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
    std::string packed(packed_size, '\0');
    if (compress2(reinterpret_cast<Bytef*>(packed.data()), &packed_size, reinterpret_cast<const Bytef*>(raw.data()),
                  static_cast<uLong>(raw.size()), Z_BEST_COMPRESSION) != Z_OK)
        throw std::runtime_error("encodePng: zlib could not compress the image");
    packed.resize(packed_size);

    std::string header;
    appendBigEndian(header, static_cast<uint32_t>(image.width));
    appendBigEndian(header, static_cast<uint32_t>(image.height));
    header += std::string{'\x08', '\x00', '\x00', '\x00', '\x00'};   // depth 8, gray, deflate, no filter set, no interlace
    std::string png = "\x89PNG\r\n\x1a\n";
    appendChunk(png, "IHDR", header);
    appendChunk(png, "IDAT", packed);
    appendChunk(png, "IEND", {});
    return png;
}

std::string base64(const std::string& bytes) {
    static constexpr std::array<char, 65> kAlphabet{"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"};
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const uint32_t v = (static_cast<uint8_t>(bytes[i]) << 16) | (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                           static_cast<uint8_t>(bytes[i + 2]);
        for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(v >> shift) & 63u];
    }
    if (i < bytes.size()) {
        const bool two = i + 1 < bytes.size();
        const uint32_t v = (static_cast<uint8_t>(bytes[i]) << 16) | (two ? static_cast<uint8_t>(bytes[i + 1]) << 8 : 0u);
        out += kAlphabet[(v >> 18) & 63u];
        out += kAlphabet[(v >> 12) & 63u];
        out += two ? kAlphabet[(v >> 6) & 63u] : '=';
        out += '=';
    }
    return out;
}

std::string pngDataUrl(const GrayImage& image) { return "data:image/png;base64," + base64(encodePng(image)); }

}  // namespace hearth::report
