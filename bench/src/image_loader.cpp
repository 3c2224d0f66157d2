// image_loader_bench: the loader's samples/s over an image folder (data.kind=image_folder): JPEG
// or PNG decoding, resize and centre crop on `--workers` loader workers (0: on the calling
// thread), optionally with random-resized-crop + flip and pinned memory, or read from the decoded
// cache. No model: this is the data path alone, what a training step waits for when the loader is
// the bottleneck. Prints one JSON object.
//
//   image_loader_bench --folder DIR [--size 224] [--workers 2] [--batch-size 64] [--batches 40]
//                      [--augment] [--pin-memory] [--cache] [--warmup 3]
//   image_loader_bench --write DIR [--size 224] [--per-class 100] [--data /usr/share/datasets/fashion-mnist]
//       writes Fashion-MNIST's first training images as DIR/train/<class>/<n>.jpg, upscaled
//       (bilinear) to --size and encoded by libjpeg-turbo at quality 90: the same folder as
//       scripts/make-image-folder --format jpeg on a machine without Pillow (a GPU machine).
#include "engine/config/ExperimentConfig.h"
#include "engine/data/Augment.h"
#include "engine/data/DataModule.h"
#include "engine/data/IdxDataset.h"
#include "engine/data/Loader.h"
#include "engine/data/formats/IdxFile.h"

#include <turbojpeg.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

namespace {

int writeFolder(const std::string& dir, const std::string& data, int64_t size, int64_t per_class) {
    namespace fs = std::filesystem;
    const auto find = [&](const std::string& name) {
        const fs::path p = fs::path(data) / name;
        return fs::exists(p) ? p.string() : p.string() + ".gz";
    };
    const hearth::IdxFile images = hearth::readIdxFile(find("train-images-idx3-ubyte"), 3);
    const hearth::IdxFile labels = hearth::readIdxFile(find("train-labels-idx1-ubyte"), 1);
    const auto classes = hearth::IdxDataset::classNamesForFolder(data);
    const int64_t n = images.dims[0], rows = images.dims[1], cols = images.dims[2];
    std::vector<int64_t> written(classes.size(), 0);
    tjhandle tj = tjInitCompress();
    int64_t total = 0;
    for (int64_t i = 0; i < n; ++i) {
        const size_t label = labels.payload()[i];
        if (written[label] >= per_class) continue;
        auto img = torch::from_blob(const_cast<uint8_t*>(images.payload() + i * rows * cols), {1, 1, rows, cols}, torch::kUInt8)
                       .to(torch::kFloat32);
        namespace F = torch::nn::functional;
        auto big = F::interpolate(img, F::InterpolateFuncOptions().size(std::vector<int64_t>{size, size})
                                           .mode(torch::kBilinear).align_corners(false))
                       .round_().clamp_(0, 255).to(torch::kUInt8).contiguous();
        unsigned char* jpeg = nullptr;
        unsigned long bytes = 0;
        if (tjCompress2(tj, big.data_ptr<uint8_t>(), static_cast<int>(size), 0, static_cast<int>(size), TJPF_GRAY, &jpeg,
                        &bytes, TJSAMP_GRAY, 90, 0) != 0) {
            std::cerr << "JPEG encoding failed: " << tjGetErrorStr2(tj) << "\n";
            return 1;
        }
        std::string name = classes[label];
        for (char& c : name) if (c == '/' || c == ' ') c = '_';
        const fs::path folder = fs::path(dir) / "train" / name;
        fs::create_directories(folder);
        std::ofstream(folder / (std::to_string(i) + ".jpg"), std::ios::binary)
            .write(reinterpret_cast<const char*>(jpeg), static_cast<std::streamsize>(bytes));
        tjFree(jpeg);
        ++written[label];
        ++total;
        if (*std::min_element(written.begin(), written.end()) >= per_class) break;
    }
    tjDestroy(tj);
    std::cerr << "wrote " << total << " JPEGs of " << size << "x" << size << " to " << dir << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app("The image-folder loader's throughput");
    std::string folder;
    int64_t size = 224, workers = 2, batch = 64, batches = 40, warmup = 3;
    bool augment = false, pin = false, cache = false;
    std::string write, data_dir = hearth::kDefaultFashionMnistPath;
    int64_t per_class = 100;
    app.add_option("--folder", folder, "An image folder (scripts/make-image-folder writes one)");
    app.add_option("--write", write, "Write Fashion-MNIST as a folder of JPEGs here instead");
    app.add_option("--per-class", per_class, "--write: images per class");
    app.add_option("--data", data_dir, "--write: the Fashion-MNIST IDX folder");
    app.add_option("--size", size, "data.image_size");
    app.add_option("--workers", workers, "trainer.num_workers");
    app.add_option("--batch-size", batch, "trainer.batch_size");
    app.add_option("--batches", batches, "batches timed (after the warm-up)");
    app.add_option("--warmup", warmup, "batches before the clock starts");
    app.add_flag("--augment", augment, "random resized crop and horizontal flip");
    app.add_flag("--pin-memory", pin, "pinned batches (only on a CUDA machine)");
    app.add_flag("--cache", cache, "data.cache_decoded (built before the clock starts)");
    CLI11_PARSE(app, argc, argv);
    if (!write.empty()) return writeFolder(write, data_dir, size, per_class);
    if (folder.empty()) {
        std::cerr << "--folder is required\n";
        return 2;
    }

    hearth::DataConfig data;
    data.kind = "image_folder";
    data.path = folder;
    data.image_size = size;
    data.cache_decoded = cache;
    data.val_fraction = 0.0;
    data.test_fraction = 0.0;
    const auto load_start = std::chrono::steady_clock::now();
    const hearth::DataSplits splits = hearth::loadDataSplits(data, 42);
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();

    hearth::LoaderOptions o;
    o.batch_size = batch;
    o.seed = 42;
    o.num_workers = workers;
    o.pin_memory = pin;
    o.device = pin && torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
    o.copy_to_device = false;
    if (augment) o.augment = std::make_shared<hearth::ImageAugment>(0, true, true);
    hearth::Loader loader(splits.train, o);
    int64_t epoch = 0, seen = 0, timed_batches = 0;
    std::chrono::steady_clock::time_point start;
    loader.startEpoch(epoch);
    for (int64_t i = 0; i < warmup + batches; ++i) {
        if (i == warmup) start = std::chrono::steady_clock::now();
        auto b = loader.next();
        if (!b) {
            loader.startEpoch(++epoch);
            b = loader.next();
        }
        if (i >= warmup) {
            seen += b->size();
            ++timed_batches;
        }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nlohmann::json out = {{"folder", folder},
                          {"images", splits.train->size()},
                          {"image_size", size},
                          {"workers", workers},
                          {"batch_size", batch},
                          {"batches", timed_batches},
                          {"augment", augment},
                          {"pin_memory", o.pin_memory && o.device.is_cuda()},
                          {"cache", cache},
                          {"prepare_s", load_s},
                          {"samples_per_sec", static_cast<double>(seen) / s},
                          {"cores", std::thread::hardware_concurrency()}};
    std::cout << out.dump() << "\n";
    return 0;
}
