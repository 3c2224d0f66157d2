#include "engine/data/images/ImageDecode.h"

#include "engine/data/DataError.h"

#include <png.h>
#include <turbojpeg.h>

#include <cstring>
#include <fstream>
#include <memory>

namespace hearth {
namespace {

constexpr int64_t kMaxPixels = int64_t{1} << 28;   // 268 megapixels: beyond, a header is lying

bool isJpeg(const std::vector<uint8_t>& b) { return b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF; }
bool isPng(const std::vector<uint8_t>& b) {
    static const uint8_t magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    return b.size() >= 8 && std::memcmp(b.data(), magic, 8) == 0;
}

// One TurboJPEG decompressor per thread (loader workers decode side by side). A failed call can
// leave it in a state that misreads the next file's header (seen: 0x0 sizes after a truncated
// file), so every failure replaces it.
struct JpegHandle {
    tjhandle h = tjInitDecompress();
    ~JpegHandle() { if (h) tjDestroy(h); }
    void reset() {
        if (h) tjDestroy(h);
        h = tjInitDecompress();
    }
};
thread_local JpegHandle jpeg_handle;

tjhandle jpegDecoder() {
    if (!jpeg_handle.h) throw DataError("libjpeg-turbo could not start a decompressor");
    return jpeg_handle.h;
}

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
    throw DataError(path + ": " + problem);
}

// The decoder's message for its last error, after which the decoder is replaced.
std::string jpegError() {
    std::string message = tjGetErrorStr2(jpegDecoder());
    jpeg_handle.reset();
    return message;
}

void checkSize(int64_t w, int64_t h, const std::string& path) {
    if (w <= 0 || h <= 0 || w * h > kMaxPixels)
        fail(path, "implausible image size " + std::to_string(w) + "x" + std::to_string(h));
}

ImageHeader jpegHeader(const std::vector<uint8_t>& bytes, const std::string& path) {
    int w = 0, h = 0, subsamp = 0, colorspace = 0;
    if (tjDecompressHeader3(jpegDecoder(), bytes.data(), static_cast<unsigned long>(bytes.size()), &w, &h,
                            &subsamp, &colorspace) != 0)
        fail(path, "not a readable JPEG (" + jpegError() + ")");
    checkSize(w, h, path);
    if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK)
        fail(path, "a CMYK JPEG, which Hearth does not convert; save it as RGB");
    return {ImageFormat::Jpeg, w, h, colorspace != TJCS_GRAY};
}

ImageHeader pngHeader(const std::vector<uint8_t>& bytes, const std::string& path) {
    png_image image;
    std::memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) {
        const std::string why = image.message;
        png_image_free(&image);
        fail(path, "not a readable PNG (" + why + ")");
    }
    ImageHeader header{ImageFormat::Png, image.width, image.height, (image.format & PNG_FORMAT_FLAG_COLOR) != 0};
    png_image_free(&image);
    checkSize(header.width, header.height, path);
    return header;
}

DecodedImage decodeJpeg(const std::vector<uint8_t>& bytes, const std::string& path, int channels,
                        int64_t min_short_side) {
    const ImageHeader header = jpegHeader(bytes, path);
    int n_factors = 0;
    const tjscalingfactor* factors = tjGetScalingFactors(&n_factors);
    // The smallest of 1/8, 1/4, 3/8, 1/2 ... 1 whose shorter side is at least min_short_side.
    tjscalingfactor best{1, 1};
    const int64_t short_side = std::min(header.width, header.height);
    for (int i = 0; i < n_factors; ++i) {
        const tjscalingfactor f = factors[i];
        if (f.num > f.denom) continue;   // upscaling factors
        const int64_t scaled = (short_side * f.num + f.denom - 1) / f.denom;
        if (min_short_side > 0 && scaled >= min_short_side && f.num * best.denom < best.num * f.denom) best = f;
    }
    DecodedImage out;
    out.width = (header.width * best.num + best.denom - 1) / best.denom;
    out.height = (header.height * best.num + best.denom - 1) / best.denom;
    out.channels = channels;
    out.pixels.resize(static_cast<size_t>(out.width * out.height * channels));
    const int format = channels == 1 ? TJPF_GRAY : TJPF_RGB;
    if (tjDecompress2(jpegDecoder(), bytes.data(), static_cast<unsigned long>(bytes.size()), out.pixels.data(),
                      static_cast<int>(out.width), 0, static_cast<int>(out.height), format,
                      TJFLAG_STOPONWARNING) != 0)
        fail(path, "corrupt JPEG data (" + jpegError() + ")");
    return out;
}

DecodedImage decodePng(const std::vector<uint8_t>& bytes, const std::string& path, int channels) {
    png_image image;
    std::memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    struct Free {
        png_image* i;
        ~Free() { png_image_free(i); }
    } guard{&image};
    if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()))
        fail(path, std::string("not a readable PNG (") + image.message + ")");
    checkSize(image.width, image.height, path);
    // Read with alpha when the file has it, then drop it (PIL's convert("RGB"/"L") keeps the
    // colour values as they are rather than compositing them onto a background).
    const bool alpha = (image.format & PNG_FORMAT_FLAG_ALPHA) != 0;
    image.format = (channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY) | (alpha ? PNG_FORMAT_FLAG_ALPHA : 0u);
    const int64_t stored = channels + (alpha ? 1 : 0);
    std::vector<uint8_t> buffer(static_cast<size_t>(int64_t{image.width} * image.height * stored));
    if (!png_image_finish_read(&image, nullptr, buffer.data(), 0, nullptr))
        fail(path, std::string("corrupt PNG data (") + image.message + ")");
    DecodedImage out;
    out.width = image.width;
    out.height = image.height;
    out.channels = channels;
    if (!alpha) {
        out.pixels = std::move(buffer);
        return out;
    }
    out.pixels.resize(static_cast<size_t>(out.width * out.height * channels));
    const int64_t n = out.width * out.height;
    for (int64_t p = 0; p < n; ++p)
        for (int c = 0; c < channels; ++c) out.pixels[p * channels + c] = buffer[p * stored + c];
    return out;
}

}  // namespace

std::vector<uint8_t> readImageFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw DataError(path + ": cannot be opened");
    const std::streamoff size = in.tellg();
    if (size <= 0) throw DataError(path + ": empty file");
    std::vector<uint8_t> bytes(static_cast<size_t>(size));
    in.seekg(0);
    if (!in.read(reinterpret_cast<char*>(bytes.data()), size)) throw DataError(path + ": read failed");
    return bytes;
}

ImageHeader readImageHeader(const std::vector<uint8_t>& bytes, const std::string& path) {
    if (isJpeg(bytes)) return jpegHeader(bytes, path);
    if (isPng(bytes)) return pngHeader(bytes, path);
    fail(path, "neither a JPEG nor a PNG (its first bytes are no image signature)");
}

DecodedImage decodeImage(const std::vector<uint8_t>& bytes, const std::string& path, int channels,
                         int64_t min_short_side) {
    if (channels != 1 && channels != 3) fail(path, "images decode to 1 or 3 channels");
    if (isJpeg(bytes)) return decodeJpeg(bytes, path, channels, min_short_side);
    if (isPng(bytes)) return decodePng(bytes, path, channels);
    fail(path, "neither a JPEG nor a PNG (its first bytes are no image signature)");
}

}  // namespace hearth
