// The built-in text experiment's data: WordNet's noun glosses with their lexicographer class,
// read from Debian's wordnet-base, and clear errors for files that are not WordNet data.
#include "engine/data/DataError.h"
#include "engine/data/WordNetGlosses.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <set>

using namespace hearth;

class TestWordNetGlosses : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readsEveryNounSynsetWithItsClass() {
        if (!QFile::exists(kWordNetNouns)) QSKIP("no WordNet (scripts/install-deps installs wordnet-base)");
        const auto samples = readWordNetGlosses();
        QCOMPARE(samples.texts.size(), size_t(82115));  // WordNet 3.0's noun synsets
        QCOMPARE(samples.labels.size(), samples.texts.size());
        QCOMPARE(samples.class_names.size(), size_t(26));
        // The first synset, "entity", is in noun.Tops; every class has samples.
        QCOMPARE(samples.texts.front(), std::string("that which is perceived or known or inferred to have its own "
                                                    "distinct existence (living or nonliving)"));
        QCOMPARE(samples.class_names[static_cast<size_t>(samples.labels.front())], std::string("noun.Tops"));
        const std::set<int64_t> used(samples.labels.begin(), samples.labels.end());
        QCOMPARE(used.size(), size_t(26));
        // "dog" (02084071): a member of the genus Canis ... in noun.animal.
        bool dog = false;
        for (size_t i = 0; i < samples.texts.size(); ++i) {
            if (samples.texts[i].rfind("a member of the genus Canis", 0) == 0) {
                QCOMPARE(samples.class_names[static_cast<size_t>(samples.labels[i])], std::string("noun.animal"));
                dog = true;
            }
        }
        QVERIFY(dog);
    }

    void badFilesNameTheLine_data() {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("problem");
        const QByteArray header = "  1 This software and database is being provided\n";
        QTest::newRow("a verb line") << header + "00001740 29 v 01 breathe 0 | draw air\n" << "line 2: not a noun synset";
        QTest::newRow("class out of range") << header + "00001740 44 n 01 thing 0 | a gloss\n" << "'44' is not a noun class";
        QTest::newRow("no gloss") << header + "00001740 03 n 01 entity 0 000\n" << "no gloss";
        QTest::newRow("a CSV") << QByteArray("text,label\nhello,1\n") << "line 1: not a noun synset";
        QTest::newRow("only the header") << header << "has no noun synsets";
    }

    void badFilesNameTheLine() {
        QFETCH(QByteArray, content);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const std::string path = dir.filePath("data.noun").toStdString();
        std::ofstream(path) << content.toStdString();
        try {
            readWordNetGlosses(path);
            QFAIL("no error");
        } catch (const DataError& e) {
            const QString message = QString::fromUtf8(e.what());
            QVERIFY2(message.contains(QString::fromStdString(path)) && message.contains(problem), qPrintable(message));
        }
    }

    void missingFileSaysWhichPackage() {
        try {
            readWordNetGlosses("/nonexistent/data.noun");
            QFAIL("no error");
        } catch (const DataError& e) {
            QVERIFY2(QString(e.what()).contains("wordnet-base"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestWordNetGlosses)
#include "test_wordnet_glosses.moc"
