// hearth-cli on text as a newcomer drives it: a small transformer on WordNet's glosses trains
// and is stored, `predict` classifies a CSV with that run, and every bad text input (a vocab that
// is not one, a checkpoint folder without config.json, a safetensors file whose header lies, a
// CSV without the text column, labels that differ between splits, an empty text) exits 3 with a
// message naming the file and the problem, leaving the runs already stored untouched.
#include "CliTestSupport.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

using hearth::test::CliResult;

const QString kVocab = QStringLiteral(HEARTH_FIXTURES_DIR "/tokenizer/vocab.txt");
const QString kBert = QStringLiteral(HEARTH_FIXTURES_DIR "/transformer/bert");

}  // namespace

class TestCliText : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

    CliResult cli(const QStringList& args) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("HEARTH_CACHE_DIR", m_dir.filePath("cache"));
        return hearth::test::runCli(QStringList{"--db", m_dir.filePath("runs.sqlite")} + args, 240000, env);
    }

    QString writeFile(const QString& name, const QByteArray& content) {
        return hearth::test::writeFileIn(QDir(m_dir.path()), name, content);
    }

    // A from-scratch distilbert on a CSV of reviews, one epoch.
    QStringList textRun(const QString& csv, const QStringList& extra = {}) {
        QStringList args = {"run", "--set", "data.kind=text_csv", "--set", "data.path=" + csv,
                            "--set", "data.tokenizer=" + kVocab, "--set", "data.max_length=16",
                            "--set", "model.name=distilbert", "--set", "model.hidden_size=16",
                            "--set", "model.num_layers=1", "--set", "model.num_heads=2",
                            "--set", "model.intermediate_size=32", "--set", "trainer.max_epochs=1",
                            "--set", "trainer.batch_size=8", "--set", "trainer.num_workers=0"};
        return args + extra;
    }

    static QByteArray reviews(int n) {
        QByteArray csv = "text,label\n";
        for (int i = 0; i < n; ++i)
            csv += (i % 2 ? QByteArray("\"dull, slow<br />and long\",neg\n") : QByteArray("a great film,pos\n"));
        return csv;
    }

    int storedRuns() {
        const CliResult r = cli({"runs"});
        return static_cast<int>(r.out.count(QStringLiteral("completed")));
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void wordNetTransformerTrainsAndPredicts() {
        if (!QFile::exists("/usr/share/wordnet/data.noun")) QSKIP("no WordNet (scripts/install-deps installs wordnet-base)");
        const CliResult r = cli({"run", "--set", "name=wordnet-tiny", "--set", "data.kind=wordnet",
                                 "--set", "data.path=/usr/share/wordnet/data.noun", "--set", "data.limit=400",
                                 "--set", "data.tokenizer=" + kVocab, "--set", "data.max_length=32",
                                 "--set", "data.bucket_by_length=true", "--set", "model.name=distilbert",
                                 "--set", "model.hidden_size=32", "--set", "model.num_layers=1",
                                 "--set", "model.num_heads=2", "--set", "model.intermediate_size=64",
                                 "--set", "model.gradient_checkpointing=true", "--set", "trainer.max_epochs=1",
                                 "--set", "trainer.batch_size=16", "--set", "trainer.num_workers=1"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("noun.animal") && r.out.contains("weighted avg"), qPrintable(r.out));
        QVERIFY2(r.out.contains("tokenized 490 texts of data.noun"), qPrintable(r.out));   // 400 + 41 + 49
        QVERIFY2(r.out.contains("new distilbert: 1 layers"), qPrintable(r.out));

        const QString input = writeFile("glosses.csv", "text,other\na domesticated carnivorous mammal,x\n"
                                                       "\"an implement used to dig, with a blade\",y\n"
                                                       "a feeling of great happiness,z\n");
        const QString output = m_dir.filePath("predicted.csv");
        const CliResult p = cli({"predict", "--run", "wordnet-tiny", "--input", input, "--output", output});
        QVERIFY2(p.exit_code == 0, qPrintable(p.out));
        QVERIFY2(p.out.contains("Predicted 3 texts"), qPrintable(p.out));
        QFile f(output);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(f.readAll()).trimmed().split('\n');
        QCOMPARE(lines.size(), 4);
        QVERIFY2(lines[0].startsWith("index,predicted,confidence,prob:noun.Tops,prob:noun.act"), qPrintable(lines[0]));
        for (int i = 1; i < 4; ++i) {
            const QStringList cells = lines[i].split(',');
            QCOMPARE(cells.size(), 3 + 26);
            QCOMPARE(cells[0].toInt(), i - 1);
            double sum = 0, best = 0;
            for (int c = 3; c < cells.size(); ++c) {
                sum += cells[c].toDouble();
                best = std::max(best, cells[c].toDouble());
            }
            QVERIFY(std::abs(sum - 1.0) < 1e-4);
            QVERIFY(std::abs(best - cells[2].toDouble()) < 1e-6);   // confidence is the top probability
        }
        // Where the input has the run's label column, the texts are scored; a label the run never
        // saw is named and left out.
        const QString labelled = writeFile("labelled.csv", "text,label\na domesticated carnivorous mammal,noun.animal\n"
                                                           "a tool for digging,noun.artifact\n"
                                                           "a feeling of great happiness,noun.feeling\n"
                                                           "a horse with a horn,noun.unicorn\n");
        const CliResult scored = cli({"predict", "--run", "wordnet-tiny", "--input", labelled, "--output", output});
        QVERIFY2(scored.exit_code == 0 && scored.out.contains("accuracy on the 3 texts with a label: ") &&
                     scored.out.contains("labels that are not one of the model's classes were not scored: [noun.unicorn]"),
                 qPrintable(scored.out));
        QFile scored_csv(output);
        QVERIFY(scored_csv.open(QIODevice::ReadOnly));
        QVERIFY(scored_csv.readLine().startsWith("index,predicted,confidence,true,prob:noun.Tops"));
        QVERIFY(scored_csv.readLine().contains(",noun.animal,"));
        // A text column that is not there is named.
        const CliResult bad = cli({"predict", "--run", "wordnet-tiny", "--input", input, "--output", output,
                                   "--text-column", "gloss"});
        QCOMPARE(bad.exit_code, 3);
        QVERIFY2(bad.out.contains("no text column 'gloss'") && bad.out.contains("[text, other]"), qPrintable(bad.out));
    }

    void badTextInputExits3AndKeepsTheStore() {
        const QString good = writeFile("good.csv", reviews(40));
        QVERIFY2(cli(textRun(good)).exit_code == 0, "a small text_csv run trains");
        const int before = storedRuns();
        QVERIFY(before >= 1);

        struct Case {
            const char* what;
            QStringList args;
            QStringList expect;
        };
        const QString not_vocab = writeFile("notvocab.txt", QByteArray("\x00\x01\x02\x03 binary", 12));
        QDir().mkpath(m_dir.filePath("noconfig"));
        QFile::copy(kBert + "/model.safetensors", m_dir.filePath("noconfig/model.safetensors"));
        // A header that claims 2^40 bytes of JSON.
        QByteArray lying("\x00\x00\x00\x00\x00\x01\x00\x00{}", 10);
        const QString liar = writeFile("liar/model.safetensors", lying);
        QFile::copy(kBert + "/config.json", m_dir.filePath("liar/config.json"));
        const QString no_text = writeFile("notext.csv", "review,label\ngood,pos\nbad,neg\n");
        const QString val = writeFile("val.csv", "text,label\nfine,pos\nodd,neutral\n");
        const QString empty = writeFile("empty.csv", "text,label\ngood,pos\n\"\",neg\nbad,neg\n");
        const QList<Case> cases = {
            {"vocab", textRun(good, {"--set", "data.tokenizer=" + not_vocab}), {"notvocab.txt"}},
            {"no config", textRun(good, {"--set", "model.pretrained=" + m_dir.filePath("noconfig"),
                                         "--set", "model.name=bert"}),
             {"noconfig", "no config.json"}},
            {"lying header", textRun(good, {"--set", "model.pretrained=" + m_dir.filePath("liar"),
                                            "--set", "model.name=bert"}),
             {"liar/model.safetensors"}},
            {"no text column", textRun(no_text), {"notext.csv", "no text column 'text'", "[review, label]"}},
            {"labels differ", textRun(good, {"--set", "data.val_path=" + val}), {"val.csv:3", "label 'neutral'"}},
            {"empty text", textRun(empty), {"empty.csv:3", "the text is empty"}},
        };
        for (const auto& c : cases) {
            const CliResult r = cli(c.args);
            QVERIFY2(r.exit_code == 3, qPrintable(QString(c.what) + ": exit " + QString::number(r.exit_code) + "\n" + r.out));
            for (const auto& part : c.expect)
                QVERIFY2(r.out.contains(part), qPrintable(QString(c.what) + ": no '" + part + "' in\n" + r.out));
        }
        QCOMPARE(storedRuns(), before);   // failed runs are stored as failed; nothing completed is lost
        // A checkpoint folder without a trained head cannot predict.
        const CliResult p = cli({"predict", "--model", kBert + "/../distilbert", "--input", good, "--output",
                                 m_dir.filePath("p.csv"), "--tokenizer", kVocab});
        QCOMPARE(p.exit_code, 2);
        QVERIFY2(p.out.contains("--tokenizer") && p.out.contains("30522") && p.out.contains("1000"), qPrintable(p.out));
        // With a tokenizer of its size it predicts, and --label-column scores it against its
        // config's id2label names (a folder model has no label column of its own).
        QFile full(kVocab);
        QVERIFY(full.open(QIODevice::ReadOnly));
        QByteArray vocab;
        for (int i = 0; i < 1000; ++i) vocab += full.readLine();
        const QString small = writeFile("vocab1000.txt", vocab);
        const QString labelled = writeFile("folder.csv", "text,truth\na good film,LABEL_0\nbad,LABEL_1\nodd,LABEL_9\n");
        const CliResult f = cli({"predict", "--model", kBert + "/../distilbert", "--tokenizer", small, "--input", labelled,
                                 "--output", m_dir.filePath("p.csv"), "--label-column", "truth"});
        QVERIFY2(f.exit_code == 0 && f.out.contains("Predicted 3 texts") && f.out.contains("accuracy on the 2 texts with a label") &&
                     f.out.contains("not one of the model's classes were not scored: [LABEL_9]"),
                 qPrintable(f.out));
    }

    void twoProcessesWithCheckpointingFollowOneProcess() {
#ifndef HEARTH_WITH_C10D
        QSKIP("this build has no distributed engine (c10d)");
#else
        // One process on batch 16 and two (ddp, 8 each; then zero2 and zero3 with activation checkpointing)
        // see the same global batches: the validation losses must agree epoch by epoch.
        const QString csv = writeFile("ddp.csv", reviews(60));
        // 42 training rows: an even split, so no rank pads its shard with a repeated sample.
        const QStringList common = {"--set", "model.dropout=0", "--set", "trainer.max_epochs=3",
                                    "--set", "data.val_fraction=0.2", "--set", "data.test_fraction=0.1",
                                    "--set", "optimizer.lr=0.01", "--set", "model.num_layers=2",
                                    // CPU ranks (Gloo) on any machine: on a one-GPU machine auto would
                                    // put both ranks on its GPU, which NCCL refuses.
                                    "--set", "trainer.accelerator=cpu"};
        auto valLosses = [&](const QStringList& extra) {
            const CliResult r = cli(textRun(csv, common + extra));
            QRegularExpression re(QStringLiteral("val loss ([0-9.]+)"));
            QStringList losses;
            for (auto it = re.globalMatch(r.out); it.hasNext();) losses << it.next().captured(1);
            return std::make_pair(r, losses);
        };
        const auto one = valLosses({"--set", "trainer.batch_size=16"});
        QVERIFY2(one.first.exit_code == 0, qPrintable(one.first.out));
        QCOMPARE(one.second.size(), 3);
        QVERIFY2(one.second.front() != one.second.back(), "the model did not train");
        const auto ddp = valLosses({"--set", "trainer.devices=2", "--set", "trainer.strategy=ddp"});
        QVERIFY2(ddp.first.exit_code == 0, qPrintable(ddp.first.out));
        QCOMPARE(ddp.second, one.second);
        const auto zero2 = valLosses({"--set", "trainer.devices=2", "--set", "trainer.strategy=zero2",
                                      "--set", "model.gradient_checkpointing=true"});
        QVERIFY2(zero2.first.exit_code == 0, qPrintable(zero2.first.out));
        QCOMPARE(zero2.second, one.second);
        // zero3: each encoder layer gathered for its forward, again for its recomputation in backward.
        const auto zero3 = valLosses({"--set", "trainer.devices=2", "--set", "trainer.strategy=zero3",
                                      "--set", "model.gradient_checkpointing=true"});
        QVERIFY2(zero3.first.exit_code == 0, qPrintable(zero3.first.out));
        QCOMPARE(zero3.second, one.second);
#endif
    }

    // model.name=torchscript on text: a scripted classifier over the tokenizer's vocabulary trains
    // and stores a run; one whose embedding is smaller than the vocabulary is refused before
    // training (exit 2, naming model.path and the vocabulary), and the store keeps its runs.
    void scriptedTextModelTrainsOrIsRefusedBeforeTraining() {
        const QString csv = writeFile("scripted.csv", reviews(40));
        const QString fixtures = QStringLiteral(HEARTH_FIXTURES_DIR "/torchscript/");
        QStringList args = {"run", "--set", "data.kind=text_csv", "--set", "data.path=" + csv, "--set",
                            "data.tokenizer=" + kVocab, "--set", "data.max_length=16", "--set", "model.name=torchscript",
                            "--set", "trainer.max_epochs=2", "--set", "trainer.batch_size=8",
                            "--set", "trainer.num_workers=0", "--set", "name=scripted-text"};
        const CliResult good = cli(args + QStringList{"--set", "model.path=" + fixtures + "text_wordpiece.pt"});
        QVERIFY2(good.exit_code == 0, qPrintable(good.out));
        QVERIFY2(good.out.contains("weighted avg") && good.out.contains("TorchScript"), qPrintable(good.out));
        const int before = storedRuns();
        const CliResult small = cli(args + QStringList{"--set", "model.path=" + fixtures + "text.pt"});
        QCOMPARE(small.exit_code, 2);
        QVERIFY2(small.out.contains("model.path") && small.out.contains("token ids go up to 30521"), qPrintable(small.out));
        QCOMPARE(storedRuns(), before);
    }

    void textLongerThanMaxLengthIsTruncatedAndSaid() {
        QByteArray csv = "text,label\n";
        for (int i = 0; i < 30; ++i)
            csv += QByteArray(i % 2 ? "short,neg\n" : "a very long review that goes on and on and on well past sixteen "
                                                      "tokens of text,pos\n");
        const CliResult r = cli(textRun(writeFile("long.csv", csv)));
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains("long.csv") && r.out.contains("were truncated"), qPrintable(r.out));
    }
};

QTEST_MAIN(TestCliText)
#include "test_cli_text.moc"
