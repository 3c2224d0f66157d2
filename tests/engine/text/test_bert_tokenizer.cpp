// BertTokenizer against Hugging Face's BertTokenizerFast (tests/fixtures/tokenizer, made by
// make_tokenizer_fixtures.py): identical ids, uncased and cased, on tricky strings (accents,
// CJK, emoji, punctuation, control and zero-width characters, an over-long word, special tokens
// inside the text, truncation) and on 3000 real sentences; tokenizer.json settings; and a clear
// error for each kind of bad tokenizer file.
#include "engine/data/DataError.h"
#include "engine/text/BertTokenizer.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace hearth;

namespace {

const std::string kDir = std::string(HEARTH_FIXTURES_DIR) + "/tokenizer";

std::string write(const QTemporaryDir& dir, const char* name, const std::string& bytes) {
    std::string path = dir.filePath(name).toStdString();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

QString describe(const std::vector<int32_t>& ids) {
    QStringList parts;
    for (const auto i : ids) parts << QString::number(i);
    return parts.join(' ');
}

}  // namespace

class TestBertTokenizer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void idsEqualBertTokenizerFast_data() {
        QTest::addColumn<bool>("lowercase");
        QTest::newRow("uncased") << true;
        QTest::newRow("cased") << false;
    }

    void idsEqualBertTokenizerFast() {
        QFETCH(bool, lowercase);
        BertTokenizerOptions options;
        options.lowercase = lowercase;
        const auto tokenizer = BertTokenizer::fromFile(kDir + "/vocab.txt", options);
        QCOMPARE(tokenizer.vocabSize(), int64_t(30522));
        std::ifstream in(kDir + "/cases.json");
        const auto fixture = nlohmann::json::parse(in);
        int checked = 0, sentences = 0, truncated = 0, mismatches = 0;
        QString first;
        for (const auto& c : fixture["cases"]) {
            const auto expected = c[lowercase ? "uncased" : "cased"].get<std::vector<int32_t>>();
            const auto text = c["text"].get<std::string>();
            const auto got = tokenizer.encode(text, c["max_length"].get<int64_t>());
            ++checked;
            if (c["kind"] == "sentence") ++sentences;
            if (static_cast<int64_t>(expected.size()) == c["max_length"].get<int64_t>()) ++truncated;
            if (got != expected) {
                if (mismatches++ == 0)
                    first = QString("'%1'\n  expected %2\n  got      %3")
                                .arg(QString::fromStdString(text).left(200), describe(expected), describe(got));
            }
        }
        QVERIFY2(mismatches == 0, qPrintable(QString("%1 of %2 differ; first: %3").arg(mismatches).arg(checked).arg(first)));
        QVERIFY(sentences >= 3000);
        QVERIFY(truncated >= 10);  // truncation was exercised
    }

    void piecesAndSpecialIds() {
        const auto t = BertTokenizer::fromFile(kDir + "/vocab.txt");
        QCOMPARE(t.padId(), 0);
        QCOMPARE(t.unkId(), 100);
        QCOMPARE(t.clsId(), 101);
        QCOMPARE(t.sepId(), 102);
        QCOMPARE(t.tokenize("Unaffable café!"),
                 (std::vector<std::string>{"una", "##ffa", "##ble", "cafe", "!"}));
        QCOMPARE(t.tokenize("[CLS]x"), (std::vector<std::string>{"[CLS]", "x"}));
        QCOMPARE(t.encode("a b c d e", 4), (std::vector<int32_t>{101, t.id("a"), t.id("b"), 102}));
    }

    void tokenizerJsonCarriesItsSettings() {
        QTemporaryDir dir;
        nlohmann::json j;
        j["model"] = {{"type", "WordPiece"}, {"unk_token", "[UNK]"},
                      {"vocab", {{"[PAD]", 0}, {"[UNK]", 1}, {"[CLS]", 2}, {"[SEP]", 3}, {"Hello", 4}, {"hello", 5}}}};
        j["normalizer"] = {{"type", "BertNormalizer"}, {"lowercase", false}, {"clean_text", true},
                           {"handle_chinese_chars", true}, {"strip_accents", nullptr}};
        write(dir, "tokenizer.json", j.dump());
        const auto cased = BertTokenizer::fromFile(dir.path().toStdString());  // the folder: tokenizer.json
        QCOMPARE(cased.encode("Hello hello"), (std::vector<int32_t>{2, 4, 5, 3}));
        j["normalizer"]["lowercase"] = true;
        write(dir, "tokenizer.json", j.dump());
        QCOMPARE(BertTokenizer::fromFile(dir.filePath("tokenizer.json").toStdString()).encode("Hello"),
                 (std::vector<int32_t>{2, 5, 3}));
    }

    void badFilesNameTheFileAndTheProblem_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("problem");
        QTest::newRow("binary") << "vocab.txt" << QByteArray("\x89PNG\r\n\x1a\n\xff\xfe", 10) << "not UTF-8";
        QTest::newRow("a CSV") << "vocab.txt" << QByteArray("text,label\ngood,1\n") << "no [UNK] token";
        QTest::newRow("empty") << "vocab.txt" << QByteArray() << "no [UNK] token";
        QTest::newRow("json garbage") << "tokenizer.json" << QByteArray("{\"model\": ") << "not valid JSON";
        QTest::newRow("not wordpiece") << "tokenizer.json" << QByteArray(R"({"model": {"type": "BPE", "vocab": {}}})")
                                       << "not a WordPiece tokenizer";
        QTest::newRow("ids with a gap") << "tokenizer.json"
                                        << QByteArray(R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 5}}})")
                                        << "vocab id of 'a'";
        // Fields of another JSON type (found by fuzz_vocab): named, not a crash.
        QTest::newRow("model type a number") << "tokenizer.json" << QByteArray(R"({"model": {"type": 5, "vocab": {}}})")
                                             << "not a tokenizer.json as transformers writes it";
        QTest::newRow("lowercase a string") << "tokenizer.json"
                                            << QByteArray(R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0}},
                                                             "normalizer": {"type": "BertNormalizer", "lowercase": "yes"}})")
                                            << "not a tokenizer.json as transformers writes it";
        QTest::newRow("a list") << "tokenizer.json" << QByteArray("[1, 2]") << "not a WordPiece tokenizer";
    }

    void badFilesNameTheFileAndTheProblem() {
        QFETCH(QString, name);
        QFETCH(QByteArray, bytes);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const std::string path = write(dir, name.toUtf8().constData(), bytes.toStdString());
        try {
            BertTokenizer::fromFile(path);
            QFAIL("no error");
        } catch (const DataError& e) {
            const QString message = QString::fromUtf8(e.what());
            QVERIFY2(message.contains(QString::fromStdString(path)) && message.contains(problem), qPrintable(message));
        }
    }

    void missingFilesAreNamed() {
        QTemporaryDir dir;
        QVERIFY_THROWS_EXCEPTION(DataError, BertTokenizer::fromFile(dir.path().toStdString()));
        try {
            BertTokenizer::fromFile(dir.filePath("nope.txt").toStdString());
        } catch (const DataError& e) {
            QVERIFY(QString(e.what()).contains("nope.txt") && QString(e.what()).contains("does not exist"));
        }
    }
};

QTEST_GUILESS_MAIN(TestBertTokenizer)
#include "test_bert_tokenizer.moc"
