// Loader: seeded epoch order identical for any worker count, rank shards, drop_last, bounded
// prefetch, worker errors, and clean stops mid-epoch; raw uint8 images and data resident on the
// device give exactly the host loader's batches.
#include "engine/config/ExperimentConfig.h"
#include "engine/data/Augment.h"
#include "engine/data/IdxDataset.h"
#include "engine/data/Loader.h"

#include <QtTest>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>

using hearth::Batch;
using hearth::Loader;
using hearth::LoaderOptions;

namespace {

// Sample i has input [i] and label i % 10; counts batches built and can fail or dawdle.
class CountingDataset final : public hearth::Dataset {
public:
    explicit CountingDataset(int64_t n) : n_(n) {}
    int64_t size() const override { return n_; }
    hearth::Sample get(int64_t i) const override {
        return {torch::full({1}, static_cast<float>(i)), i % 10};
    }
    Batch getBatch(const std::vector<int64_t>& indices) const override {
        started.fetch_add(1);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            thread_ids.insert(std::this_thread::get_id());
        }
        for (int64_t i : indices)
            if (i == fail_at) throw std::runtime_error("sample " + std::to_string(i) + " is unreadable");
        if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        return Dataset::getBatch(indices);
    }
    std::vector<int64_t> sampleShape() const override { return {1}; }
    const std::vector<std::string>& classNames() const override { return names_; }

    mutable std::atomic<int64_t> started{0};
    mutable std::set<std::thread::id> thread_ids;
    int64_t fail_at = -1;
    int delay_ms = 0;

private:
    int64_t n_;
    std::vector<std::string> names_{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
    mutable std::mutex mutex_;
};

std::vector<int64_t> epochOrder(Loader& loader, int64_t epoch, int64_t first_batch = 0) {
    std::vector<int64_t> order;
    loader.startEpoch(epoch, first_batch);
    while (auto batch = loader.next()) {
        const auto n = batch->indices.size(0);
        for (int64_t i = 0; i < n; ++i) {
            const int64_t index = batch->indices[i].item<int64_t>();
            // Inputs and labels travel with their index.
            if (batch->input()[i][0].item<float>() != static_cast<float>(index) ||
                batch->label()[i].item<int64_t>() != index % 10)
                throw std::logic_error("batch content does not match its indices");
            order.push_back(index);
        }
    }
    return order;
}

// Sample i: a 1x6x6 image with pixel (y, x) = 1000 + 100 i + 6 y + x, and one black pixel (0).
class ImageDataset final : public hearth::Dataset {
public:
    explicit ImageDataset(int64_t n) : n_(n) {}
    int64_t size() const override { return n_; }
    hearth::Sample get(int64_t i) const override { return {image(i), i % 10}; }
    std::vector<int64_t> sampleShape() const override { return {1, 6, 6}; }
    const std::vector<std::string>& classNames() const override { return names_; }
    static torch::Tensor image(int64_t i) {
        auto t = torch::arange(36, torch::kFloat32).view({1, 6, 6}) + 1000.0f + 100.0f * static_cast<float>(i);
        t[0][5][5] = 0.0f;
        return t;
    }

private:
    int64_t n_;
    std::vector<std::string> names_{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
};

// Every sample's image of one epoch, by index.
std::map<int64_t, torch::Tensor> imagesOfEpoch(Loader& loader, int64_t epoch) {
    std::map<int64_t, torch::Tensor> images;
    loader.startEpoch(epoch);
    while (auto batch = loader.next())
        for (int64_t i = 0; i < batch->indices.size(0); ++i)
            images[batch->indices[i].item<int64_t>()] = batch->input()[i].clone();
    return images;
}

// The first `n` Fashion-MNIST training images (Debian's dataset-fashion-mnist).
std::shared_ptr<const hearth::Dataset> fashionImages(int64_t n) {
    if (!std::filesystem::exists(hearth::kDefaultFashionMnistPath))
        throw std::runtime_error("Fashion-MNIST is missing: install Debian's dataset-fashion-mnist (scripts/install-deps)");
    std::vector<int64_t> first(static_cast<size_t>(n));
    std::iota(first.begin(), first.end(), int64_t{0});
    return std::make_shared<hearth::Subset>(
        hearth::IdxDataset::load(hearth::kDefaultFashionMnistPath, hearth::IdxDataset::Split::Train), first);
}

// Every batch of `epochs` epochs (each resumed at `first_batch`), normalised where the loader left
// them raw.
std::vector<Batch> batchesOf(Loader& loader, int64_t epochs, int64_t first_batch = 0) {
    std::vector<Batch> out;
    for (int64_t e = 0; e < epochs; ++e) {
        loader.startEpoch(e, first_batch);
        while (auto batch = loader.next()) out.push_back(hearth::normalized(std::move(*batch)));
    }
    return out;
}

// Same samples, same order, same bits.
void compareBatches(const std::vector<Batch>& got, const std::vector<Batch>& want) {
    QCOMPARE(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
        QVERIFY2(torch::equal(got[k].indices, want[k].indices), qPrintable(QString("batch %1: other samples").arg(k)));
        QCOMPARE(got[k].input().scalar_type(), want[k].input().scalar_type());
        QVERIFY2(torch::equal(got[k].input(), want[k].input()), qPrintable(QString("batch %1: other pixels").arg(k)));
        QVERIFY(torch::equal(got[k].label(), want[k].label()));
    }
}

LoaderOptions options(int64_t batch_size, int64_t workers, uint64_t seed = 5) {
    LoaderOptions o;
    o.batch_size = batch_size;
    o.num_workers = workers;
    o.seed = seed;
    return o;
}

}  // namespace

class TestLoader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everySampleOncePerEpochInTheSameOrderForAnyWorkerCount() {
        auto data = std::make_shared<CountingDataset>(103);
        Loader serial(data, options(10, 0));
        Loader threaded(data, options(10, 2));
        const std::vector<int64_t> a = epochOrder(serial, 0);
        const std::vector<int64_t> b = epochOrder(threaded, 0);
        QCOMPARE(a, b);
        QCOMPARE(a.size(), size_t{103});
        QCOMPARE(std::set<int64_t>(a.begin(), a.end()).size(), size_t{103});
        QCOMPARE(serial.batchesPerEpoch(), int64_t{11});
        std::vector<int64_t> sorted = a;
        std::sort(sorted.begin(), sorted.end());
        QVERIFY(sorted != a);   // shuffled
        QCOMPARE(epochOrder(serial, 1), epochOrder(threaded, 1));
    }

    // A resumed epoch (startEpoch(e, k)) delivers exactly the batches the whole epoch would have
    // delivered after its k-th, for any worker count, and builds none of the skipped ones.
    void resumedEpochDeliversTheRestOfItsPlan() {
        auto data = std::make_shared<CountingDataset>(103);
        for (const int64_t workers : {0, 2}) {
            Loader whole(data, options(10, workers));
            Loader resumed(data, options(10, workers));
            const std::vector<int64_t> all = epochOrder(whole, 3);
            const int64_t before = data->started.load();
            const std::vector<int64_t> rest = epochOrder(resumed, 3, 4);
            QCOMPARE(rest, std::vector<int64_t>(all.begin() + 40, all.end()));
            QCOMPARE(data->started.load() - before, int64_t{7});   // batches 5..11 only
            QVERIFY(epochOrder(resumed, 3, 11).empty());          // past the end: nothing left
            QCOMPARE(epochOrder(resumed, 4), epochOrder(whole, 4));   // the next epoch starts whole
        }
    }

    void nextEpochAndOtherSeedShuffleDifferently() {
        auto data = std::make_shared<CountingDataset>(64);
        Loader loader(data, options(8, 0, 5));
        Loader other_seed(data, options(8, 0, 6));
        const auto e0 = epochOrder(loader, 0);
        const auto e1 = epochOrder(loader, 1);
        QVERIFY(e0 != e1);
        QCOMPARE(epochOrder(loader, 0), e0);   // the same epoch replays the same order
        QVERIFY(epochOrder(other_seed, 0) != e0);
        // The order is fixed across standard libraries (own Fisher-Yates over mt19937_64).
        QCOMPARE(epochOrder(loader, 0), e0);
    }

    void noShuffleKeepsDatasetOrder() {
        auto o = options(4, 0);
        o.shuffle = false;
        Loader loader(std::make_shared<CountingDataset>(10), o);
        QCOMPARE(epochOrder(loader, 3), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
    }

    void dropLastDropsTheShortBatch() {
        auto o = options(10, 2);
        o.drop_last = true;
        Loader loader(std::make_shared<CountingDataset>(25), o);
        QCOMPARE(loader.batchesPerEpoch(), int64_t{2});
        QCOMPARE(epochOrder(loader, 0).size(), size_t{20});
    }

    void rankShardsAreDisjointEqualAndCoverTheEpoch() {
        auto data = std::make_shared<CountingDataset>(96);
        std::vector<int64_t> all;
        for (int64_t rank = 0; rank < 4; ++rank) {
            auto o = options(7, rank % 2 ? 2 : 0);
            o.rank = rank;
            o.world_size = 4;
            Loader loader(data, o);
            QCOMPARE(loader.samplesPerEpoch(), int64_t{24});
            const auto shard = epochOrder(loader, 2);
            QCOMPARE(shard.size(), size_t{24});
            all.insert(all.end(), shard.begin(), shard.end());
        }
        QCOMPARE(std::set<int64_t>(all.begin(), all.end()).size(), size_t{96});   // disjoint + covering
    }

    void unevenShardsArePaddedLikeDistributedSampler() {
        auto data = std::make_shared<CountingDataset>(10);
        std::vector<int64_t> all;
        for (int64_t rank = 0; rank < 3; ++rank) {
            auto o = options(2, 0);
            o.rank = rank;
            o.world_size = 3;
            Loader loader(data, o);
            const auto shard = epochOrder(loader, 0);
            QCOMPARE(shard.size(), size_t{4});   // ceil(10 / 3)
            all.insert(all.end(), shard.begin(), shard.end());
        }
        QCOMPARE(all.size(), size_t{12});
        QCOMPARE(std::set<int64_t>(all.begin(), all.end()).size(), size_t{10});   // 2 padded repeats
    }

    void workerErrorIsRethrownFromNextInOrder() {
        for (int64_t workers : {int64_t{0}, int64_t{2}}) {
            auto data = std::make_shared<CountingDataset>(40);
            auto o = options(5, workers);
            o.shuffle = false;
            data->fail_at = 17;   // in the fourth batch
            Loader loader(data, o);
            loader.startEpoch(0);
            for (int i = 0; i < 3; ++i) QVERIFY(loader.next().has_value());
            QVERIFY_THROWS_EXCEPTION(std::runtime_error, loader.next());
            QVERIFY(!loader.next().has_value());   // the failed epoch is over
            data->fail_at = -1;
            QCOMPARE(epochOrder(loader, 1).size(), size_t{40});   // and the loader is usable again
        }
    }

    void prefetchStaysWithinWorkersTimesFactor() {
        auto data = std::make_shared<CountingDataset>(200);
        auto o = options(2, 2);
        o.prefetch_factor = 3;   // at most 6 batches ahead
        Loader loader(data, o);
        loader.startEpoch(0);
        int64_t delivered = 0;
        for (int step = 0; step < 5; ++step) {
            // Give the workers time to run ahead as far as they may.
            QTRY_COMPARE_WITH_TIMEOUT(data->started.load(), delivered + 6, 5000);
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
            QCOMPARE(data->started.load(), delivered + 6);
            QVERIFY(loader.next().has_value());
            ++delivered;
        }
    }

    void startEpochMidEpochAndDestructionDoNotHang() {
        auto data = std::make_shared<CountingDataset>(500);
        data->delay_ms = 2;
        {
            auto o = options(4, 2);
            Loader loader(data, o);
            loader.startEpoch(0);
            QVERIFY(loader.next().has_value());
            loader.startEpoch(1);   // abandons epoch 0
            const auto order = epochOrder(loader, 2);
            QCOMPARE(order.size(), size_t{500});
            loader.startEpoch(3);
            QVERIFY(loader.next().has_value());
        }   // destroyed mid-epoch: joins its workers
        auto o = options(4, 2);
        o.persistent_workers = true;
        Loader persistent(data, o);
        persistent.startEpoch(0);
        persistent.next();
        // next() before startEpoch is a programming error, not a hang.
        Loader fresh(data, options(4, 1));
        QVERIFY_THROWS_EXCEPTION(std::logic_error, fresh.next());
    }

    void persistentWorkersServeEveryEpoch() {
        auto data = std::make_shared<CountingDataset>(60);
        auto o = options(6, 2);
        o.persistent_workers = true;
        Loader loader(data, o);
        QCOMPARE(epochOrder(loader, 0).size(), size_t{60});
        const auto first_threads = data->thread_ids;
        QCOMPARE(first_threads.size() <= size_t{2}, true);
        QCOMPARE(epochOrder(loader, 1).size(), size_t{60});
        // No new threads for epoch 1: still at most the 2 workers. (Not "the same ids as epoch 0":
        // on a loaded machine one worker may build all of epoch 0 and the other join in epoch 1.)
        for (const auto& id : first_threads) QVERIFY(data->thread_ids.count(id));
        QVERIFY2(data->thread_ids.size() <= size_t{2}, "epoch 1 was built by new threads");
        QVERIFY(!data->thread_ids.count(std::this_thread::get_id()));
    }

    void noWorkersBuildOnTheCallersThreadAndMeasureWaiting() {
        auto data = std::make_shared<CountingDataset>(20);
        data->delay_ms = 15;
        Loader loader(data, options(5, 0));
        loader.startEpoch(0);
        QVERIFY(loader.next().has_value());
        QVERIFY(loader.lastWaitMs() >= 14.0);
        QCOMPARE(data->thread_ids, (std::set<std::thread::id>{std::this_thread::get_id()}));
        QVERIFY(!loader.pinsMemory());   // CPU device: pin_memory is not in effect
    }

    void invalidOptionsAreRejected() {
        auto data = std::make_shared<CountingDataset>(5);
        auto o = options(0, 0);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Loader(data, o));
        o = options(2, 0);
        o.rank = 2;
        o.world_size = 2;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Loader(data, o));
    }

    // Augmentation is per sample and seeded: the same images for any worker count and batch
    // size, other images in the next epoch.
    void augmentationIsPerSampleAndTheSameForAnyWorkers() {
        auto data = std::make_shared<ImageDataset>(40);
        auto augment = std::make_shared<hearth::ImageAugment>(2, true);
        LoaderOptions serial = options(4, 0);
        serial.augment = augment;
        LoaderOptions threaded = options(5, 3);
        threaded.augment = augment;
        Loader a(data, serial), b(data, threaded);
        const auto first = imagesOfEpoch(a, 0);
        const auto same = imagesOfEpoch(b, 0);
        QCOMPARE(first.size(), size_t{40});
        int changed = 0;
        for (const auto& [index, image] : first) {
            QVERIFY2(torch::equal(image, same.at(index)), qPrintable(QString("sample %1 differs").arg(index)));
            changed += !torch::equal(image, ImageDataset::image(index));
        }
        QVERIFY(changed > 20);   // most samples are moved or mirrored
        const auto next = imagesOfEpoch(a, 1);
        int differs = 0;
        for (const auto& [index, image] : first) differs += !torch::equal(image, next.at(index));
        QVERIFY(differs > 20);
        Loader plain(data, options(4, 0));
        const auto untouched = imagesOfEpoch(plain, 0);
        for (const auto& [index, image] : untouched) QVERIFY(torch::equal(image, ImageDataset::image(index)));
    }

    // A crop is a window of the image padded with its darkest value; a flip mirrors it.
    void cropIsAShiftedWindowAndFlipAMirror() {
        const int64_t n = 64, p = 1;
        std::vector<int64_t> ids(n);
        std::iota(ids.begin(), ids.end(), 0);
        std::vector<torch::Tensor> originals;
        for (int64_t i = 0; i < n; ++i) originals.push_back(ImageDataset::image(i));
        Batch crop(torch::stack(originals), torch::zeros({n}, torch::kInt64), torch::tensor(ids));
        hearth::ImageAugment(p, false).apply(crop, 9, 0);
        std::set<std::pair<int64_t, int64_t>> offsets;
        for (int64_t i = 0; i < n; ++i) {
            const auto padded = torch::constant_pad_nd(originals[i], {p, p, p, p}, 0.0);   // its darkest value is 0
            bool found = false;
            for (int64_t dy = 0; dy <= 2 * p && !found; ++dy)
                for (int64_t dx = 0; dx <= 2 * p && !found; ++dx)
                    if (torch::equal(crop.input()[i], padded.narrow(1, dy, 6).narrow(2, dx, 6))) {
                        offsets.insert({dy, dx});
                        found = true;
                    }
            QVERIFY2(found, qPrintable(QString("sample %1 is not a window of its padded image").arg(i)));
        }
        QCOMPARE(offsets.size(), size_t{9});   // every offset of a 3x3 range occurs in 64 samples
        Batch flip(torch::stack(originals), torch::zeros({n}, torch::kInt64), torch::tensor(ids));
        hearth::ImageAugment(0, true).apply(flip, 9, 0);
        int mirrored = 0;
        for (int64_t i = 0; i < n; ++i) {
            const bool same = torch::equal(flip.input()[i], originals[i]);
            QVERIFY(same || torch::equal(flip.input()[i], originals[i].flip({2})));
            mirrored += !same;
        }
        QVERIFY(mirrored > 16 && mirrored < 48);   // about half
    }
    // Raw batches are uint8 with their normalisation pending; normalised, they are exactly the
    // dataset's own batches (augmentation included: the crop pads with the raw image's black).
    void rawImagesNormalisedOnArrivalAreTheHostBatches() {
        const auto data = fashionImages(300);
        auto augment = std::make_shared<hearth::ImageAugment>(4, true);
        LoaderOptions host = options(64, 2, 11);
        host.augment = augment;
        LoaderOptions raw = host;
        raw.raw_inputs = true;
        raw.num_workers = 0;
        Loader a(data, host), b(data, raw);
        b.startEpoch(0);
        const auto first = b.next();
        QVERIFY(first.has_value());
        QCOMPARE(first->input().scalar_type(), torch::kUInt8);
        QVERIFY(first->raw_input.has_value());
        compareBatches(batchesOf(b, 2), batchesOf(a, 2));
        const Batch direct = data->getBatch({3, 1, 4});
        QCOMPARE(direct.input().scalar_type(), torch::kFloat32);
        QVERIFY(torch::equal(hearth::normalized(data->getRawBatch({3, 1, 4})).input(), direct.input()));
    }

    // data.on_device: the whole set held where the model trains, batches cut there by index;
    // the same samples, order and pixels as the host loader for the same seed, through epochs,
    // a resumed epoch, rank shards, drop_last and augmentation.
    void residentDataGivesTheHostLoadersBatches() {
        const auto data = fashionImages(300);
        auto augment = std::make_shared<hearth::ImageAugment>(2, true);
        for (const bool with_augment : {false, true}) {
            for (const int64_t world : {int64_t{1}, int64_t{2}}) {
                LoaderOptions host = options(32, 2, 7);
                host.world_size = world;
                host.rank = world - 1;
                host.drop_last = world == 2;
                if (with_augment) host.augment = augment;
                LoaderOptions resident = host;
                resident.resident = true;
                Loader a(data, host), b(data, resident);
                QCOMPARE(b.batchesPerEpoch(), a.batchesPerEpoch());
                QCOMPARE(b.residentBytes(), int64_t{300 * 28 * 28 + 300 * 8});   // uint8 pixels, int64 labels
                QCOMPARE(a.residentBytes(), int64_t{0});
                compareBatches(batchesOf(b, 2), batchesOf(a, 2));
                compareBatches(batchesOf(b, 1, 3), batchesOf(a, 1, 3));
            }
        }
        // Tables are held as they are (float features): nothing to normalise.
        auto counting = std::make_shared<CountingDataset>(50);
        LoaderOptions resident = options(8, 0);
        resident.resident = true;
        Loader table(counting, resident);
        QCOMPARE(epochOrder(table, 1), [&] {
            Loader plain(counting, options(8, 0));
            return epochOrder(plain, 1);
        }());
    }

    // Text is padded per batch: it cannot be held as one tensor.
    void residentDataRefusesSamplesOfVaryingLength() {
        class Texts final : public hearth::Dataset {
        public:
            int64_t size() const override { return 4; }
            hearth::Sample get(int64_t) const override { return {torch::zeros({3}), 0}; }
            std::vector<int64_t> sampleShape() const override { return {3}; }
            const std::vector<std::string>& classNames() const override { return names_; }
            int64_t sampleLength(int64_t) const override { return 3; }

        private:
            std::vector<std::string> names_{"a"};
        };
        LoaderOptions resident = options(2, 0);
        resident.resident = true;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Loader(std::make_shared<Texts>(), resident));
    }
};

QTEST_GUILESS_MAIN(TestLoader)
#include "test_loader.moc"
