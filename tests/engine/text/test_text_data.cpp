// Text data for transformers: IMDB-style CSVs (RFC 4180 multi-line reviews, <br /> line breaks,
// string or integer labels, explicit or carved val/test splits), WordNet glosses, padding per
// batch or to max_length, length bucketing in the loader, the token cache, every bad input
// named with its file and line, and predictions taken longest first landing in their rows.
#include "engine/config/ExperimentConfig.h"
#include "engine/data/DataError.h"
#include "engine/data/DataModule.h"
#include "engine/data/Loader.h"
#include "engine/data/WordNetGlosses.h"
#include "engine/run/PredictionsCsv.h"
#include "engine/text/TextCsv.h"
#include "engine/text/TextDataset.h"
#include "engine/text/TokenizedCorpus.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

using namespace hearth;

namespace {

const std::string kVocab = std::string(HEARTH_FIXTURES_DIR) + "/tokenizer/vocab.txt";

std::string write(const QTemporaryDir& dir, const std::string& name, const std::string& text) {
    const std::string path = dir.path().toStdString() + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

// 40 reviews: a quarter of them multi-line and quoted, labels pos/neg.
std::string reviews(int n = 40, const std::string& prefix = "") {
    std::string csv = "review,sentiment\n";
    for (int i = 0; i < n; ++i) {
        const bool positive = i % 2 == 0;
        std::string text = prefix + (positive ? "a wonderful film" : "a dull and tedious film");
        for (int k = 0; k < i % 7; ++k) text += " truly";
        if (i % 4 == 0) text = "\"" + text + ", \"\"really\"\"<br /><br />second line\n third line\"";
        csv += text + "," + (positive ? "pos" : "neg") + "\n";
    }
    return csv;
}

DataConfig textCsv(const std::string& path) {
    DataConfig d;
    d.kind = "text_csv";
    d.path = path;
    d.text_column = "review";
    d.label_column = "sentiment";
    d.tokenizer = kVocab;
    d.max_length = 16;
    d.val_fraction = 0.2;
    d.test_fraction = 0.2;
    return d;
}

std::string errorOf(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

class TestTextData : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void htmlBreaksBecomeLineBreaks() {
        std::string text = "one<br />two<BR>three<br/>four <b>bold</b> <brr> <br";
        QCOMPARE(replaceHtmlBreaks(text), int64_t{3});
        QCOMPARE(text, std::string("one\ntwo\nthree\nfour <b>bold</b> <brr> <br"));
    }

    void readsMultiLineReviewsWithStringLabels() {
        QTemporaryDir dir;
        const auto texts = readTextCsv(write(dir, "r.csv", reviews()), "review", "sentiment");
        QCOMPARE(texts.texts.size(), size_t(40));
        QCOMPARE(texts.texts[0], std::string("a wonderful film, \"really\"\n\nsecond line\n third line"));
        QCOMPARE(texts.html_breaks, int64_t{20});
        QCOMPARE(texts.labels[1], std::string("neg"));
        QCOMPARE(texts.lines[1], int64_t{4});   // record 0 spans lines 2-4
    }

    void splitsTokeniseAndPadPerBatch() {
        QTemporaryDir dir;
        DataConfig d = textCsv(write(dir, "r.csv", reviews()));
        const DataSplits splits = loadDataSplits(d, 7);
        QCOMPARE(splits.train->size() + splits.val->size() + splits.test->size(), int64_t{40});
        QCOMPARE(splits.val->size(), int64_t{8});
        QCOMPARE(splits.class_names, (std::vector<std::string>{"neg", "pos"}));
        QCOMPARE(splits.text.vocab_size, int64_t{30522});
        QCOMPARE(splits.text.pad_id, int64_t{0});
        QVERIFY(has(splits.description, "2 classes"));
        // The multi-line reviews are longer than 16 tokens: truncated, and said so.
        bool truncation_noted = false;
        for (const auto& n : splits.notes) truncation_noted |= has(n, "were truncated") && has(n, "r.csv");
        QVERIFY(truncation_noted);

        std::vector<int64_t> all(static_cast<size_t>(splits.train->size()));
        std::iota(all.begin(), all.end(), 0);
        const Batch batch = splits.train->getBatch(all);
        const auto& ids = batch.at("input_ids");
        const auto& mask = batch.at("attention_mask");
        QCOMPARE(ids.size(1), int64_t{16});   // the longest sample was cut to max_length
        QCOMPARE(ids.scalar_type(), torch::kInt64);
        QCOMPARE(ids.select(1, 0).eq(101).all().item<bool>(), true);   // [CLS]
        // The mask marks the real tokens; padding is [PAD] = 0.
        QCOMPARE(ids.masked_select(mask == 0).eq(0).all().item<bool>(), true);
        for (int64_t r = 0; r < ids.size(0); ++r) {
            const int64_t n = mask[r].sum().item<int64_t>();
            QCOMPARE(ids[r][n - 1].item<int64_t>(), int64_t{102});   // [SEP] ends every sample
        }
        // A batch of short samples is only as wide as its longest.
        int64_t shortest = 0;
        for (int64_t i = 0; i < splits.train->size(); ++i)
            if (splits.train->sampleLength(i) < splits.train->sampleLength(shortest)) shortest = i;
        QCOMPARE(splits.train->getBatch({shortest}).at("input_ids").size(1), splits.train->sampleLength(shortest));
        // Nothing padded, so no mask (the model attends to every token); padded rows bring one.
        QVERIFY(!splits.train->getBatch({shortest}).has("attention_mask"));
        QVERIFY(batch.has("attention_mask"));

        d.padding = "max_length";
        const DataSplits padded = loadDataSplits(d, 7);
        QCOMPARE(padded.train->getBatch({0}).at("input_ids").size(1), int64_t{16});
        QCOMPARE(padded.train->getBatch({shortest}).has("attention_mask"), splits.train->sampleLength(shortest) < 16);
    }

    void explicitFilesKeepLabelSetAndRowOrder() {
        QTemporaryDir dir;
        DataConfig d = textCsv(write(dir, "train.csv", reviews()));
        d.val_path = write(dir, "val.csv", reviews(6, "val "));
        d.test_path = write(dir, "test.csv", "review,sentiment\nonly positive,pos\nstill positive,pos\n");
        const DataSplits splits = loadDataSplits(d, 3);
        QCOMPARE(splits.train->size(), int64_t{40});
        QCOMPARE(splits.val->size(), int64_t{6});
        QCOMPARE(splits.test->size(), int64_t{2});
        QCOMPARE(splits.test->describe(1), std::string("still positive"));
        QCOMPARE(splits.test->sourceIndex(1), int64_t{1});
        bool noted = false;
        for (const auto& n : splits.notes) noted |= has(n, "test.csv has no samples of [neg]");
        QVERIFY(noted);
        // A label the training file never had is refused, naming file, line and label.
        d.test_path = write(dir, "test2.csv", "review,sentiment\nfine,pos\nodd one,neutral\n");
        const std::string m = errorOf([&] { loadDataSplits(d, 3); });
        QVERIFY2(has(m, "test2.csv:3") && has(m, "label 'neutral'") && has(m, "[neg, pos]"), m.c_str());
    }

    void integerLabelsSortNumerically() {
        QTemporaryDir dir;
        std::string csv = "text,label\n";
        for (int i = 0; i < 30; ++i) csv += "sample number " + std::to_string(i) + "," + std::to_string(i % 11) + "\n";
        DataConfig d = textCsv(write(dir, "n.csv", csv));
        d.text_column = "text";
        d.label_column = "label";
        const DataSplits splits = loadDataSplits(d, 1);
        QCOMPARE(splits.class_names.size(), size_t(11));
        QCOMPARE(splits.class_names[2], std::string("2"));
        QCOMPARE(splits.class_names[10], std::string("10"));
    }

    void badInputIsNamed() {
        QTemporaryDir dir;
        DataConfig d = textCsv(write(dir, "nocol.csv", "body,sentiment\nhello,pos\n"));
        std::string m = errorOf([&] { loadDataSplits(d, 1); });
        QVERIFY2(has(m, "nocol.csv") && has(m, "no text column 'review'") && has(m, "[body, sentiment]"), m.c_str());
        d = textCsv(write(dir, "empty.csv", "review,sentiment\ngood,pos\n  ,neg\n"));
        m = errorOf([&] { loadDataSplits(d, 1); });
        QVERIFY2(has(m, "empty.csv:3") && has(m, "the text is empty"), m.c_str());
        d = textCsv(write(dir, "one.csv", "review,sentiment\ngood,pos\nfine,pos\n"));
        m = errorOf([&] { loadDataSplits(d, 1); });
        QVERIFY2(has(m, "one.csv") && has(m, "at least 2 classes"), m.c_str());
        d = textCsv(write(dir, "ok.csv", reviews()));
        d.tokenizer = write(dir, "vocab.txt", "\x01\x02\x03 binary");
        m = errorOf([&] { loadDataSplits(d, 1); });
        QVERIFY2(has(m, "vocab.txt"), m.c_str());
        d.tokenizer.reset();
        m = errorOf([&] { loadDataSplits(d, 1); });
        QVERIFY2(has(m, "data.tokenizer") && has(m, "needs a tokenizer"), m.c_str());
    }

    void tokenCacheServesSecondRun() {
        QTemporaryDir dir;
        const BertTokenizer tokenizer = BertTokenizer::fromFile(kVocab);
        std::vector<std::string> texts;
        for (int i = 0; i < 1000; ++i) texts.push_back("text number " + std::to_string(i) + " with café and 東京");
        TokenizeOptions o;
        o.max_length = 12;
        o.cache_dir = dir.path().toStdString() + "/cache";
        o.threads = 2;
        const auto first = tokenizeTexts(texts, tokenizer, o);
        QVERIFY(!first.from_cache);
        QVERIFY(QFile::exists(QString::fromStdString(first.cache_path)));
        const auto second = tokenizeTexts(texts, tokenizer, o);
        QVERIFY(second.from_cache);
        QCOMPARE(second.corpus.ids, first.corpus.ids);
        QCOMPARE(second.corpus.offsets, first.corpus.offsets);
        QCOMPARE(second.corpus.truncated, first.corpus.truncated);
        // Ids equal the tokenizer's own, cut as transformers cuts ([CLS] ... [SEP]).
        for (size_t i = 0; i < texts.size(); i += 97) {
            const auto ids = tokenizer.encode(texts[i], 12);
            QCOMPARE(std::vector<int32_t>(first.corpus.sequence(static_cast<int64_t>(i)),
                                          first.corpus.sequence(static_cast<int64_t>(i)) + first.corpus.length(static_cast<int64_t>(i))),
                     ids);
        }
        // Another text, another max_length: another entry.
        texts[500] += " changed";
        QVERIFY(!tokenizeTexts(texts, tokenizer, o).from_cache);
        o.max_length = 13;
        QVERIFY(!tokenizeTexts(texts, tokenizer, o).from_cache);
        // A corrupt entry is rebuilt, not trusted.
        { std::ofstream(first.cache_path, std::ios::binary | std::ios::trunc) << "HEARTHTK garbage"; }
        o.max_length = 12;
        texts[500].resize(texts[500].size() - 8);
        const auto rebuilt = tokenizeTexts(texts, tokenizer, o);
        QVERIFY(!rebuilt.from_cache);
        QCOMPARE(rebuilt.corpus.ids, first.corpus.ids);
    }

    void bucketingGroupsSimilarLengths() {
        QTemporaryDir dir;
        std::string csv = "review,sentiment\n";
        for (int i = 0; i < 200; ++i) {
            std::string text = "word";
            for (int k = 0; k < (i * 37) % 60; ++k) text += " word";
            csv += text + "," + (i % 2 ? "pos" : "neg") + "\n";
        }
        DataConfig d = textCsv(write(dir, "b.csv", csv));
        d.max_length = 64;
        const DataSplits splits = loadDataSplits(d, 5);
        auto padding = [&](bool bucket) {
            LoaderOptions o;
            o.batch_size = 8;
            o.seed = 9;
            o.bucket_by_length = bucket;
            Loader loader(splits.train, o);
            loader.startEpoch(0);
            int64_t pad = 0, samples = 0;
            std::set<int64_t> seen;
            while (auto batch = loader.next()) {
                // No mask: no padding in this batch.
                if (batch->has("attention_mask")) pad += (batch->at("attention_mask") == 0).sum().item<int64_t>();
                samples += batch->size();
                for (int64_t i = 0; i < batch->size(); ++i) seen.insert(batch->indices[i].item<int64_t>());
            }
            return std::make_tuple(pad, samples, seen.size());
        };
        const auto [plain_pad, plain_n, plain_seen] = padding(false);
        const auto [bucket_pad, bucket_n, bucket_seen] = padding(true);
        QCOMPARE(bucket_n, plain_n);                         // every sample once
        QCOMPARE(bucket_seen, static_cast<size_t>(plain_n));
        QVERIFY2(bucket_pad * 4 < plain_pad, qPrintable(QString("padding %1 vs %2").arg(bucket_pad).arg(plain_pad)));
    }

    void wordNetSplitsAreRealText() {
        if (!QFile::exists(kWordNetNouns)) QSKIP("no WordNet (scripts/install-deps installs wordnet-base)");
        DataConfig d;
        d.kind = "wordnet";
        d.path = "/usr/share/wordnet";
        d.tokenizer = kVocab;
        d.max_length = 64;
        d.val_fraction = 0.1;
        d.test_fraction = 0.1;
        d.limit = 2000;
        const DataSplits splits = loadDataSplits(d, 42);
        QCOMPARE(splits.train->size(), int64_t{2000});
        QCOMPARE(splits.class_names.size(), size_t(26));
        QVERIFY(has(splits.description, "WordNet"));
        QVERIFY(!splits.test->describe(0).empty());
    }

    // The text predictor runs its texts longest first (little padding); each text's probabilities
    // land in its own row, in eval mode and without gradients, batch_size at a time.
    void predictionsTakenInAnotherOrderLandInTheirRows() {
        torch::nn::Linear model(1, 3);   // what classProbabilities moves and puts in eval mode
        const int64_t n = 7, classes = 3;
        std::vector<std::vector<int64_t>> batches;
        bool grad_mode = true;
        const torch::Tensor p = classProbabilities(
            *model, torch::kCPU, n, classes, 3, {6, 2, 4, 3, 5, 1, 0}, [&](const std::vector<int64_t>& rows) {
                batches.push_back(rows);
                grad_mode = torch::GradMode::is_enabled();
                auto logits = torch::full({static_cast<int64_t>(rows.size()), classes}, -10.0);
                for (size_t r = 0; r < rows.size(); ++r) logits[static_cast<int64_t>(r)][rows[r] % classes] = 10.0;
                return logits;
            });
        QCOMPARE(batches, (std::vector<std::vector<int64_t>>{{6, 2, 4}, {3, 5, 1}, {0}}));
        QVERIFY(!grad_mode);
        QVERIFY(!model->is_training());
        QCOMPARE(p.sizes().vec(), (std::vector<int64_t>{n, classes}));
        QCOMPARE(p.scalar_type(), torch::kFloat32);
        for (int64_t i = 0; i < n; ++i) {
            QCOMPARE(p[i].argmax().item<int64_t>(), i % classes);
            QVERIFY(std::abs(p[i].sum().item<double>() - 1.0) < 1e-6);
        }
        // No order: the rows as they come.
        batches.clear();
        classProbabilities(*model, torch::kCPU, 4, classes, 3, {}, [&](const std::vector<int64_t>& rows) {
            batches.push_back(rows);
            return torch::zeros({static_cast<int64_t>(rows.size()), classes});
        });
        QCOMPARE(batches, (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3}}));
    }
};

QTEST_APPLESS_MAIN(TestTextData)
#include "test_text_data.moc"
