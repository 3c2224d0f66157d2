// loadDataSplits: Fashion-MNIST's 55000/5000/10000 split, seeded determinism, data.limit scaling,
// and CSV fraction splits.
#include "engine/data/DataError.h"
#include "engine/data/DataModule.h"

#include <QtTest>

#include <set>

using hearth::DataConfig;
using hearth::DataSplits;
using hearth::loadDataSplits;

namespace {

std::vector<int64_t> sourceIndices(const hearth::Dataset& d) {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < d.size(); ++i) out.push_back(d.sourceIndex(i));
    return out;
}

DataConfig irisConfig() {
    DataConfig c;
    c.kind = "csv";
    c.path = HEARTH_FIXTURES_DIR "/data/iris.csv";
    c.label_column = "species";
    c.val_fraction = 0.1;
    c.test_fraction = 0.1;
    return c;
}

}  // namespace

class TestDataModule : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fashionMnistSplitsInto55000And5000And10000() {
        const DataSplits s = loadDataSplits(DataConfig{}, 42);
        QCOMPARE(s.train->size(), int64_t{55000});
        QCOMPARE(s.val->size(), int64_t{5000});
        QCOMPARE(s.test->size(), int64_t{10000});
        QCOMPARE(s.description, std::string("Fashion-MNIST (IDX) 55000/5000/10000 samples, 1x28x28, 10 classes"));
        QVERIFY(s.is_image);
        QCOMPARE(s.class_names.size(), size_t{10});
        // Train and val partition the official training file.
        const auto train = sourceIndices(*s.train), val = sourceIndices(*s.val);
        std::set<int64_t> all(train.begin(), train.end());
        all.insert(val.begin(), val.end());
        QCOMPARE(all.size(), size_t{60000});
        QCOMPARE(*all.rbegin(), int64_t{59999});
        QCOMPARE(s.test->sourceIndex(9999), int64_t{9999});

        // Same seed, same split; another seed, another split.
        DataConfig limited;
        limited.limit = 1100;
        const DataSplits a = loadDataSplits(limited, 42), b = loadDataSplits(limited, 42),
                         c = loadDataSplits(limited, 43);
        QCOMPARE(sourceIndices(*a.train), sourceIndices(*b.train));
        QCOMPARE(sourceIndices(*a.val), sourceIndices(*b.val));
        QCOMPARE(sourceIndices(*a.test), sourceIndices(*b.test));
        QVERIFY(sourceIndices(*a.train) != sourceIndices(*c.train));
        // The limit is taken from the seeded split, not from the file's head.
        const auto limited_train = sourceIndices(*a.train);
        std::set<int64_t> full_train(train.begin(), train.end());
        for (int64_t i : limited_train) QVERIFY(full_train.count(i));
        QVERIFY(limited_train.back() > 50000);

        // data.limit: 1100 of 55000 is 2%, so val 100 and test 200.
        QCOMPARE(a.train->size(), int64_t{1100});
        QCOMPARE(a.val->size(), int64_t{100});
        QCOMPARE(a.test->size(), int64_t{200});
        QCOMPARE(a.description, std::string("Fashion-MNIST (IDX) 1100/100/200 samples, 1x28x28, 10 classes"));
        // Test batches are normalised with the training statistics.
        const hearth::Batch tb = a.test->getBatch({0, 1, 2});
        QCOMPARE(tb.input().sizes().vec(), (std::vector<int64_t>{3, 1, 28, 28}));
        QVERIFY(std::abs(tb.input().min().item<double>() - (0 - 0.2860) / 0.3530) < 1e-3);
    }

    void tinyLimitKeepsOneValidationAndTestSample() {
        DataConfig c = irisConfig();
        c.limit = 3;
        const DataSplits s = loadDataSplits(c, 1);
        QCOMPARE(s.train->size(), int64_t{3});
        QCOMPARE(s.val->size(), int64_t{1});
        QCOMPARE(s.test->size(), int64_t{1});
    }

    void csvSplitsByFractionsDeterministically() {
        const DataSplits s = loadDataSplits(irisConfig(), 9);
        QCOMPARE(s.train->size(), int64_t{120});
        QCOMPARE(s.val->size(), int64_t{15});
        QCOMPARE(s.test->size(), int64_t{15});
        QVERIFY(!s.is_image);
        QCOMPARE(s.description, std::string("CSV iris.csv 120/15/15 samples, 4 features, 3 classes"));
        std::set<int64_t> all;
        for (const auto* d : {s.train.get(), s.val.get(), s.test.get()})
            for (int64_t i : sourceIndices(*d)) all.insert(i);
        QCOMPARE(all.size(), size_t{150});
        const DataSplits again = loadDataSplits(irisConfig(), 9);
        QCOMPARE(sourceIndices(*again.test), sourceIndices(*s.test));
        QCOMPARE(s.test->describe(0), again.test->describe(0));
    }

    void badKindAndFractionsAreConfigErrors() {
        DataConfig c;
        c.kind = "parquet";
        try {
            loadDataSplits(c, 1);
            QFAIL("no error for an unknown kind");
        } catch (const hearth::ConfigError& e) {
            QCOMPARE(e.key(), std::string("data.kind"));
        }
        c = irisConfig();
        c.val_fraction = 1.5;
        QVERIFY_THROWS_EXCEPTION(hearth::ConfigError, loadDataSplits(c, 1));
        c = irisConfig();
        c.val_fraction = 0.5;
        c.test_fraction = 0.5;
        QVERIFY_THROWS_EXCEPTION(hearth::DataError, loadDataSplits(c, 1));
        c = irisConfig();
        c.path = "/nonexistent/train.csv";
        QVERIFY_THROWS_EXCEPTION(hearth::DataError, loadDataSplits(c, 1));
    }
};

QTEST_APPLESS_MAIN(TestDataModule)
#include "test_data_module.moc"
