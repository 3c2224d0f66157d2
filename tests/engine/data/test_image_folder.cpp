// data.kind=image_folder: JPEG and PNG decoding (libjpeg-turbo, libpng), torchvision's ImageFolder
// layouts and their errors, resize + centre crop, the decoded cache (built once, read back with the
// same bytes, rebuilt when a file changes), unreadable files (error names the file; skip leaves it
// out and lists it), the splits, colour detection and normalisation, the loader giving the same
// batches with and without workers and cache, and the random resized crop. Test images are
// written with libpng's and libjpeg-turbo's encoders (the cuda build's tests have no Qt Gui).
#include "engine/config/ExperimentConfig.h"
#include "engine/data/Augment.h"
#include "engine/data/DataError.h"
#include "engine/data/DataModule.h"
#include "engine/data/Loader.h"
#include "engine/data/images/DecodedImages.h"
#include "engine/data/images/ImageDecode.h"
#include "engine/data/images/ImageFolderScan.h"
#include "engine/data/images/ImageFolderSplits.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <png.h>
#include <turbojpeg.h>

#include <filesystem>
#include <cstring>
#include <fstream>
#include <numeric>
#include <thread>

using namespace hearth;

namespace {

namespace fs = std::filesystem;

// An image: w x h pixels of `channels` (1, 3 or 4) interleaved.
struct Image {
    int w = 0, h = 0, channels = 1;
    std::vector<uint8_t> pixels;
    uint8_t& at(int x, int y, int c = 0) { return pixels[static_cast<size_t>((y * w + x) * channels + c)]; }
};

// Pixel (x, y) = (seed * 37 + x * 3 + y * 5) % 256.
Image grey(int w, int h, int seed) {
    Image img{w, h, 1, std::vector<uint8_t>(static_cast<size_t>(w * h))};
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) img.at(x, y) = static_cast<uint8_t>((seed * 37 + x * 3 + y * 5) % 256);
    return img;
}

Image colour(int w, int h, int seed) {
    Image img{w, h, 3, std::vector<uint8_t>(static_cast<size_t>(w * h * 3))};
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            img.at(x, y, 0) = static_cast<uint8_t>((seed * 11 + x * 7) % 256);
            img.at(x, y, 1) = static_cast<uint8_t>((y * 9) % 256);
            img.at(x, y, 2) = static_cast<uint8_t>((x + y + seed) % 256);
        }
    return img;
}

// .png through libpng's simplified writer, .jpg through TurboJPEG (quality 95, 4:4:4).
void save(const Image& img, const QString& path) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    const std::string file = path.toStdString();
    if (path.endsWith(".png")) {
        png_image p;
        std::memset(&p, 0, sizeof p);
        p.version = PNG_IMAGE_VERSION;
        p.width = static_cast<png_uint_32>(img.w);
        p.height = static_cast<png_uint_32>(img.h);
        p.format = img.channels == 1 ? PNG_FORMAT_GRAY : img.channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
        QVERIFY2(png_image_write_to_file(&p, file.c_str(), 0, img.pixels.data(), 0, nullptr), p.message);
        return;
    }
    tjhandle tj = tjInitCompress();
    unsigned char* out = nullptr;
    unsigned long size = 0;
    const int format = img.channels == 1 ? TJPF_GRAY : TJPF_RGB;
    const int sub = img.channels == 1 ? TJSAMP_GRAY : TJSAMP_444;
    QCOMPARE(tjCompress2(tj, img.pixels.data(), img.w, 0, img.h, format, &out, &size, sub, 95, 0), 0);
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(out), static_cast<std::streamsize>(size));
    tjFree(out);
    tjDestroy(tj);
}

std::string str(const QString& s) { return s.toStdString(); }

// ROOT/<class>/<n>.png|jpg: `per_class` 32x32 grey images per class, PNG and JPEG alternating.
void writeFolder(const QString& root, const QStringList& classes, int per_class, bool rgb = false) {
    int n = 0;
    for (const QString& c : classes)
        for (int i = 0; i < per_class; ++i, ++n)
            save(rgb ? colour(32, 32, n) : grey(32, 32, n),
                 root + "/" + c + "/" + QString::number(i) + (n % 2 ? ".jpg" : ".png"));
}

DataConfig folderConfig(const QString& root, int64_t size = 32) {
    DataConfig d;
    d.kind = "image_folder";
    d.path = str(root);
    d.image_size = size;
    d.val_fraction = 0.2;
    d.test_fraction = 0.2;
    return d;
}

template <typename F>
QString dataErrorOf(F&& f) {
    try {
        f();
    } catch (const DataError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

std::vector<torch::Tensor> epochInputs(const std::shared_ptr<const Dataset>& data, int64_t workers) {
    LoaderOptions o;
    o.batch_size = 5;
    o.seed = 7;
    o.num_workers = workers;
    Loader loader(data, o);
    loader.startEpoch(0);
    std::vector<torch::Tensor> out;
    while (auto b = loader.next()) {
        out.push_back(b->input().clone());
        out.push_back(b->label().to(torch::kFloat32).clone());
    }
    return out;
}

}  // namespace

class TestImageFolder : public QObject {
    Q_OBJECT

private slots:
    void pngDecodesExactlyGreyRgbAndAlpha() {
        QTemporaryDir dir;
        save(grey(13, 7, 1), dir.filePath("g.png"));
        const auto bytes = readImageFile(str(dir.filePath("g.png")));
        const ImageHeader h = readImageHeader(bytes, "g.png");
        QCOMPARE(h.format, ImageFormat::Png);
        QCOMPARE(h.width, int64_t{13});
        QCOMPARE(h.height, int64_t{7});
        QVERIFY(!h.colour);
        const DecodedImage g = decodeImage(bytes, "g.png", 1);
        QCOMPARE(g.channels, int64_t{1});
        for (int y = 0; y < 7; ++y)
            for (int x = 0; x < 13; ++x) QCOMPARE(int(g.pixels[y * 13 + x]), (37 + x * 3 + y * 5) % 256);
        // Grey replicated into RGB.
        const DecodedImage g3 = decodeImage(bytes, "g.png", 3);
        QCOMPARE(int(g3.pixels[3 * 20 + 2]), int(g.pixels[20]));

        Image c = colour(9, 5, 3);
        save(c, dir.filePath("c.png"));
        const auto cbytes = readImageFile(str(dir.filePath("c.png")));
        QVERIFY(readImageHeader(cbytes, "c.png").colour);
        const DecodedImage rgb = decodeImage(cbytes, "c.png", 3);
        for (int y = 0; y < 5; ++y)
            for (int x = 0; x < 9; ++x)
                for (int ch = 0; ch < 3; ++ch) QCOMPARE(int(rgb.pixels[(y * 9 + x) * 3 + ch]), int(c.at(x, y, ch)));
        // Alpha is dropped, not composited (PIL's convert("RGB")).
        Image a{4, 4, 4, {}};
        for (int i = 0; i < 16; ++i) a.pixels.insert(a.pixels.end(), {200, 100, 50, 10});
        save(a, dir.filePath("a.png"));
        const DecodedImage ra = decodeImage(readImageFile(str(dir.filePath("a.png"))), "a.png", 3);
        QCOMPARE(int(ra.pixels[0]), 200);
        QCOMPARE(int(ra.pixels[1]), 100);
        QCOMPARE(int(ra.pixels[2]), 50);
    }

    void jpegDecodesCloseAndScalesInTheDecoder() {
        QTemporaryDir dir;
        save(grey(64, 48, 2), dir.filePath("g.jpg"));
        const auto bytes = readImageFile(str(dir.filePath("g.jpg")));
        QCOMPARE(readImageHeader(bytes, "g.jpg").format, ImageFormat::Jpeg);
        const DecodedImage g = decodeImage(bytes, "g.jpg", 1);
        QCOMPARE(g.width, int64_t{64});
        double err = 0;
        for (int y = 0; y < 48; ++y)
            for (int x = 0; x < 64; ++x) err += std::abs(int(g.pixels[y * 64 + x]) - (74 + x * 3 + y * 5) % 256);
        QVERIFY2(err / (64 * 48) < 12.0, qPrintable(QString::number(err / (64 * 48))));   // lossy, quality 95
        // DCT scaling: a 512x384 JPEG needed at a shorter side of 96 decodes at 1/4 (128x96).
        save(grey(512, 384, 3), dir.filePath("big.jpg"));
        const DecodedImage s = decodeImage(readImageFile(str(dir.filePath("big.jpg"))), "big.jpg", 1, 96);
        QCOMPARE(s.width, int64_t{128});
        QCOMPARE(s.height, int64_t{96});
        QCOMPARE(decodeImage(readImageFile(str(dir.filePath("big.jpg"))), "big.jpg", 1, 0).width, int64_t{512});
    }

    void brokenFilesAreNamedWithTheirProblem() {
        QTemporaryDir dir;
        save(grey(64, 64, 4), dir.filePath("ok.jpg"));
        QFile ok(dir.filePath("ok.jpg"));
        QVERIFY(ok.open(QIODevice::ReadOnly));
        const QByteArray jpeg = ok.readAll();
        const auto write = [&](const QString& name, const QByteArray& content) {
            QFile f(dir.filePath(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(content);
        };
        write("truncated.jpg", jpeg.left(jpeg.size() / 2));
        write("text.png", "not an image");
        write("empty.jpg", "");
        QVERIFY(dataErrorOf([&] { readImageFile(str(dir.filePath("empty.jpg"))); }).contains("empty.jpg: empty file"));
        const auto t = readImageFile(str(dir.filePath("text.png")));
        QVERIFY(dataErrorOf([&] { readImageHeader(t, "text.png"); }).contains("text.png: neither a JPEG nor a PNG"));
        const auto tr = readImageFile(str(dir.filePath("truncated.jpg")));
        (void)readImageHeader(tr, "truncated.jpg");   // the header is intact
        QVERIFY(dataErrorOf([&] { decodeImage(tr, "truncated.jpg", 1); }).contains("truncated.jpg: corrupt JPEG data"));
        QVERIFY(dataErrorOf([&] { readImageFile(str(dir.filePath("missing.png"))); }).contains("cannot be opened"));
    }

    void layoutsAndTheirErrors() {
        QTemporaryDir dir;
        const QString flat = dir.filePath("flat");
        writeFolder(flat, {"b_cat", "a_dog"}, 2);
        QFile(flat + "/a_dog/notes.txt").open(QIODevice::WriteOnly);
        const ImageFolderLayout l = scanImageFolder(str(flat));
        QCOMPARE(l.class_names, (std::vector<std::string>{"a_dog", "b_cat"}));   // sorted, as torchvision
        QVERIFY(!l.split_folders);
        QCOMPARE(l.train.size(), size_t{4});
        QCOMPARE(l.train[0].label, int64_t{0});
        QVERIFY(l.train[0].path.find("a_dog/0.") != std::string::npos);
        QCOMPARE(l.ignored_files, int64_t{1});
        QVERIFY(looksLikeImageFolder(str(flat)));

        const QString split = dir.filePath("split");
        writeFolder(split + "/train", {"x", "y", "z"}, 2);
        writeFolder(split + "/test", {"x", "z"}, 1);
        const ImageFolderLayout s = scanImageFolder(str(split));
        QVERIFY(s.split_folders);
        QCOMPARE(s.train.size(), size_t{6});
        QVERIFY(s.val.empty());
        QCOMPARE(s.test.size(), size_t{2});
        QCOMPARE(s.test[1].label, int64_t{2});   // z is the third training class
        QCOMPARE(&sourceFilesOf(s, true), &s.test);
        QCOMPARE(&sourceFilesOf(s, false), &s.train);
        QVERIFY(looksLikeImageFolder(str(split)));

        QVERIFY(dataErrorOf([&] { scanImageFolder(str(dir.filePath("nope"))); }).contains("no such folder"));
        writeFolder(dir.filePath("one"), {"only"}, 1);
        QVERIFY(dataErrorOf([&] { scanImageFolder(str(dir.filePath("one"))); }).contains("only one class folder"));
        QDir().mkpath(dir.filePath("none"));
        QVERIFY(dataErrorOf([&] { scanImageFolder(str(dir.filePath("none"))); }).contains("no class subfolders"));
        writeFolder(dir.filePath("emptyclass"), {"a"}, 1);
        QDir().mkpath(dir.filePath("emptyclass/b"));
        QVERIFY(dataErrorOf([&] { scanImageFolder(str(dir.filePath("emptyclass"))); }).contains("emptyclass/b: no .jpg"));
        writeFolder(split + "/val", {"w"}, 1);
        QVERIFY(dataErrorOf([&] { scanImageFolder(str(split)); }).contains("val/w: a class folder the training folder lacks"));
        QDir(split + "/val").removeRecursively();
        QDir().mkpath(split + "/extra");
        QVERIFY(dataErrorOf([&] { scanImageFolder(str(split)); }).contains("extra: next to train/ only val/ and test/"));
    }

    void squaresAreResizedAndCentreCropped() {
        QTemporaryDir dir;
        // 64 wide, 32 high: left half black, right half white.
        Image img{64, 32, 1, std::vector<uint8_t>(64 * 32)};
        for (int y = 0; y < 32; ++y)
            for (int x = 0; x < 64; ++x) img.at(x, y) = x < 32 ? 0 : 255;
        save(img, dir.filePath("halves.png"));
        DecodedImages images({str(dir.filePath("halves.png"))}, 1, 16);
        // Shorter side 32 -> 16 (so 32 x 16), centre crop 16: columns 8..23 of the resized image.
        const torch::Tensor sq = images.square(0);
        QCOMPARE(sq.sizes(), (c10::IntArrayRef{1, 16, 16}));
        QCOMPARE(sq[0][5][0].item<int>(), 0);
        QCOMPARE(sq[0][5][6].item<int>(), 0);
        QCOMPARE(sq[0][5][9].item<int>(), 255);
        QCOMPARE(sq[0][5][15].item<int>(), 255);
        // The same size needs no resize: the crop alone.
        DecodedImages same({str(dir.filePath("halves.png"))}, 1, 32);
        const torch::Tensor s32 = same.square(0);
        QCOMPARE(s32[0][0][15].item<int>(), 0);
        QCOMPARE(s32[0][0][16].item<int>(), 255);
    }

    void decodedCacheIsReusedAndRebuiltWhenAFileChanges() {
        QTemporaryDir dir;
        writeFolder(dir.filePath("f"), {"a", "b"}, 3);
        const ImageFolderLayout l = scanImageFolder(str(dir.filePath("f")));
        std::vector<std::string> paths;
        for (const auto& f : l.train) paths.push_back(f.path);
        const std::string cache = str(dir.filePath("cache"));
        DecodedImages plain(paths, 1, 24);
        DecodedImages first(paths, 1, 24);
        bool built = false;
        QVERIFY(first.useCache(cache, built).empty());
        QVERIFY(built);
        for (int64_t i = 0; i < plain.count(); ++i) QVERIFY(torch::equal(first.square(i), plain.square(i)));
        DecodedImages second(paths, 1, 24);
        QVERIFY(second.useCache(cache, built).empty());
        QVERIFY(!built);
        QCOMPARE(second.cachePath(), first.cachePath());
        auto out = torch::empty({3, 1, 24, 24}, torch::kUInt8);
        second.fill({5, 0, 2}, out);
        QVERIFY(torch::equal(out[0], plain.square(5)));
        QVERIFY(torch::equal(out[2], plain.square(2)));
        // Another size is another cache; a changed file invalidates it.
        DecodedImages other(paths, 1, 16);
        QVERIFY(other.useCache(cache, built).empty());
        QVERIFY(built);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        save(grey(32, 32, 99), QString::fromStdString(paths[1]));
        DecodedImages changed(paths, 1, 24);
        QVERIFY(changed.useCache(cache, built).empty());
        QVERIFY(built);
        QVERIFY(changed.cachePath() != first.cachePath());
        QVERIFY(torch::equal(changed.square(1), DecodedImages(paths, 1, 24).square(1)));
        // A file that does not decode is marked in the cache, and named.
        { std::ofstream(paths[4], std::ios::trunc) << "broken"; }
        DecodedImages broken(paths, 1, 24);
        const auto bad = broken.useCache(cache, built);
        QCOMPARE(bad.size(), size_t{1});
        QCOMPARE(bad[0].index, int64_t{4});
        QVERIFY(QString::fromStdString(bad[0].message).contains(QString::fromStdString(paths[4])));
        DecodedImages reopened(paths, 1, 24);
        QCOMPARE(reopened.useCache(cache, built).size(), size_t{1});
        QVERIFY(!built);
    }

    void splitsNormaliseAndCountColourAndGrey() {
        QTemporaryDir dir;
        writeFolder(dir.filePath("g"), {"a", "b", "c"}, 10);
        const DataSplits g = loadDataSplits(folderConfig(dir.filePath("g")), 1);
        QCOMPARE(g.train->size() + g.val->size() + g.test->size(), int64_t{30});
        QCOMPARE(g.val->size(), int64_t{6});
        QCOMPARE(g.test->size(), int64_t{6});
        QCOMPARE(g.train->sampleShape(), (std::vector<int64_t>{1, 32, 32}));
        QVERIFY(g.is_image);
        QVERIFY(QString::fromStdString(g.description).contains("image folder g 18/6/6 samples, 1x32x32, 3 classes"));
        // Grey: ImageNet's statistics averaged over its channels.
        const Batch b = g.train->getRawBatch({0});
        QCOMPARE(b.raw_input->mean, 0.449);
        QCOMPARE(b.raw_input->std, 0.226);
        // Raw batches normalise to the same floats.
        QVERIFY(torch::allclose(normalized(g.train->getRawBatch({3, 4})).input(), g.train->getBatch({3, 4}).input()));

        writeFolder(dir.filePath("c"), {"a", "b"}, 4, /*rgb=*/true);
        const DataSplits c = loadDataSplits(folderConfig(dir.filePath("c"), 16), 1);
        QCOMPARE(c.train->sampleShape(), (std::vector<int64_t>{3, 16, 16}));
        const Batch raw = c.train->getRawBatch({0});
        QVERIFY(raw.raw_input.has_value());
        QCOMPARE(raw.raw_input->channel_mean, (std::vector<double>{0.485, 0.456, 0.406}));   // ImageNet's
        const torch::Tensor x = c.train->getBatch({0}).input();
        const double expected = (raw.input()[0][1][2][3].item<double>() / 255.0 - 0.456) / 0.224;
        QVERIFY(std::abs(x[0][1][2][3].item<double>() - expected) < 1e-5);
        // The sample's file is what describe() shows and what predictions count in.
        QVERIFY(QString::fromStdString(c.train->describe(0)).endsWith(".png") ||
                QString::fromStdString(c.train->describe(0)).endsWith(".jpg"));
    }

    void unreadableFilesStopOrAreSkippedAndListed() {
        QTemporaryDir dir;
        const QString root = dir.filePath("f");
        writeFolder(root, {"a", "b"}, 6);
        { std::ofstream(str(root + "/a/zz.png")) << "text"; }
        DataConfig d = folderConfig(root);
        const QString error = dataErrorOf([&] { loadDataSplits(d, 1); });
        QVERIFY2(error.contains("a/zz.png: neither a JPEG nor a PNG") && error.contains("data.on_bad_file=skip"),
                 qPrintable(error));
        d.on_bad_file = "skip";
        const DataSplits s = loadDataSplits(d, 1);
        QCOMPARE(s.train->size() + s.val->size() + s.test->size(), int64_t{12});
        QCOMPARE(s.notes.size(), size_t{1});
        QVERIFY(QString::fromStdString(s.notes[0]).contains("left out 1 unreadable train file(s) of 13"));
        QVERIFY(QString::fromStdString(s.notes[0]).contains("a/zz.png"));
        // A truncated JPEG passes the header check: skip decodes every file and finds it too.
        save(grey(128, 128, 5), dir.filePath("big.jpg"));   // big enough that half of it is past the headers
        QFile good(dir.filePath("big.jpg"));
        QVERIFY(good.open(QIODevice::ReadOnly));
        const QByteArray jpeg = good.readAll();
        QFile cut(root + "/b/zz-cut.jpg");
        QVERIFY(cut.open(QIODevice::WriteOnly));
        cut.write(jpeg.left(jpeg.size() / 2));
        cut.close();
        const DataSplits s2 = loadDataSplits(d, 1);
        QVERIFY(QString::fromStdString(s2.notes[0]).contains("left out 2 unreadable"));
        QVERIFY2(QString::fromStdString(s2.notes[0]).contains("zz-cut.jpg: corrupt JPEG data"), s2.notes[0].c_str());
        // With on_bad_file=error a file that only fails to decode stops the run when a batch needs
        // it, naming the file.
        d.on_bad_file = "error";
        fs::remove(str(root + "/a/zz.png"));
        const QString lazy = dataErrorOf([&] {
            const DataSplits l = loadDataSplits(d, 1);
            for (const auto& split : {l.train, l.val, l.test}) {
                std::vector<int64_t> all(static_cast<size_t>(split->size()));
                std::iota(all.begin(), all.end(), 0);
                split->getBatch(all);
            }
        });
        QVERIFY2(lazy.contains("zz-cut.jpg: corrupt JPEG data") && lazy.contains("found while training"), qPrintable(lazy));
    }

    void batchesAreTheSameForAnyWorkersWithAndWithoutTheCache() {
        QTemporaryDir dir;
        writeFolder(dir.filePath("f"), {"a", "b", "c"}, 8, true);
        qputenv("HEARTH_CACHE_DIR", dir.filePath("cache").toUtf8());
        DataConfig d = folderConfig(dir.filePath("f"), 24);
        const DataSplits plain = loadDataSplits(d, 3);
        d.cache_decoded = true;
        const DataSplits cached = loadDataSplits(d, 3);
        QVERIFY(fs::exists(str(dir.filePath("cache/images"))));
        const auto reference = epochInputs(plain.train, 0);
        for (const auto& [splits, workers] : {std::pair{&plain, 2}, std::pair{&cached, 0}, std::pair{&cached, 2}}) {
            const auto got = epochInputs(splits->train, workers);
            QCOMPARE(got.size(), reference.size());
            for (size_t i = 0; i < got.size(); ++i) QVERIFY(torch::equal(got[i], reference[i]));
        }
        qunsetenv("HEARTH_CACHE_DIR");
    }

    void randomResizedCropIsSeededPerSampleAndEpoch() {
        // 4 images 3x32x32 of distinct ramps, raw uint8.
        auto images = torch::arange(4 * 3 * 32 * 32, torch::kInt64).remainder(251).to(torch::kUInt8).reshape({4, 3, 32, 32});
        auto batchOf = [&](const torch::Tensor& x) {
            return Batch(x.clone(), torch::zeros({4}, torch::kInt64), torch::tensor({10, 11, 12, 13}, torch::kInt64));
        };
        const ImageAugment rrc(0, true, true);
        QVERIFY(rrc.active());
        QVERIFY(QString::fromStdString(rrc.describe()).contains("random resized crop"));
        Batch a = batchOf(images), b = batchOf(images), c = batchOf(images);
        rrc.apply(a, 5, 0);
        rrc.apply(b, 5, 0);
        rrc.apply(c, 5, 1);
        QCOMPARE(a.input().sizes(), images.sizes());
        QCOMPARE(a.input().scalar_type(), torch::kUInt8);   // raw stays raw
        QVERIFY(torch::equal(a.input(), b.input()));        // same seed, epoch and sample: same crop
        QVERIFY(!torch::equal(a.input(), c.input()));       // another epoch: another crop
        QVERIFY(!torch::equal(a.input(), images));
        // The same sample gives the same crop in another batch position.
        Batch one(images.narrow(0, 2, 1).clone(), torch::zeros({1}, torch::kInt64), torch::tensor({12}, torch::kInt64));
        rrc.apply(one, 5, 0);
        QVERIFY(torch::equal(one.input()[0], a.input()[2]));
        // Float images go through the same boxes (up to uint8 rounding).
        Batch f(images.to(torch::kFloat32), torch::zeros({4}, torch::kInt64), torch::tensor({10, 11, 12, 13}, torch::kInt64));
        rrc.apply(f, 5, 0);
        QVERIFY((f.input() - a.input().to(torch::kFloat32)).abs().max().item<double>() <= 0.5001);
        bool refused = false;
        try {
            ImageAugment padded_and_resized(4, false, true);
        } catch (const std::invalid_argument&) {
            refused = true;
        }
        QVERIFY(refused);
    }
};

QTEST_MAIN(TestImageFolder)
#include "test_image_folder.moc"
