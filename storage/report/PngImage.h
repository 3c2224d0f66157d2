#pragma once
// PngImage: grayscale pixels as a PNG file (zlib's deflate, no image library) and as a data: URL,
// so a report can inline the samples a model got wrong without Qt and without files beside it.

#include <cstdint>
#include <string>
#include <vector>

namespace hearth::report {

// 8-bit grayscale, row by row.
struct GrayImage {
    int width = 0;
    int height = 0;
    std::vector<uint8_t> pixels;   // width * height bytes
};

// The image as a PNG file (color type 0, bit depth 8, one IDAT). Throws std::invalid_argument
// when the pixel count does not match the size.
std::string encodePng(const GrayImage& image);

// RFC 4648 base64 with padding.
std::string base64(const std::string& bytes);

// "data:image/png;base64,..."
std::string pngDataUrl(const GrayImage& image);

}  // namespace hearth::report
