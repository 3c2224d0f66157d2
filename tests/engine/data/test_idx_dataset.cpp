// IdxDataset: real Fashion-MNIST files, and corrupt IDX files each rejected with a DataError
// that names the file and what was wrong.
#include "engine/data/DataError.h"
#include "engine/data/IdxDataset.h"

#include <QTemporaryDir>
#include <QtTest>

#include <zlib.h>

#include <fstream>

using hearth::DataError;
using hearth::IdxDataset;

namespace {

const std::string kFashion = "/usr/share/datasets/fashion-mnist";

void putBigEndian(std::string& out, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

// An IDX file of `count` images (rows x cols) or labels; pixel/label values follow a pattern.
std::string idxBytes(uint32_t magic, std::vector<uint32_t> dims, size_t payload_bytes, int modulo) {
    std::string out;
    putBigEndian(out, magic);
    for (uint32_t d : dims) putBigEndian(out, d);
    for (size_t i = 0; i < payload_bytes; ++i) out.push_back(static_cast<char>(i % static_cast<size_t>(modulo)));
    return out;
}

void writeRaw(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void writeGzip(const std::string& path, const std::string& bytes) {
    gzFile f = gzopen(path.c_str(), "wb");
    QVERIFY(f != nullptr);
    QCOMPARE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
    gzclose(f);
}

std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `load` and returns the DataError message (fails the test if nothing is thrown).
template <typename F>
QString dataErrorOf(F&& load) {
    try {
        load();
    } catch (const DataError& e) {
        return QString::fromStdString(e.what());
    }
    return QStringLiteral("<no DataError thrown>");
}

#define VERIFY_CONTAINS(haystack, needle) \
    QVERIFY2((haystack).contains(needle), qPrintable(QStringLiteral("'%1' lacks '%2'").arg(haystack, needle)))

}  // namespace

class TestIdxDataset : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::string path(const char* name) const { return (m_dir.path() + "/" + name).toStdString(); }
    // A valid pair of 100 images of 28x28 and 100 labels in `folder` (created under m_dir).
    std::string writeValidPair(const QString& folder, bool gzip) {
        const QString dir = m_dir.path() + "/" + folder;
        QDir().mkpath(dir);
        const std::string images = idxBytes(0x803, {100, 28, 28}, 100 * 784, 256);
        const std::string labels = idxBytes(0x801, {100}, 100, 10);
        const std::string suffix = gzip ? ".gz" : "";
        auto write = gzip ? writeGzip : writeRaw;
        write((dir + "/train-images-idx3-ubyte").toStdString() + suffix, images);
        write((dir + "/train-labels-idx1-ubyte").toStdString() + suffix, labels);
        return dir.toStdString();
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void readsFashionMnistShapesCountsAndLabels() {
        auto train = IdxDataset::load(kFashion, IdxDataset::Split::Train);
        auto test = IdxDataset::load(kFashion, IdxDataset::Split::Test);
        QCOMPARE(train->size(), int64_t{60000});
        QCOMPARE(test->size(), int64_t{10000});
        QCOMPARE(train->sampleShape(), (std::vector<int64_t>{1, 28, 28}));
        const std::vector<int64_t> first_train = {9, 0, 0, 3, 0, 2, 7, 2, 5, 5};
        const std::vector<int64_t> first_test = {9, 2, 1, 1, 6, 1, 4, 6, 5, 7};
        for (int64_t i = 0; i < 10; ++i) {
            QCOMPARE(train->label(i), first_train[static_cast<size_t>(i)]);
            QCOMPARE(test->label(i), first_test[static_cast<size_t>(i)]);
        }
        QCOMPARE(train->classNames().size(), size_t{10});
        QCOMPARE(train->classNames()[0], std::string("T-shirt/top"));
        QCOMPARE(train->classNames()[9], std::string("Ankle boot"));
        // Normalisation statistics of the training images are the published ones.
        QVERIFY(std::abs(train->mean() - 0.2860) < 5e-5);
        QVERIFY(std::abs(train->std() - 0.3530) < 5e-5);
    }

    void batchHoldsNormalisedPixelsAndLabels() {
        auto train = IdxDataset::load(kFashion, IdxDataset::Split::Train);
        const hearth::Batch b = train->getBatch({0, 3});
        QCOMPARE(b.input().sizes().vec(), (std::vector<int64_t>{2, 1, 28, 28}));
        QCOMPARE(b.input().scalar_type(), torch::kFloat32);
        QCOMPARE(b.label()[0].item<int64_t>(), int64_t{9});
        QCOMPARE(b.label()[1].item<int64_t>(), int64_t{3});
        QCOMPARE(b.indices[1].item<int64_t>(), int64_t{3});
        // Image 0, row 10, columns 13 and 14 hold 193 and 228 in the file.
        const double expect193 = (193 / 255.0 - train->mean()) / train->std();
        const double expect0 = (0 - train->mean()) / train->std();
        QVERIFY(std::abs(b.input()[0][0][10][13].item<double>() - expect193) < 1e-5);
        QVERIFY(std::abs(b.input()[0][0][10][10].item<double>() - expect0) < 1e-5);
        QVERIFY(torch::allclose(train->get(3).input, b.input()[1]));
    }

    void readsRawAndGzipFilesAlike() {
        auto raw = IdxDataset::load(writeValidPair("raw", false), IdxDataset::Split::Train);
        auto gz = IdxDataset::load(writeValidPair("gz", true), IdxDataset::Split::Train);
        QCOMPARE(raw->size(), int64_t{100});
        QVERIFY(torch::equal(raw->getBatch({0, 57, 99}).input(), gz->getBatch({0, 57, 99}).input()));
        QCOMPARE(gz->label(57), int64_t{7});
    }

    void digitFolderGetsDigitClassNames() {
        QCOMPARE(IdxDataset::classNamesForFolder("/data/mnist")[3], std::string("3"));
        QCOMPARE(IdxDataset::classNamesForFolder("/data/MNIST/")[0], std::string("0"));
        QCOMPARE(IdxDataset::classNamesForFolder("/data/fashion-mnist")[0], std::string("T-shirt/top"));
        auto digits = IdxDataset::load(writeValidPair("my-mnist", false), IdxDataset::Split::Train);
        QCOMPARE(digits->classNames()[9], std::string("9"));
    }

    void badMagicNamesFileAndBothNumbers() {
        writeRaw(path("bad-images"), idxBytes(0x802, {2, 28, 28}, 2 * 784, 256));
        writeRaw(path("ok-labels"), idxBytes(0x801, {2}, 2, 10));
        const QString msg = dataErrorOf([&] { IdxDataset(path("bad-images"), path("ok-labels"), {"a"}); });
        VERIFY_CONTAINS(msg, QString::fromStdString(path("bad-images")));
        VERIFY_CONTAINS(msg, "0x00000802");
        VERIFY_CONTAINS(msg, "0x00000803");
    }

    void truncatedRawFileSaysExpectedAndActualSize() {
        writeRaw(path("short-images"), idxBytes(0x803, {100, 28, 28}, 50 * 784, 256));
        writeRaw(path("labels100"), idxBytes(0x801, {100}, 100, 10));
        const QString msg = dataErrorOf([&] { IdxDataset(path("short-images"), path("labels100"), {"a"}); });
        VERIFY_CONTAINS(msg, QString::fromStdString(path("short-images")) + ": truncated: header promises 100 "
                             "images of 28x28 (78416 bytes) but the file holds 39216 bytes");
    }

    void truncatedGzipFileIsReported() {
        writeGzip(path("full-images.gz"), idxBytes(0x803, {100, 28, 28}, 100 * 784, 251));
        const std::string gz = readAll(path("full-images.gz"));
        writeRaw(path("cut-images.gz"), gz.substr(0, gz.size() / 2));
        const QString msg = dataErrorOf([&] { hearth::readIdxFile(path("cut-images.gz"), 3); });
        VERIFY_CONTAINS(msg, QString::fromStdString(path("cut-images.gz")) + ": truncated: header promises 100 "
                             "images of 28x28 (78416 bytes) but the file holds");
        VERIFY_CONTAINS(msg, "(decompressed)");
        // Cutting only the gzip trailer leaves every byte but still breaks the stream.
        writeRaw(path("no-trailer.gz"), gz.substr(0, gz.size() - 4));
        VERIFY_CONTAINS(dataErrorOf([&] { hearth::readIdxFile(path("no-trailer.gz"), 3); }), "truncated");
    }

    void trailingBytesAreRejected() {
        writeRaw(path("long-labels"), idxBytes(0x801, {10}, 12, 10));
        const QString msg = dataErrorOf([&] { hearth::readIdxFile(path("long-labels"), 1); });
        VERIFY_CONTAINS(msg, "header promises 10 labels (18 bytes) but the file holds 20 bytes");
    }

    // A hostile header cannot make the reader allocate: what it promises is checked against what
    // the file can hold (raw: its size; gzip: the most deflate can inflate to) first.
    void hostileHeadersAreRefusedBeforeAllocating() {
        writeGzip(path("huge.gz"), idxBytes(0x803, {0x80000000u, 65536, 65536}, 0, 1));
        VERIFY_CONTAINS(dataErrorOf([&] { hearth::readIdxFile(path("huge.gz"), 3); }),
                        "implausible header: it promises 2147483648 images of 65536x65536, over 1 TiB");
        writeGzip(path("promise.gz"), idxBytes(0x803, {1000000, 28, 28}, 16, 1));
        VERIFY_CONTAINS(dataErrorOf([&] { hearth::readIdxFile(path("promise.gz"), 3); }),
                        "truncated: header promises 1000000 images of 28x28 (784000016 bytes) but the file holds");
        VERIFY_CONTAINS(dataErrorOf([&] { hearth::readIdxFile(path("promise.gz"), 3); }),
                        "compressed bytes, which cannot inflate to that much");
        writeRaw(path("promise-raw"), idxBytes(0x803, {1000000, 28, 28}, 16, 1));
        VERIFY_CONTAINS(dataErrorOf([&] { hearth::readIdxFile(path("promise-raw"), 3); }),
                        "truncated: header promises 1000000 images of 28x28 (784000016 bytes) but the file holds 32 bytes");
    }

    // A small .gz that inflates far past its header's promise (a gzip bomb) is read only up to
    // the promise plus a bounded count of the rest, never kept.
    void gzipBombStopsPastThePromise() {
        std::string bomb = idxBytes(0x801, {10}, 10, 10);
        bomb += std::string(size_t{80} << 20, '\0');
        writeGzip(path("bomb.gz"), bomb);
        QVERIFY(readAll(path("bomb.gz")).size() < (size_t{1} << 20));
        VERIFY_CONTAINS(dataErrorOf([&] { hearth::readIdxFile(path("bomb.gz"), 1); }),
                        "header promises 10 labels (18 bytes) but the file holds more than 67108882 bytes (decompressed)");
    }

    void imageAndLabelCountsMustAgree() {
        writeRaw(path("images3"), idxBytes(0x803, {3, 28, 28}, 3 * 784, 256));
        writeRaw(path("labels4"), idxBytes(0x801, {4}, 4, 10));
        const QString msg = dataErrorOf([&] { IdxDataset(path("images3"), path("labels4"), {"a", "b", "c", "d"}); });
        VERIFY_CONTAINS(msg, "holds 3 images but");
        VERIFY_CONTAINS(msg, "holds 4 labels");
    }

    void labelOutsideClassesIsRejected() {
        writeRaw(path("images2"), idxBytes(0x803, {2, 28, 28}, 2 * 784, 256));
        std::string labels = idxBytes(0x801, {2}, 0, 10);
        labels += '\x01';
        labels += '\x0c';
        writeRaw(path("labels-bad"), labels);
        const QString msg = dataErrorOf([&] { IdxDataset(path("images2"), path("labels-bad"), {"a", "b"}); });
        VERIFY_CONTAINS(msg, QString::fromStdString(path("labels-bad")));
        VERIFY_CONTAINS(msg, "label 12 of sample 1 is outside 0..1");
    }

    void missingFileAndFolderAreNamed() {
        const QString folder = m_dir.path() + "/only-images";
        QDir().mkpath(folder);
        writeRaw(folder.toStdString() + "/t10k-images-idx3-ubyte", idxBytes(0x803, {1, 28, 28}, 784, 256));
        const QString msg = dataErrorOf([&] { IdxDataset::load(folder.toStdString(), IdxDataset::Split::Test); });
        VERIFY_CONTAINS(msg, folder + "/t10k-labels-idx1-ubyte.gz: no such file");
        const QString nowhere = m_dir.path() + "/does-not-exist";
        VERIFY_CONTAINS(dataErrorOf([&] { IdxDataset::load(nowhere.toStdString(), IdxDataset::Split::Train); }),
                        nowhere + ": IDX data folder does not exist");
        const std::string file = folder.toStdString() + "/t10k-images-idx3-ubyte";
        VERIFY_CONTAINS(dataErrorOf([&] { IdxDataset::load(file, IdxDataset::Split::Test); }),
                        QString::fromStdString(file) + ": is a file; IDX data is the folder");
    }
};

QTEST_APPLESS_MAIN(TestIdxDataset)
#include "test_idx_dataset.moc"
