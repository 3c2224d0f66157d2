#pragma once
// ImageDecode: JPEG (libjpeg-turbo's TurboJPEG API) and PNG (libpng's simplified API) files
// decoded into 8-bit grayscale or RGB pixels. No LibTorch. A JPEG much larger than the size the
// caller needs is decoded at 1/2, 1/4 or 1/8 scale by the decoder itself (its DCT scaling: the
// work drops with the pixels). Every problem throws DataError naming the file and what is wrong.

#include <cstdint>
#include <string>
#include <vector>

namespace hearth {

enum class ImageFormat { Jpeg, Png };

struct ImageHeader {
    ImageFormat format = ImageFormat::Jpeg;
    int64_t width = 0, height = 0;
    bool colour = false;   // the file stores colour (RGB, palette, CMYK, YCbCr...)
};

struct DecodedImage {
    int64_t width = 0, height = 0, channels = 0;
    std::vector<uint8_t> pixels;   // row-major, channels interleaved (HWC)
};

// The file's bytes; DataError when it cannot be read or is empty.
std::vector<uint8_t> readImageFile(const std::string& path);
// Format and size from the file's first bytes and headers (no pixel is decoded).
ImageHeader readImageHeader(const std::vector<uint8_t>& bytes, const std::string& path);
// Pixels with `channels` (1: grayscale, 3: RGB; colour files are converted to gray and gray ones
// replicated, alpha dropped as PIL's convert() does). min_short_side > 0 lets a JPEG decode at
// the smallest DCT scale whose shorter side is still at least that many pixels. A truncated or
// corrupt file is an error (libjpeg's warnings included: it would otherwise fill grey).
DecodedImage decodeImage(const std::vector<uint8_t>& bytes, const std::string& path, int channels,
                         int64_t min_short_side = 0);

}  // namespace hearth
