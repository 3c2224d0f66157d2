#include "engine/data/images/DecodedImages.h"

#include "engine/data/CacheFiles.h"
#include "engine/data/DataError.h"
#include "engine/data/images/ImageDecode.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hearth {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'H', 'E', 'A', 'R', 'T', 'H', 'I', 'M'};
constexpr int64_t kFormat = 1;
constexpr size_t kHeaderBytes = 64;        // magic, format, count, channels, size
constexpr uint8_t kGood = 1, kBad = 2;     // one status byte per image after the header

size_t alignUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

void parallelForEach(int64_t n, const std::function<void(int64_t)>& fn) {
    const int64_t threads = std::min<int64_t>(std::max(1u, std::thread::hardware_concurrency()), std::max<int64_t>(n, 1));
    std::atomic<int64_t> next{0};
    std::exception_ptr error;
    std::mutex error_mutex;
    auto work = [&] {
        for (int64_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
            try {
                fn(i);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!error) error = std::current_exception();
                next.store(n);
            }
        }
    };
    std::vector<std::thread> pool;
    for (int64_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
}

DecodedImages::DecodedImages(std::vector<std::string> paths, int channels, int64_t size)
    : paths_(std::move(paths)), channels_(channels), size_(size) {}

DecodedImages::~DecodedImages() {
    if (mapped_) munmap(const_cast<uint8_t*>(mapped_), mapped_bytes_);
}

torch::Tensor DecodedImages::decode(int64_t i) const {
    const std::string& file = path(i);
    const DecodedImage img = decodeImage(readImageFile(file), file, channels_, size_);
    torch::NoGradGuard no_grad;
    // HWC bytes -> [1, C, H, W]; the decoder's vector outlives the view only until the copy below.
    auto chw = torch::from_blob(const_cast<uint8_t*>(img.pixels.data()), {img.height, img.width, img.channels},
                                torch::kUInt8)
                   .permute({2, 0, 1});
    const int64_t h = img.height, w = img.width, s = size_;
    const int64_t short_side = std::min(h, w);
    torch::Tensor resized;
    if (short_side == s) {
        resized = chw;
    } else {
        // torchvision's Resize(s): the shorter side to s, the longer one int(s * long / short).
        const int64_t nh = h <= w ? s : s * h / w, nw = h <= w ? s * w / h : s;
        namespace F = torch::nn::functional;
        resized = F::interpolate(chw.unsqueeze(0).to(torch::kFloat32),
                                 F::InterpolateFuncOptions()
                                     .size(std::vector<int64_t>{std::max<int64_t>(nh, s), std::max<int64_t>(nw, s)})
                                     .mode(torch::kBilinear)
                                     .align_corners(false)
                                     .antialias(true))
                      .squeeze(0)
                      .round_()
                      .clamp_(0, 255)
                      .to(torch::kUInt8);
    }
    // CenterCrop(s): top = round((H - s) / 2).
    const int64_t top = static_cast<int64_t>(std::lround((resized.size(1) - s) / 2.0));
    const int64_t left = static_cast<int64_t>(std::lround((resized.size(2) - s) / 2.0));
    return resized.narrow(1, top, s).narrow(2, left, s).contiguous().clone();
}

torch::Tensor DecodedImages::square(int64_t i) const {
    if (!mapped_) return decode(i);
    const size_t bytes = static_cast<size_t>(channels_ * size_ * size_);
    if (mapped_[kHeaderBytes + static_cast<size_t>(i)] != kGood) throw DataError(path(i) + ": could not be decoded when the cache was built");
    return torch::from_blob(const_cast<uint8_t*>(mapped_ + pixels_offset_ + bytes * static_cast<size_t>(i)),
                            {channels_, size_, size_}, torch::kUInt8)
        .clone();
}

void DecodedImages::fill(const std::vector<int64_t>& indices, torch::Tensor& out) const {
    const size_t bytes = static_cast<size_t>(channels_ * size_ * size_);
    auto* dst = out.data_ptr<uint8_t>();
    for (size_t k = 0; k < indices.size(); ++k) {
        const int64_t i = indices[k];
        if (mapped_ && mapped_[kHeaderBytes + static_cast<size_t>(i)] == kGood) {
            std::memcpy(dst + k * bytes, mapped_ + pixels_offset_ + bytes * static_cast<size_t>(i), bytes);
        } else {
            const torch::Tensor sq = square(i);
            std::memcpy(dst + k * bytes, sq.data_ptr<uint8_t>(), bytes);
        }
    }
}

std::string DecodedImages::cacheKey() const {
    Fingerprint f;
    f.number(kFormat);
    f.number(channels_);
    f.number(size_);
    f.number(count());
    for (const auto& p : paths_) {
        f.text(p);
        struct stat st {};
        if (::stat(p.c_str(), &st) == 0) {
            f.number(static_cast<int64_t>(st.st_size));
            f.number(static_cast<int64_t>(st.st_mtim.tv_sec));
            f.number(static_cast<int64_t>(st.st_mtim.tv_nsec));
        }
    }
    return f.hex();
}

bool DecodedImages::openCache(const std::string& file, std::vector<BadImage>& bad) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    const size_t bytes = static_cast<size_t>(channels_ * size_ * size_);
    const size_t offset = alignUp(kHeaderBytes + paths_.size(), 4096);
    const size_t expected = offset + bytes * paths_.size();
    if (::fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != expected) {
        ::close(fd);
        return false;
    }
    void* map = ::mmap(nullptr, expected, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) return false;
    const auto* m = static_cast<const uint8_t*>(map);
    int64_t header[4];
    std::memcpy(header, m + 8, sizeof header);
    if (std::memcmp(m, kMagic, 8) != 0 || header[0] != kFormat || header[1] != count() || header[2] != channels_ ||
        header[3] != size_) {
        munmap(map, expected);
        return false;
    }
    mapped_ = m;
    mapped_bytes_ = expected;
    pixels_offset_ = offset;
    for (int64_t i = 0; i < count(); ++i)
        if (m[kHeaderBytes + static_cast<size_t>(i)] != kGood)
            bad.push_back({i, path(i) + ": could not be decoded (found when the decoded cache was built)"});
    return true;
}

std::vector<BadImage> DecodedImages::useCache(const std::string& dir, bool& built) {
    std::vector<BadImage> bad;
    built = false;
    const std::string file = (fs::path(dir) / (cacheKey() + ".img")).string();
    cache_path_ = file;
    if (openCache(file, bad)) return bad;
    std::error_code ec;
    fs::create_directories(dir, ec);
    const size_t bytes = static_cast<size_t>(channels_ * size_ * size_);
    const size_t offset = alignUp(kHeaderBytes + paths_.size(), 4096);
    const size_t total = offset + bytes * paths_.size();
    // Unique per process and thread: two runs may build the same entry at once.
    const std::string tmp = file + ".tmp" + std::to_string(getpid()) + "-" +
                            std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
    const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw DataError(dir + ": the decoded-image cache cannot be written there (" + std::strerror(errno) + ")");
    if (::ftruncate(fd, static_cast<off_t>(total)) != 0) {
        ::close(fd);
        fs::remove(tmp, ec);
        throw DataError(tmp + ": cannot be sized to " + std::to_string(total) + " bytes (disk full?)");
    }
    void* map = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) {
        fs::remove(tmp, ec);
        throw DataError(tmp + ": cannot be mapped for writing");
    }
    auto* m = static_cast<uint8_t*>(map);
    std::mutex bad_mutex;
    try {
        parallelForEach(count(), [&](int64_t i) {
            try {
                const torch::Tensor sq = decode(i);
                std::memcpy(m + offset + bytes * static_cast<size_t>(i), sq.data_ptr<uint8_t>(), bytes);
                m[kHeaderBytes + static_cast<size_t>(i)] = kGood;
            } catch (const DataError& e) {
                m[kHeaderBytes + static_cast<size_t>(i)] = kBad;
                std::lock_guard<std::mutex> lock(bad_mutex);
                bad.push_back({i, e.what()});
            }
        });
    } catch (...) {
        munmap(map, total);
        fs::remove(tmp, ec);
        throw;
    }
    std::memcpy(m, kMagic, 8);
    const int64_t header[4] = {kFormat, count(), channels_, size_};
    std::memcpy(m + 8, header, sizeof header);
    msync(map, total, MS_SYNC);
    munmap(map, total);
    fs::rename(tmp, file, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw DataError(file + ": the decoded-image cache could not be put in place");
    }
    std::sort(bad.begin(), bad.end(), [](const BadImage& a, const BadImage& b) { return a.index < b.index; });
    std::vector<BadImage> reread;
    if (!openCache(file, reread)) throw DataError(file + ": the decoded-image cache just written cannot be read back");
    built = true;
    return bad;
}

std::vector<BadImage> DecodedImages::checkAll() const {
    std::vector<BadImage> bad;
    std::mutex bad_mutex;
    parallelForEach(count(), [&](int64_t i) {
        try {
            (void)decode(i);
        } catch (const DataError& e) {
            std::lock_guard<std::mutex> lock(bad_mutex);
            bad.push_back({i, e.what()});
        }
    });
    std::sort(bad.begin(), bad.end(), [](const BadImage& a, const BadImage& b) { return a.index < b.index; });
    return bad;
}

}  // namespace hearth
